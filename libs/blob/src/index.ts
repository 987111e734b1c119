export type { BlobStore, BlobInfo, BlobPutOptions, BlobRange } from './blob.types';
export { BlobKeyError, BlobRangeError, assertValidBlobKey, clampRange } from './blob-key';
export { createFsBlobStore, DEFAULT_STALE_TEMP_MS, sweepStaleTemp, type FsBlobStoreOptions } from './fs-blob-store';
export { createS3BlobStore, createS3Client, type S3BlobStoreOptions } from './s3-blob-store';
export { createBlobStoreFromConfig, blobStoreEnvSchema, pickBlobStoreConfig, type BlobStoreConfig } from './blob-config';
