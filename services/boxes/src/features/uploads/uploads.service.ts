// Uploads (spec "Upload rules", reference A.5): `GET .../upload` and `.../upload/direct`
// hand out short-lived signed URLs pointing at this service; `PUT` there streams the
// image into the blob store while every checksum is computed on the fly; a classic
// upload takes effect at once, a direct one when the authenticated callback arrives.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import jwt from 'jsonwebtoken';
import { ForbiddenError, NotFoundError, PayloadTooLargeError, PaymentRequiredError, UnprocessableEntityError } from '@selfstack/errors';
import type { BlobStore } from '@selfstack/blob';
import type { Logger } from '@selfstack/logger';
import { ChecksumStream, SizeLimitError, type ChecksumType, type Digests } from '../../shared/checksum-stream';
import { providerApiPath, toProviderJson } from '../boxes/boxes.presenter';
import type { BoxRef, BoxService, Caller } from '../boxes/boxes.service';
import type { ProviderJson } from '../boxes/boxes.types';
import type { UploadKind, UploadStore } from './uploads.store';

const AUDIENCE = 'selfstack-boxes-upload';

interface UploadClaims {
  /** Provider id. */
  pid: string;
  kind: UploadKind;
}

export interface UploadServiceDeps {
  uploadStore: UploadStore;
  boxService: BoxService;
  blobs: BlobStore;
  logger: Logger;
  signingKey: string;
  /** How long an upload URL may be used to start an upload. */
  urlTtlMs: number;
  maxUploadBytes: number;
  now?: () => Date;
}

export interface UploadService {
  issue(caller: Caller, ref: BoxRef, version: string, provider: string, kind: UploadKind): Promise<{ upload_path: string; callback?: string }>;
  receive(input: { token: string; body: Readable; contentLength: number | undefined; signal: AbortSignal; base: string }): Promise<{ success: true; size: number; checksums: Digests }>;
  complete(caller: Caller, ref: BoxRef, version: string, provider: string, uploadId: string): Promise<ProviderJson>;
}

export function blobKeyFor(providerId: string, uploadId: string): string {
  return `boxes/${providerId}/${uploadId}.box`;
}

export function createUploadService(deps: UploadServiceDeps): UploadService {
  const now = deps.now ?? (() => new Date());

  function verify(token: string): UploadClaims & { jti: string } {
    try {
      const claims = jwt.verify(token, deps.signingKey, { algorithms: ['HS256'], audience: AUDIENCE, clockTimestamp: Math.floor(now().getTime() / 1000) }) as jwt.JwtPayload & Partial<UploadClaims>;
      if (typeof claims.jti !== 'string' || typeof claims.pid !== 'string' || (claims.kind !== 'classic' && claims.kind !== 'direct')) {
        throw new Error('malformed claims');
      }
      return { jti: claims.jti, pid: claims.pid, kind: claims.kind };
    } catch (err) {
      if (err instanceof jwt.TokenExpiredError) throw new ForbiddenError('The upload URL has expired; request a new one');
      throw new ForbiddenError('Invalid upload URL');
    }
  }

  return {
    async issue(caller, ref, version, provider, kind) {
      const located = await deps.boxService.locateProvider(caller, ref, version, provider, 'write');
      const expiresAt = new Date(now().getTime() + deps.urlTtlMs);
      const upload = await deps.uploadStore.create({
        providerId: located.provider.id,
        kind,
        blobKeyFor: (id) => blobKeyFor(located.provider.id, id),
        expiresAt,
      });
      const claims: UploadClaims = { pid: located.provider.id, kind };
      // iat from our clock (not jsonwebtoken's), so expiry follows the injected clock.
      const token = jwt.sign({ ...claims, iat: Math.floor(now().getTime() / 1000) }, deps.signingKey, {
        algorithm: 'HS256',
        audience: AUDIENCE,
        jwtid: upload.id,
        expiresIn: Math.max(1, Math.round(deps.urlTtlMs / 1000)),
      });
      const uploadPath = `${caller.base}/api/v1/uploads/${token}`;
      if (kind === 'classic') return { upload_path: uploadPath };
      const p = located.box.owner.username;
      return {
        upload_path: uploadPath,
        callback: `${caller.base}${providerApiPath(p, located.box.name, located.version.version, located.provider.name)}/upload/direct/${upload.id}`,
      };
    },

    async receive({ token, body, contentLength, signal }) {
      const claims = verify(token);
      const upload = await deps.uploadStore.find(claims.jti);
      if (!upload || upload.providerId !== claims.pid) throw new NotFoundError('The upload no longer exists (the provider was deleted)');
      if (upload.expiresAt.getTime() < now().getTime()) throw new ForbiddenError('The upload URL has expired; request a new one');
      if (contentLength !== undefined && contentLength > deps.maxUploadBytes) {
        throw new PayloadTooLargeError(`The box is larger than the limit of ${deps.maxUploadBytes} bytes`);
      }
      const context = await deps.uploadStore.providerContext(upload.providerId);
      if (!context) throw new NotFoundError('The upload no longer exists (the provider was deleted)');
      if (context.box.owner.billingState === 'delinquent') {
        throw new PaymentRequiredError(`The account ${context.box.owner.username} is delinquent on billing; the owner must update billing information`);
      }
      if (!(await deps.uploadStore.claim(upload.id))) throw new ForbiddenError('This upload URL has already been used; request a new one');

      const hasher = new ChecksumStream(deps.maxUploadBytes);
      let digests: Digests;
      try {
        await Promise.all([
          pipeline(body, hasher),
          deps.blobs.put(upload.blobKey, hasher, { contentType: 'application/octet-stream', signal, ...(contentLength !== undefined ? { contentLength } : {}) }),
        ]);
        digests = hasher.digests;
      } catch (err) {
        await deps.uploadStore.markFailed(upload.id);
        await deps.blobs.delete(upload.blobKey).catch(() => undefined);
        if (err instanceof SizeLimitError) throw new PayloadTooLargeError(`The box is larger than the limit of ${deps.maxUploadBytes} bytes`);
        throw err;
      }

      const declared = context.provider.checksumType as ChecksumType | null;
      if (declared !== null && context.provider.checksum !== null && digests[declared] !== context.provider.checksum.toLowerCase()) {
        await deps.uploadStore.markFailed(upload.id);
        await deps.blobs.delete(upload.blobKey).catch(() => undefined);
        throw new UnprocessableEntityError(
          `Checksum mismatch: the provider declares ${declared} ${context.provider.checksum}, the upload has ${digests[declared]}; the previous box file is unchanged`,
        );
      }

      if (upload.kind === 'classic') {
        const result = await deps.uploadStore.finalize(upload.id, 'receiving', hasher.size, digests);
        if (!result) throw new UnprocessableEntityError('The upload was cancelled while it was being received');
        if (result.previousBlobKey) await deps.blobs.delete(result.previousBlobKey).catch(() => undefined);
      } else {
        await deps.uploadStore.markReceived(upload.id, hasher.size, digests);
      }
      deps.logger.info('box uploaded', { provider_id: upload.providerId, kind: upload.kind, size: hasher.size, sha256: digests.sha256 });
      return { success: true, size: hasher.size, checksums: digests };
    },

    async complete(caller, ref, version, provider, uploadId) {
      const located = await deps.boxService.locateProvider(caller, ref, version, provider, 'write');
      const upload = await deps.uploadStore.find(uploadId);
      if (!upload || upload.providerId !== located.provider.id || upload.kind !== 'direct') {
        throw new NotFoundError(`Resource not found: direct upload ${uploadId} of this provider`);
      }
      const refOf = { username: located.box.owner.username, name: located.box.name };
      if (upload.status === 'finalized') {
        // The callback is idempotent: a retried PUT sees the same provider.
        const again = await deps.boxService.locateProvider(caller, ref, version, provider, 'read');
        return toProviderJson(caller.base, refOf, located.version.version, again.provider);
      }
      if (upload.status !== 'received' || upload.size === null || upload.sha256 === null) {
        throw new UnprocessableEntityError(`No completed upload to finalize: upload ${uploadId} is ${upload.status}`);
      }
      const digests: Digests = {
        md5: upload.md5 ?? '',
        sha1: upload.sha1 ?? '',
        sha256: upload.sha256,
        sha384: upload.sha384 ?? '',
        sha512: upload.sha512 ?? '',
      };
      const result = await deps.uploadStore.finalize(upload.id, 'received', Number(upload.size), digests);
      if (!result) throw new UnprocessableEntityError(`No completed upload to finalize: upload ${uploadId} changed state`);
      if (result.previousBlobKey) await deps.blobs.delete(result.previousBlobKey).catch(() => undefined);
      return toProviderJson(caller.base, refOf, located.version.version, result.provider);
    },
  };
}
