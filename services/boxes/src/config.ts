// Configuration of the box-hosting service, parsed once by main.ts and the admin CLI
// (docs/boxes.md "Configuration"). Every problem is reported together by loadEnv.
import { z } from 'zod';
import { blobStoreEnvSchema, pickBlobStoreConfig, type BlobStoreConfig } from '@selfstack/blob';
import { booleanEnv, ConfigError, durationEnv, emptyToUndefined, integerEnv, loadEnv, optionalEnv as optional, sharedEnv, type ConfigProblem, type EnvSource } from '@selfstack/config';

const GiB = 1024 * 1024 * 1024;
export const DEFAULT_BLOB_ROOT = '.data/boxes-blobs';

export function boxesEnvSchema(defaultBlobRoot = DEFAULT_BLOB_ROOT) {
  return z
    .object({
      ...sharedEnv({ port: 3100 }),
      BOXES_PUBLIC_URL: optional(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' })),
      BOXES_SIGNING_KEY: optional(z.string().min(32, { message: 'must be at least 32 characters (HMAC key of upload URLs)' })),
      BOXES_UPLOAD_URL_TTL: durationEnv('10m'),
      BOXES_MAX_UPLOAD_BYTES: integerEnv(100 * GiB, { min: 1 }),
      BOXES_TRUST_PROXY: booleanEnv(false),
      BOXES_BOOTSTRAP_ADMIN_USERNAME: optional(z.string()),
      BOXES_BOOTSTRAP_ADMIN_EMAIL: optional(z.email({ message: 'must be an e-mail address' })),
      BOXES_BOOTSTRAP_ADMIN_PASSWORD: optional(z.string().min(12, { message: 'must be at least 12 characters' })),
      BOXES_BOOTSTRAP_ADMIN_TOKEN: optional(z.string().min(32, { message: 'must be at least 32 characters' }).max(512)),
      BOXES_TWO_FACTOR_SENDER: z.preprocess(emptyToUndefined, z.enum(['outbox', 'webhook']).default('outbox')),
      BOXES_TWO_FACTOR_WEBHOOK_URL: optional(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' })),
      BOXES_TWO_FACTOR_WEBHOOK_TOKEN: optional(z.string()),
      BOXES_TWO_FACTOR_CODE_TTL: durationEnv('5m'),
      BOXES_RATE_LIMIT_API_PER_MINUTE: integerEnv(1200, { min: 1 }),
      BOXES_RATE_LIMIT_LOGIN_PER_MINUTE: integerEnv(10, { min: 1 }),
      BOXES_MAINTENANCE_CHECK_INTERVAL: durationEnv('2s'),
      BOXES_MAX_IN_FLIGHT: integerEnv(0, { what: 'a number of requests (0: no load shedding)' }),
    })
    .and(blobStoreEnvSchema('BOXES_', defaultBlobRoot));
}

const isSet = (v: string | undefined) => v !== undefined && v.trim() !== '';

/**
 * Rules that tie variables together. Checked on the raw environment, apart from the
 * schema, so they are reported together with every per-variable problem (zod skips
 * object refinements once a field failed).
 */
function crossProblems(env: EnvSource): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (env.BOXES_TWO_FACTOR_SENDER?.trim() === 'webhook' && !isSet(env.BOXES_TWO_FACTOR_WEBHOOK_URL)) {
    problems.push({ where: 'BOXES_TWO_FACTOR_WEBHOOK_URL', message: 'is required when BOXES_TWO_FACTOR_SENDER=webhook' });
  }
  if (isSet(env.BOXES_BOOTSTRAP_ADMIN_USERNAME) !== isSet(env.BOXES_BOOTSTRAP_ADMIN_PASSWORD)) {
    problems.push({ where: 'BOXES_BOOTSTRAP_ADMIN_PASSWORD', message: 'BOXES_BOOTSTRAP_ADMIN_USERNAME and BOXES_BOOTSTRAP_ADMIN_PASSWORD must be set together' });
  }
  if (isSet(env.BOXES_BOOTSTRAP_ADMIN_TOKEN) && !isSet(env.BOXES_BOOTSTRAP_ADMIN_USERNAME)) {
    problems.push({ where: 'BOXES_BOOTSTRAP_ADMIN_TOKEN', message: 'needs BOXES_BOOTSTRAP_ADMIN_USERNAME' });
  }
  return problems;
}

/** The service's configuration: the environment as the service uses it. */
export function boxesConfigSchema(defaultBlobRoot = DEFAULT_BLOB_ROOT) {
  return boxesEnvSchema(defaultBlobRoot).transform((e) => ({
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    host: e.HOST,
    port: e.PORT,
    maxRequestBytes: e.MAX_REQUEST_BYTES,
    publicUrl: e.BOXES_PUBLIC_URL,
    signingKey: e.BOXES_SIGNING_KEY,
    uploadUrlTtlMs: e.BOXES_UPLOAD_URL_TTL,
    maxUploadBytes: e.BOXES_MAX_UPLOAD_BYTES,
    trustProxy: e.BOXES_TRUST_PROXY,
    bootstrapAdmin:
      e.BOXES_BOOTSTRAP_ADMIN_USERNAME !== undefined && e.BOXES_BOOTSTRAP_ADMIN_PASSWORD !== undefined
        ? { username: e.BOXES_BOOTSTRAP_ADMIN_USERNAME, email: e.BOXES_BOOTSTRAP_ADMIN_EMAIL, password: e.BOXES_BOOTSTRAP_ADMIN_PASSWORD, token: e.BOXES_BOOTSTRAP_ADMIN_TOKEN }
        : undefined,
    twoFactor: {
      sender: e.BOXES_TWO_FACTOR_SENDER,
      webhookUrl: e.BOXES_TWO_FACTOR_WEBHOOK_URL,
      webhookToken: e.BOXES_TWO_FACTOR_WEBHOOK_TOKEN,
      codeTtlMs: e.BOXES_TWO_FACTOR_CODE_TTL,
    },
    rateLimits: { apiPerMinute: e.BOXES_RATE_LIMIT_API_PER_MINUTE, loginPerMinute: e.BOXES_RATE_LIMIT_LOGIN_PER_MINUTE },
    maintenanceCheckMs: e.BOXES_MAINTENANCE_CHECK_INTERVAL,
    maxInFlight: e.BOXES_MAX_IN_FLIGHT,
    blob: pickBlobStoreConfig(e as unknown as BlobStoreConfig),
  }));
}

export type BoxesConfig = z.output<ReturnType<typeof boxesConfigSchema>>;

export function loadBoxesConfig(env: EnvSource, defaultBlobRoot = DEFAULT_BLOB_ROOT): BoxesConfig {
  const cross = crossProblems(env);
  try {
    const parsed = loadEnv(boxesConfigSchema(defaultBlobRoot), env);
    if (cross.length > 0) throw new ConfigError(`invalid configuration (${cross.length} problem${cross.length === 1 ? '' : 's'}):`, cross);
    return parsed;
  } catch (err) {
    if (!(err instanceof ConfigError) || cross.length === 0 || err.problems.some((p) => cross.includes(p))) throw err;
    const all = [...err.problems, ...cross];
    throw new ConfigError(`invalid configuration (${all.length} problems):`, all);
  }
}
