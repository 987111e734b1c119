// Configuration from the environment: one zod schema per service, parsed once at
// start-up by the composition root (docs/architecture.md: "Nothing else reads
// process.env"). Bad config fails fast with a ConfigError naming every problem.
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from './config-error';
import { parseDuration } from './duration';

export type EnvSource = Readonly<Record<string, string | undefined>>;

/**
 * Parses `env` with `schema` (normally a `z.object` of env variable names). Every issue
 * zod finds is reported, each with the variable it concerns, so an operator fixes all
 * of them in one go instead of one per restart.
 */
export function loadEnv<S extends z.ZodType>(schema: S, env: EnvSource): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems: ConfigProblem[] = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(environment)';
    const first = issue.path[0];
    const missing = issue.path.length === 1 && typeof first === 'string' && env[first] === undefined;
    // zod's "expected string, received undefined" is accurate but unhelpful to an
    // operator: say the variable is required.
    const message = missing && issue.code === 'invalid_type' ? 'is required but not set' : issue.message;
    return { where, message };
  });
  const noun = problems.length === 1 ? 'problem' : 'problems';
  throw new ConfigError(`invalid configuration (${problems.length} ${noun}):`, problems);
}

// Unset and empty are the same thing for an env variable: `DATABASE_URL=` in a shell or
// a compose file means "not configured".
export const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** An optional variable checked by `schema`; unset or empty gives undefined. */
export function optionalEnv<T>(schema: z.ZodType<T>) {
  return z.preprocess(emptyToUndefined, schema.optional());
}

function urlWithScheme(schemes: readonly string[]) {
  return z.string().refine(
    (v) => {
      try {
        const u = new URL(v);
        return schemes.includes(u.protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    },
    { message: `must be a URL with scheme ${schemes.map((s) => `${s}://`).join(' or ')}` },
  );
}

/** Optional PostgreSQL connection URL; unset means "embedded/local default" to callers. */
export const databaseUrlEnv = z.preprocess(emptyToUndefined, urlWithScheme(['postgres', 'postgresql']).optional());

/** Optional Redis URL; unset means the in-memory bus (single process). */
export const redisUrlEnv = z.preprocess(emptyToUndefined, urlWithScheme(['redis', 'rediss']).optional());

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
export const logLevelEnv = z.preprocess(emptyToUndefined, z.enum(LOG_LEVELS).default('info'));

export const hostEnv = z.preprocess(emptyToUndefined, z.string().min(1).default('0.0.0.0'));

const intString = (what: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: `must be ${what} (digits only)` })
    .transform(Number)
    .pipe(z.number().int().min(min, { message: `must be at least ${min}` }).max(max, { message: `must be at most ${max}` }));

/** Listening port with a per-service default (secrets 8200, scheduler 4646, ...). */
export function portEnv(defaultPort: number) {
  return z.preprocess(emptyToUndefined, intString('a port number', 0, 65535).default(defaultPort));
}

/** Default request size limit: 32 MB, as the secrets spec's listener default. */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
export const maxRequestBytesEnv = z.preprocess(
  emptyToUndefined,
  intString('a byte count', 0, Number.MAX_SAFE_INTEGER).default(DEFAULT_MAX_REQUEST_BYTES),
);

/** `1`, `true`, `yes`, `on` / `0`, `false`, `no`, `off` (case-insensitive). */
export function booleanEnv(defaultValue: boolean) {
  return z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^(1|0|true|false|yes|no|on|off)$/i, { message: 'must be a boolean (1/0, true/false, yes/no, on/off)' })
      .transform((v) => /^(1|true|yes|on)$/i.test(v))
      .default(defaultValue),
  );
}

/** A whole number (digits only) with a default, e.g. a byte count or a rate limit. */
export function integerEnv(defaultValue: number, options: { min?: number; max?: number; what?: string } = {}) {
  return z.preprocess(
    emptyToUndefined,
    intString(options.what ?? 'a whole number', options.min ?? 0, options.max ?? Number.MAX_SAFE_INTEGER).default(defaultValue),
  );
}

/** A Go-style duration (`10s`, `1m30s`), parsed to milliseconds. */
export function durationEnv(defaultValue: string) {
  return z.preprocess(
    emptyToUndefined,
    z
      .string()
      .default(defaultValue)
      .transform((v, ctx) => {
        try {
          return parseDuration(v);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      }),
  );
}

/**
 * The env variables every service reads. Spread into a service schema:
 * `z.object({ ...sharedEnv({ port: 8200 }), SECRETS_DEV_MODE: booleanEnv(false) })`.
 */
export function sharedEnv(defaults: { port: number }) {
  return {
    DATABASE_URL: databaseUrlEnv,
    REDIS_URL: redisUrlEnv,
    LOG_LEVEL: logLevelEnv,
    HOST: hostEnv,
    PORT: portEnv(defaults.port),
    MAX_REQUEST_BYTES: maxRequestBytesEnv,
  };
}
