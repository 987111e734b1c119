// Server configuration (shared ARCHITECTURE "Configuration"): environment variables parsed
// with zod, plus an optional HCL file (SECRETS_CONFIG) with Vault-style `listener "tcp"`
// blocks. Parsed once at start-up; problems are reported together.
import { ConfigError, loadEnv, parseHcl, sharedEnv, booleanEnv, durationEnv, integerEnv, validateHcl, type EnvSource } from '@selfstack/config';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureVersion } from 'node:tls';
import { z } from 'zod';
import { compileCustomHeaders, CustomHeadersError, type CustomHeaders } from './http/response-headers';

export const envSchema = z.object({
  ...sharedEnv({ port: 8200 }),
  SECRETS_DEV_MODE: booleanEnv(false),
  SECRETS_DEV_ROOT_TOKEN: z.string().optional(),
  /** Dev mode keeps its unseal key and root token here (mode 0600). */
  SECRETS_DEV_STATE_FILE: z.string().min(1).default('.data/secrets-dev.json'),
  SECRETS_CONFIG: z.string().optional(),
  /**
   * The hosted mode (spec "Authentication" 4; docs/secrets.md "Namespaces"): the `admin`
   * namespace is created at the first unseal and requests without a namespace are refused.
   * The HCL file's top-level `hosted = true` sets it too.
   */
  SECRETS_HOSTED: booleanEnv(false),
  /** Postgres pool size of this process. */
  // 8: on a 2-core PostgreSQL host 16 connections measured 15-25 % slower than 8 (more
  // backends than cores contend); raise it for a larger database server.
  SECRETS_DB_POOL: z.coerce.number().int().positive().default(8),
  /**
   * The physical cache of KV data reads (ciphertext, features/barrier/entry-cache.ts), in
   * MiB; 0 disables it (as Vault's `disable_cache`).
   */
  SECRETS_CACHE_MB: integerEnv(32, { max: 1_048_576, what: 'a size in MiB' }),
  /**
   * Longest time a cached entry is served without a re-read. Lost invalidations are caught
   * sooner by the bus messages' sequence numbers and heartbeats (entry-cache.ts); this is
   * the last bound. 5s until 2026-11-24, when that detection came and re-reading every
   * cached key twice per TTL was a tenth of a read's cost (docs/secrets.md).
   */
  SECRETS_CACHE_TTL: durationEnv('60s'),
});

export type SecretsEnv = z.output<typeof envSchema>;

/** The physical cache's options from SECRETS_CACHE_MB / SECRETS_CACHE_TTL (maxBytes 0: disabled). */
export function entryCacheOptions(env: Pick<SecretsEnv, 'SECRETS_CACHE_MB' | 'SECRETS_CACHE_TTL'>): { maxBytes: number; ttlMs: number } {
  return { maxBytes: env.SECRETS_CACHE_MB * 1024 * 1024, ttlMs: env.SECRETS_CACHE_TTL };
}

/** A listener's TLS material, read and checked at start-up (issue 28, item 2). */
export interface ListenerTls {
  cert: Buffer;
  key: Buffer;
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
}

export interface ListenerConfig {
  host: string;
  port: number;
  /** Bytes; Vault's default 32 MiB; negative disables the limit. */
  maxRequestBytes: number;
  customHeaders: CustomHeaders;
  requireRequestHeader: boolean;
  /** null: plain HTTP (`tls_disable = true`, or the listener of the environment). */
  tls: ListenerTls | null;
}

export interface SecretsConfig {
  env: SecretsEnv;
  /** The hosted mode: SECRETS_HOSTED, or `hosted = true` in the HCL file. */
  hosted: boolean;
  listeners: ListenerConfig[];
  warnings: string[];
}

const listenerSchema = z
  .object({
    address: z.string().optional(),
    max_request_size: z.number().int().optional(),
    custom_response_headers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    require_request_header: z.boolean().optional(),
    tls_disable: z.union([z.boolean(), z.string(), z.number()]).optional(),
    tls_cert_file: z.string().optional(),
    tls_key_file: z.string().optional(),
    tls_min_version: z.string().optional(),
    tls_max_version: z.string().optional(),
    purpose: z.unknown().optional(),
  })
  .strict();

const fileSchema = z
  .object({
    listener: z.object({ tcp: z.array(listenerSchema) }).strict().optional(),
    ui: z.boolean().optional(),
    disable_mlock: z.boolean().optional(),
    api_addr: z.string().optional(),
    hosted: z.boolean().optional(),
  })
  .strict();

/**
 * Vault's HCL1 config writes `custom_response_headers { "default" = {...} }`: a block
 * whose argument names are quoted, which HCL2 rejects. Rewriting the block opener to an
 * attribute (`custom_response_headers = {`) keeps the same meaning as an object expression.
 */
export function hcl1Compat(text: string): string {
  return text.replace(/custom_response_headers\s*\{/g, 'custom_response_headers = {');
}

function splitAddress(address: string, fallbackHost: string, fallbackPort: number): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(address);
  if (!m) return { host: address || fallbackHost, port: fallbackPort };
  return { host: (m[1] ?? '').replace(/^\[|\]$/g, '') || fallbackHost, port: Number(m[2]) };
}

/** Vault's `tls_min_version` / `tls_max_version` values. */
const TLS_VERSIONS: Record<string, SecureVersion> = { tls10: 'TLSv1', tls11: 'TLSv1.1', tls12: 'TLSv1.2', tls13: 'TLSv1.3' };

/** Vault parses `tls_disable` with Go's ParseBool (a bool, or "1", "true", "0", "false"...). */
function parseTlsDisable(value: boolean | string | number | undefined): boolean | null {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  const text = String(value).trim();
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  return null;
}

type ListenerBlock = z.output<typeof listenerSchema>;

/**
 * The TLS settings of one listener block, files read and the pair checked (a key that does
 * not match the certificate fails here, not at the first handshake). Vault's default is TLS
 * on: a block without `tls_disable = true` must name a certificate and a key.
 */
async function listenerTls(block: ListenerBlock, where: string, problems: { where: string; message: string }[]): Promise<ListenerTls | null> {
  const disabled = parseTlsDisable(block.tls_disable);
  if (disabled === null) {
    problems.push({ where: `${where}.tls_disable`, message: `invalid boolean ${JSON.stringify(block.tls_disable)}` });
    return null;
  }
  if (disabled) return null;
  const before = problems.length;
  const version = (key: 'tls_min_version' | 'tls_max_version', fallback: SecureVersion): SecureVersion => {
    const raw = block[key];
    if (raw === undefined || raw === '') return fallback;
    const v = TLS_VERSIONS[raw];
    if (!v) problems.push({ where: `${where}.${key}`, message: `invalid value ${JSON.stringify(raw)}: one of tls10, tls11, tls12, tls13` });
    return v ?? fallback;
  };
  const minVersion = version('tls_min_version', 'TLSv1.2');
  const maxVersion = version('tls_max_version', 'TLSv1.3');
  const file = async (key: 'tls_cert_file' | 'tls_key_file'): Promise<Buffer | null> => {
    const path = block[key];
    if (path === undefined || path === '') {
      problems.push({ where: `${where}.${key}`, message: 'required: TLS is enabled on this listener (set tls_disable = true to serve plain HTTP)' });
      return null;
    }
    try {
      return await readFile(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problems.push({ where: `${where}.${key}`, message: `cannot read ${path}: ${code === 'ENOENT' ? 'file not found' : (err as Error).message}` });
      return null;
    }
  };
  const cert = await file('tls_cert_file');
  const key = await file('tls_key_file');
  if (!cert || !key || problems.length > before) return null;
  // 'TLSv1' < 'TLSv1.1' < 'TLSv1.2' < 'TLSv1.3' as strings.
  if (minVersion > maxVersion) {
    problems.push({ where: `${where}.tls_min_version`, message: 'tls_min_version is greater than tls_max_version' });
    return null;
  }
  try {
    createSecureContext({ cert, key, minVersion, maxVersion });
  } catch (err) {
    problems.push({ where: `${where}.tls_cert_file`, message: `the certificate and key cannot be used: ${(err as Error).message}` });
    return null;
  }
  return { cert, key, minVersion, maxVersion };
}

export async function parseServerConfigText(text: string, filename: string, env: SecretsEnv): Promise<SecretsConfig> {
  const doc = await parseHcl(hcl1Compat(text), filename);
  const parsed = validateHcl(fileSchema, doc, filename);
  const warnings: string[] = [];
  const blocks = parsed.listener?.tcp ?? [];
  const listeners: ListenerConfig[] = [];
  const problems: { where: string; message: string }[] = [];
  for (const [i, block] of blocks.entries()) {
    const where = `${filename}: listener.tcp.${i}`;
    const { host, port } = splitAddress(block.address ?? '', env.HOST, env.PORT);
    const tls = await listenerTls(block, where, problems);
    let customHeaders: CustomHeaders;
    try {
      customHeaders = compileCustomHeaders(block.custom_response_headers);
      warnings.push(...customHeaders.warnings);
    } catch (err) {
      if (!(err instanceof CustomHeadersError)) throw err;
      problems.push({ where: `${where}.custom_response_headers`, message: err.message });
      continue;
    }
    const size = block.max_request_size ?? 0;
    listeners.push({
      host,
      port,
      maxRequestBytes: size === 0 ? env.MAX_REQUEST_BYTES : size < 0 ? -1 : size,
      customHeaders,
      requireRequestHeader: block.require_request_header ?? false,
      tls,
    });
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration in ${filename}:`, problems);
  if (listeners.length === 0) listeners.push(defaultListener(env));
  return { env, listeners, warnings, hosted: env.SECRETS_HOSTED || parsed.hosted === true };
}

export function defaultListener(env: SecretsEnv): ListenerConfig {
  return {
    host: env.HOST,
    port: env.PORT,
    maxRequestBytes: env.MAX_REQUEST_BYTES,
    customHeaders: compileCustomHeaders(undefined),
    requireRequestHeader: false,
    tls: null,
  };
}

export async function loadSecretsConfig(source: EnvSource): Promise<SecretsConfig> {
  const env = loadEnv(envSchema, source);
  if (!env.SECRETS_CONFIG) return { env, listeners: [defaultListener(env)], warnings: [], hosted: env.SECRETS_HOSTED };
  let text: string;
  try {
    text = await readFile(env.SECRETS_CONFIG, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`cannot read HCL file ${env.SECRETS_CONFIG}:`, [
      { where: env.SECRETS_CONFIG, message: code === 'ENOENT' ? 'file not found' : (err as Error).message },
    ]);
  }
  return parseServerConfigText(text, env.SECRETS_CONFIG, env);
}
