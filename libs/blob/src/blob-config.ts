// Choosing and configuring a blob store from configuration. A service parses its env once
// (with `blobStoreEnvSchema(prefix)` inside its own `loadEnv` call, so every problem is
// reported together) and hands the result to `createBlobStoreFromConfig`.
//
// Variables (shown for prefix `BOXES_`):
//   BOXES_BLOB_STORE                 fs (default) | s3
//   BOXES_BLOB_FS_ROOT               directory for the fs store (default given by the service)
//   BOXES_BLOB_S3_BUCKET             bucket (required for s3)
//   BOXES_BLOB_S3_ENDPOINT           endpoint URL of an S3-compatible server (unset = AWS)
//   BOXES_BLOB_S3_REGION             region (default us-east-1)
//   BOXES_BLOB_S3_PREFIX             key prefix inside the bucket (default empty)
//   BOXES_BLOB_S3_ACCESS_KEY_ID / BOXES_BLOB_S3_SECRET_ACCESS_KEY
//                                    static credentials (unset = the SDK's default chain)
//   BOXES_BLOB_S3_FORCE_PATH_STYLE   true|false (default true when an endpoint is set)
import { z } from 'zod';
import type { BlobStore } from './blob.types';
import { createFsBlobStore } from './fs-blob-store';
import { createS3BlobStore } from './s3-blob-store';

export type BlobStoreConfig =
  | { kind: 'fs'; root: string }
  | {
      kind: 's3';
      bucket: string;
      endpoint?: string;
      region?: string;
      prefix?: string;
      forcePathStyle?: boolean;
      credentials?: { accessKeyId: string; secretAccessKey: string };
    };

export function createBlobStoreFromConfig(config: BlobStoreConfig): BlobStore {
  if (config.kind === 'fs') return createFsBlobStore({ root: config.root });
  return createS3BlobStore(config);
}

/**
 * The `BlobStoreConfig` fields out of a service's parsed environment: the schema's output
 * is merged (`.and(...)`) into the service's env object, which carries every other variable
 * too.
 */
export function pickBlobStoreConfig(parsed: BlobStoreConfig): BlobStoreConfig {
  if (parsed.kind === 'fs') return { kind: 'fs', root: parsed.root };
  return {
    kind: 's3',
    bucket: parsed.bucket,
    ...(parsed.endpoint === undefined ? {} : { endpoint: parsed.endpoint }),
    ...(parsed.region === undefined ? {} : { region: parsed.region }),
    ...(parsed.prefix === undefined ? {} : { prefix: parsed.prefix }),
    ...(parsed.forcePathStyle === undefined ? {} : { forcePathStyle: parsed.forcePathStyle }),
    ...(parsed.credentials === undefined ? {} : { credentials: parsed.credentials }),
  };
}

const blank = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const optionalString = z.preprocess(blank, z.string().optional());

/**
 * A zod schema over the environment that yields a `BlobStoreConfig`. `prefix` names the
 * variables (`BOXES_` gives `BOXES_BLOB_STORE`, ...); `defaultFsRoot` is used when the fs
 * store is chosen and no root is configured.
 */
export function blobStoreEnvSchema(prefix: string, defaultFsRoot: string) {
  const v = (name: string) => `${prefix}BLOB_${name}`;
  return z
    .object({
      [v('STORE')]: z.preprocess(blank, z.enum(['fs', 's3']).default('fs')),
      [v('FS_ROOT')]: optionalString,
      [v('S3_BUCKET')]: optionalString,
      [v('S3_ENDPOINT')]: z.preprocess(blank, z.url().optional()),
      [v('S3_REGION')]: optionalString,
      [v('S3_PREFIX')]: optionalString,
      [v('S3_ACCESS_KEY_ID')]: optionalString,
      [v('S3_SECRET_ACCESS_KEY')]: optionalString,
      [v('S3_FORCE_PATH_STYLE')]: z.preprocess(blank, z.enum(['true', 'false']).optional()),
    })
    .superRefine((env, ctx) => {
      if (env[v('STORE')] !== 's3') return;
      if (env[v('S3_BUCKET')] === undefined) {
        ctx.addIssue({ code: 'custom', path: [v('S3_BUCKET')], message: `is required when ${v('STORE')}=s3` });
      }
      if ((env[v('S3_ACCESS_KEY_ID')] === undefined) !== (env[v('S3_SECRET_ACCESS_KEY')] === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [v('S3_SECRET_ACCESS_KEY')],
          message: `${v('S3_ACCESS_KEY_ID')} and ${v('S3_SECRET_ACCESS_KEY')} must be set together`,
        });
      }
    })
    .transform((env): BlobStoreConfig => {
      const str = (name: string) => env[v(name)] as string | undefined;
      if (str('STORE') !== 's3') return { kind: 'fs', root: str('FS_ROOT') ?? defaultFsRoot };
      const config: BlobStoreConfig = { kind: 's3', bucket: str('S3_BUCKET') ?? '' };
      const endpoint = str('S3_ENDPOINT');
      const region = str('S3_REGION');
      const keyPrefix = str('S3_PREFIX');
      const pathStyle = str('S3_FORCE_PATH_STYLE');
      const accessKeyId = str('S3_ACCESS_KEY_ID');
      const secretAccessKey = str('S3_SECRET_ACCESS_KEY');
      if (endpoint !== undefined) config.endpoint = endpoint;
      if (region !== undefined) config.region = region;
      if (keyPrefix !== undefined) config.prefix = keyPrefix;
      if (pathStyle !== undefined) config.forcePathStyle = pathStyle === 'true';
      if (accessKeyId !== undefined && secretAccessKey !== undefined) config.credentials = { accessKeyId, secretAccessKey };
      return config;
    });
}
