// Configuration of the registry service, parsed once by main.ts (docs/registry.md
// "Configuration"). Every problem is reported together by loadEnv.
import { z } from 'zod';
import { booleanEnv, durationEnv, integerEnv, loadEnv, optionalEnv, sharedEnv, type EnvSource } from '@selfstack/config';
import { blobStoreEnvSchema, pickBlobStoreConfig } from '@selfstack/blob';

const MiB = 1024 * 1024;
const secret = (min: number, what: string) => optionalEnv(z.string().min(min, { message: `must be at least ${min} characters (${what})` }));

export const DEFAULT_BLOB_ROOT = '.data/blobs';

export function registryEnvSchema(defaultBlobRoot = DEFAULT_BLOB_ROOT) {
  return z
    .object({
      ...sharedEnv({ port: 3200 }),
      REGISTRY_PUBLIC_READS: booleanEnv(true),
      REGISTRY_PUBLIC_ARCHIVES: booleanEnv(false),
      REGISTRY_SIGNING_KEY: secret(32, 'HMAC key of the signed archive URLs'),
      REGISTRY_ADMIN_TOKEN: secret(16, 'the bootstrap admin token'),
      REGISTRY_ARCHIVE_URL_TTL: durationEnv('5m'),
      REGISTRY_MAX_ARCHIVE_BYTES: integerEnv(20 * MiB, { min: 1024, what: 'a byte count' }),
      REGISTRY_MAX_UNPACKED_BYTES: integerEnv(200 * MiB, { min: 1024, what: 'a byte count' }),
      REGISTRY_MAX_ARCHIVE_ENTRIES: integerEnv(10_000, { min: 1, what: 'a number of files and directories' }),
      // Spec "Errors": 429 and 503 (load shedding, maintenance); thresholds "not shown".
      REGISTRY_RATE_LIMIT_PER_MINUTE: integerEnv(1200, { min: 1, what: 'a number of requests per client per minute' }),
      REGISTRY_MAX_IN_FLIGHT: integerEnv(512, { what: 'a number of requests (0: no load shedding)' }),
      REGISTRY_MAINTENANCE_CHECK_INTERVAL: durationEnv('2s'),
      REGISTRY_TRUST_PROXY: booleanEnv(false),
    })
    .and(blobStoreEnvSchema('REGISTRY_', defaultBlobRoot));
}

/** The registry's configuration: the environment as the service uses it. */
export function registryConfigSchema(defaultBlobRoot = DEFAULT_BLOB_ROOT) {
  return registryEnvSchema(defaultBlobRoot).transform((e) => ({
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    host: e.HOST,
    port: e.PORT,
    // The listener must let an archive of the maximum size through to the app, which
    // then answers 413 itself above REGISTRY_MAX_ARCHIVE_BYTES.
    maxRequestBytes: Math.max(e.MAX_REQUEST_BYTES, e.REGISTRY_MAX_ARCHIVE_BYTES + 64 * 1024),
    publicReads: e.REGISTRY_PUBLIC_READS,
    publicArchives: e.REGISTRY_PUBLIC_ARCHIVES,
    signingKey: e.REGISTRY_SIGNING_KEY,
    adminToken: e.REGISTRY_ADMIN_TOKEN,
    archiveUrlTtlSeconds: Math.max(1, Math.round(e.REGISTRY_ARCHIVE_URL_TTL / 1000)),
    maxArchiveBytes: e.REGISTRY_MAX_ARCHIVE_BYTES,
    maxUnpackedBytes: e.REGISTRY_MAX_UNPACKED_BYTES,
    maxArchiveEntries: e.REGISTRY_MAX_ARCHIVE_ENTRIES,
    rateLimitPerMinute: e.REGISTRY_RATE_LIMIT_PER_MINUTE,
    maxInFlight: e.REGISTRY_MAX_IN_FLIGHT,
    maintenanceCheckMs: e.REGISTRY_MAINTENANCE_CHECK_INTERVAL,
    trustProxy: e.REGISTRY_TRUST_PROXY,
    blob: pickBlobStoreConfig(e),
  }));
}

export type RegistryConfig = z.output<ReturnType<typeof registryConfigSchema>>;

export function loadRegistryConfig(env: EnvSource, defaultBlobRoot = DEFAULT_BLOB_ROOT): RegistryConfig {
  return loadEnv(registryConfigSchema(defaultBlobRoot), env);
}
