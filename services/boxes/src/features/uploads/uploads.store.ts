// Upload sessions (boxes.uploads) and the switch of a provider to a newly uploaded image.
// Each upload writes its own blob key; the provider row is pointed at it only after the
// bytes are complete and verified, so a failed upload never touches the good image.
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '@selfstack/db';
import type { Digests } from '../../shared/checksum-stream';
import type { ProviderRecord } from '../boxes/boxes.types';

export type UploadKind = 'classic' | 'direct';
export type UploadStatus = 'pending' | 'receiving' | 'received' | 'finalized' | 'failed';

export interface UploadRecord {
  id: string;
  providerId: string;
  kind: string;
  status: string;
  blobKey: string;
  size: bigint | null;
  md5: string | null;
  sha1: string | null;
  sha256: string | null;
  sha384: string | null;
  sha512: string | null;
  expiresAt: Date;
  createdAt: Date;
}

export interface FinalizeResult {
  provider: ProviderRecord;
  /** The image this upload replaced; the caller deletes it from the blob store. */
  previousBlobKey: string | null;
}

export interface ProviderContext {
  provider: ProviderRecord;
  version: string;
  box: { id: string; name: string; isPrivate: boolean; ownerId: string; owner: { username: string; billingState: string } };
}

export interface UploadStore {
  create(input: { providerId: string; kind: UploadKind; blobKeyFor: (uploadId: string) => string; expiresAt: Date }): Promise<UploadRecord>;
  find(id: string): Promise<UploadRecord | null>;
  /** pending|failed -> receiving; false when another request holds or used the URL. */
  claim(id: string): Promise<boolean>;
  markFailed(id: string): Promise<void>;
  markReceived(id: string, size: number, digests: Digests): Promise<void>;
  /**
   * Points the provider at the upload's blob (hosted, digests, size; external url
   * cleared) and marks the upload finalized, in one transaction. `from` is the status
   * the upload must have (receiving for classic, received for the direct callback).
   * Null when the upload is no longer in that state.
   */
  finalize(id: string, from: UploadStatus, size: number, digests: Digests): Promise<FinalizeResult | null>;
  /** The provider with its version, box and owner (for checks when bytes arrive). */
  providerContext(providerId: string): Promise<ProviderContext | null>;
  /** Blob keys of every upload of these providers (to delete blobs with the rows). */
  blobKeysOfProviders(providerIds: readonly string[]): Promise<string[]>;
}

export function createUploadStore(prisma: PrismaClient): UploadStore {
  return {
    async create(input) {
      const id = randomUUID();
      return prisma.boxUpload.create({
        data: { id, providerId: input.providerId, kind: input.kind, blobKey: input.blobKeyFor(id), expiresAt: input.expiresAt },
      });
    },
    find: (id) => prisma.boxUpload.findUnique({ where: { id } }),
    async claim(id) {
      const r = await prisma.boxUpload.updateMany({ where: { id, status: { in: ['pending', 'failed'] } }, data: { status: 'receiving' } });
      return r.count > 0;
    },
    async markFailed(id) {
      await prisma.boxUpload.updateMany({ where: { id, status: { in: ['receiving', 'received'] } }, data: { status: 'failed' } });
    },
    async markReceived(id, size, digests) {
      await prisma.boxUpload.updateMany({ where: { id, status: 'receiving' }, data: { status: 'received', size: BigInt(size), ...digests } });
    },
    finalize: (id, from, size, digests) =>
      prisma.$transaction(async (tx) => {
        const done = await tx.boxUpload.updateMany({ where: { id, status: from }, data: { status: 'finalized', size: BigInt(size), ...digests } });
        if (done.count === 0) return null;
        const upload = await tx.boxUpload.findUniqueOrThrow({ where: { id } });
        // Row lock: two uploads finalising at once each see the key they replace.
        const locked = await tx.$queryRaw<{ blob_key: string | null }[]>`SELECT blob_key FROM "boxes"."providers" WHERE id = ${upload.providerId} FOR UPDATE`;
        const previousBlobKey = locked[0]?.blob_key ?? null;
        const provider = await tx.boxProvider.update({
          where: { id: upload.providerId },
          data: { blobKey: upload.blobKey, hosted: true, url: null, size: BigInt(size), ...digests },
        });
        const version = await tx.boxVersion.findUniqueOrThrow({ where: { id: provider.versionId }, select: { boxId: true } });
        await tx.box.update({ where: { id: version.boxId }, data: { updatedAt: new Date() } });
        return { provider, previousBlobKey: previousBlobKey === upload.blobKey ? null : previousBlobKey };
      }),
    async providerContext(providerId) {
      const row = await prisma.boxProvider.findUnique({
        where: { id: providerId },
        include: { version: { include: { box: { include: { owner: { select: { username: true, billingState: true } } } } } } },
      });
      if (!row) return null;
      const { version, ...provider } = row;
      return {
        provider,
        version: version.version,
        box: { id: version.box.id, name: version.box.name, isPrivate: version.box.isPrivate, ownerId: version.box.ownerId, owner: version.box.owner },
      };
    },
    async blobKeysOfProviders(providerIds) {
      if (providerIds.length === 0) return [];
      const rows = await prisma.boxUpload.findMany({ where: { providerId: { in: [...providerIds] } }, select: { blobKey: true } });
      return rows.map((r) => r.blobKey);
    },
  };
}
