// Downloads (issue 5 item 6; reference A.6): the catalog `vagrant box add user/box` reads
// at /:username/:name (active versions only) and the provider download URLs, which serve
// uploaded images from the blob store or redirect to a provider's external url.
import { NotFoundError } from '@selfstack/errors';
import type { BlobStore } from '@selfstack/blob';
import { canManage } from '../accounts/access';
import { catalogText, effectiveChecksum } from '../boxes/boxes.presenter';
import type { BoxRef, BoxService, Caller } from '../boxes/boxes.service';
import type { BoxStore } from '../boxes/boxes.store';

export type DownloadTarget =
  | { kind: 'redirect'; url: string; boxId: string }
  | { kind: 'blob'; key: string; size: number; boxId: string; filename: string; sha256: string | null; checksum: string | null; checksumType: string | null };

export interface DownloadService {
  /** The JSON text of the catalog (serialised once per box version and base URL). */
  catalog(caller: Caller, ref: BoxRef): Promise<string>;
  /** `file` is the last path segment, `<provider>.box`. */
  locate(caller: Caller, ref: BoxRef, version: string, file: string): Promise<DownloadTarget>;
  countDownload(boxId: string): Promise<void>;
}

export function createDownloadService(deps: { boxService: BoxService; boxStore: BoxStore; blobs: BlobStore }): DownloadService {
  return {
    async catalog(caller, ref) {
      return catalogText(caller.base, await deps.boxService.locateBox(caller, ref));
    },

    async locate(caller, ref, version, file) {
      if (!file.endsWith('.box') || file.length <= 4) throw new NotFoundError(`Resource not found: ${file}`);
      const providerName = file.slice(0, -4);
      const { box, version: v, provider } = await deps.boxService.locateProvider(caller, ref, version, providerName, 'read');
      // Only released versions are installable; owners may fetch their own drafts.
      if (v.status !== 'active' && !canManage(caller.actor, box.ownerId)) {
        throw new NotFoundError(`Resource not found: version ${version} of ${ref.username}/${ref.name} is ${v.status}`);
      }
      if (provider.blobKey !== null) {
        const { checksum, checksum_type } = effectiveChecksum(provider);
        return {
          kind: 'blob',
          key: provider.blobKey,
          size: Number(provider.size ?? 0),
          boxId: box.id,
          filename: `${ref.name}-${version}-${providerName}.box`,
          sha256: provider.sha256,
          checksum,
          checksumType: checksum_type,
        };
      }
      if (provider.url !== null) return { kind: 'redirect', url: provider.url, boxId: box.id };
      throw new NotFoundError(`Resource not found: no box file has been uploaded for ${ref.username}/${ref.name} ${version} ${providerName}`);
    },

    countDownload: (boxId) => deps.boxStore.incrementDownloads(boxId),
  };
}
