// S3-compatible blob store (AWS S3, MinIO, Ceph RGW, s3rver in tests). Writes stream
// through @aws-sdk/lib-storage's Upload: a multipart upload that holds at most
// `queueSize * partSize` bytes in memory, whatever the object size; an object becomes
// visible only when the upload completes, so readers see the old object or the new
// complete one. A failed or aborted write aborts the multipart upload (no parts left
// behind) and leaves the previous object in place.
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Transform, type Readable } from 'node:stream';
import { assertValidBlobKey, BlobRangeError } from './blob-key';
import type { BlobInfo, BlobPutOptions, BlobRange, BlobStore } from './blob.types';

export interface S3BlobStoreOptions {
  /** A ready client; when absent one is built from `endpoint`, `region`, `credentials`. */
  client?: S3Client;
  /** Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:9000`. */
  endpoint?: string;
  region?: string;
  bucket: string;
  /** Prepended to every key (`boxes/`), so several services can share one bucket. */
  prefix?: string;
  /** Path-style addressing (`http://host/bucket/key`); most self-hosted servers need it. Default: true when `endpoint` is set. */
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Multipart part size in bytes (minimum 5 MiB, S3's own floor). Default 8 MiB. */
  partSize?: number;
  /** Parts uploaded in parallel. Default 2. */
  queueSize?: number;
}

const MIN_PART_SIZE = 5 * 1024 * 1024;

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatus(err) === 404;
}

/** Builds the client the way S3-compatible servers expect it. */
export function createS3Client(options: Pick<S3BlobStoreOptions, 'endpoint' | 'region' | 'forcePathStyle' | 'credentials'>): S3Client {
  const config: S3ClientConfig = {
    region: options.region ?? 'us-east-1',
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    // SDK >= 3.729 adds CRC32 trailers (aws-chunked encoding) to every upload by
    // default; many S3-compatible servers reject them. Only send checksums when an
    // operation requires one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
  if (options.endpoint !== undefined) config.endpoint = options.endpoint;
  if (options.credentials !== undefined) config.credentials = options.credentials;
  return new S3Client(config);
}

export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const client = options.client ?? createS3Client(options);
  const bucket = options.bucket;
  const prefix = options.prefix ?? '';
  const partSize = Math.max(options.partSize ?? 8 * 1024 * 1024, MIN_PART_SIZE);
  const queueSize = Math.max(options.queueSize ?? 2, 1);

  function objectKey(key: string): string {
    assertValidBlobKey(key);
    return prefix + key;
  }

  const store: BlobStore = {
    async put(key: string, body: Readable, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      const Key = objectKey(key);
      let size = 0;
      const expected = putOptions.contentLength;
      // Counting happens in the stream itself, and a short body fails in `flush`, before
      // the last part is sent: the upload then aborts instead of completing a truncated
      // object over the good one.
      const counted = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          if (expected !== undefined && size > expected) {
            cb(new Error(`blob ${key}: more than the declared ${expected} bytes`));
            return;
          }
          cb(null, chunk);
        },
        flush(cb) {
          if (expected !== undefined && size !== expected) {
            cb(new Error(`blob ${key}: expected ${expected} bytes, received ${size}`));
            return;
          }
          cb();
        },
      });
      body.on('error', (err) => counted.destroy(err));
      body.pipe(counted);

      const upload = new Upload({
        client,
        params: {
          Bucket: bucket,
          Key,
          Body: counted,
          ...(putOptions.contentType !== undefined ? { ContentType: putOptions.contentType } : {}),
        },
        partSize,
        queueSize,
        leavePartsOnError: false,
      });
      const signal = putOptions.signal;
      const onAbort = () => {
        counted.destroy(new Error('blob write aborted'));
        void upload.abort().catch(() => undefined);
      };
      if (signal?.aborted) onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      // A source error must fail the upload even when lib-storage is between reads.
      const streamFailed = new Promise<never>((_, reject) => counted.once('error', reject));
      streamFailed.catch(() => undefined);
      try {
        await Promise.race([upload.done(), streamFailed]);
      } catch (err) {
        await upload.abort().catch(() => undefined);
        body.unpipe(counted);
        throw err;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
      return putOptions.contentType === undefined ? { key, size } : { key, size, contentType: putOptions.contentType };
    },

    async get(key: string, range?: BlobRange) {
      const Key = objectKey(key);
      if (range && (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0 || range.end < range.start)) {
        throw new BlobRangeError(`invalid range ${range.start}-${range.end}`, 0);
      }
      try {
        const res = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
        );
        let size = res.ContentLength ?? 0;
        const total = /\/(\d+)$/.exec(res.ContentRange ?? '');
        if (total?.[1] !== undefined) size = Number(total[1]);
        const info: BlobInfo = res.ContentType !== undefined ? { key, size, contentType: res.ContentType } : { key, size };
        return { info, stream: res.Body as Readable };
      } catch (err) {
        if (isNotFound(err)) return null;
        if (range && (httpStatus(err) === 416 || (err as { name?: string }).name === 'InvalidRange')) {
          const st = await store.stat(key);
          if (!st) return null;
          throw new BlobRangeError(`range ${range.start}-${range.end} not satisfiable for ${st.size} bytes`, st.size);
        }
        throw err;
      }
    },

    async stat(key: string): Promise<BlobInfo | null> {
      const Key = objectKey(key);
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket: bucket, Key }));
        const size = res.ContentLength ?? 0;
        return res.ContentType !== undefined ? { key, size, contentType: res.ContentType } : { key, size };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async delete(key: string): Promise<void> {
      const Key = objectKey(key);
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key }));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  };
  return store;
}
