// Blob storage shared by the box-hosting service (box images) and the module registry
// (module archives). Implementations: filesystem (default) and S3-compatible. Bodies are
// streamed end to end: a 1 GiB box image must never be buffered in memory.
import type { Readable } from 'node:stream';

export interface BlobPutOptions {
  contentType?: string;
  /** Byte count when known up front (S3 needs it or a multipart upload). */
  contentLength?: number;
  /** Abort the write (client went away); partial objects are removed. */
  signal?: AbortSignal;
}

export interface BlobInfo {
  key: string;
  size: number;
  contentType?: string;
}

export interface BlobRange {
  /** Inclusive byte offsets, as in an HTTP Range header. */
  start: number;
  end: number;
}

export interface BlobStore {
  /** Writes the whole stream under `key`, atomically: readers see the old object or the complete new one. */
  put(key: string, body: Readable, options?: BlobPutOptions): Promise<BlobInfo>;
  /** Opens `key` (optionally a byte range). Resolves to null when the key does not exist. */
  get(key: string, range?: BlobRange): Promise<{ info: BlobInfo; stream: Readable } | null>;
  stat(key: string): Promise<BlobInfo | null>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}
