// What every command needs: the connection settings (flags first, then SECRETS_*, then
// VAULT_* environment variables, then the token helper), the output format, and the
// writers. Built once per run from the global flags and the process's environment.
import { readFile } from 'node:fs/promises';
import { createApiClient, type ApiClient } from './api-client';
import { parseFormat, UsageError, type OutputFormat } from './format';
import { createTokenHelper, type TokenHelper } from './token-helper';

/** The default address, as the Vault CLI's. */
export const DEFAULT_ADDRESS = 'https://127.0.0.1:8200';

export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** All of standard input (for `-` arguments and prompts without a terminal). */
  readStdin(): Promise<string>;
}

export interface GlobalFlags {
  address?: string;
  token?: string;
  namespace?: string;
  ns?: string;
  caCert?: string;
  tlsSkipVerify?: boolean;
  format?: string;
}

export interface CliContext {
  io: CliIo;
  format: OutputFormat;
  tokens: TokenHelper;
  client(): Promise<ApiClient>;
  /** Prints a line (or block) on standard output. */
  out(text: string): void;
  /** Set by a command that ends "successfully" with another code (`status` while sealed: 2). */
  exitCode: number;
}

/** SECRETS_<name> or the Vault CLI's VAULT_<name>. */
export function envValue(env: CliIo['env'], name: string): string | undefined {
  for (const v of [env[`SECRETS_${name}`], env[`VAULT_${name}`]]) if (v !== undefined && v !== '') return v;
  return undefined;
}

/** Go's strconv.ParseBool, as the Vault CLI reads VAULT_SKIP_VERIFY. */
export function envBool(value: string | undefined, name: string): boolean {
  if (value === undefined) return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw new UsageError(`Invalid value for ${name}: ${JSON.stringify(value)}`);
}

export function createCliContext(flags: GlobalFlags, io: CliIo): CliContext {
  const format = parseFormat(flags.format ?? envValue(io.env, 'FORMAT') ?? 'table');
  const tokens = createTokenHelper(io.home);
  let client: ApiClient | undefined;
  return {
    io,
    format,
    tokens,
    exitCode: 0,
    out: (text) => io.stdout(text.endsWith('\n') ? text : `${text}\n`),
    async client() {
      if (client) return client;
      const address = flags.address ?? envValue(io.env, 'ADDR') ?? DEFAULT_ADDRESS;
      const caFile = flags.caCert ?? envValue(io.env, 'CACERT');
      let ca: Buffer | undefined;
      if (caFile !== undefined) {
        try {
          ca = await readFile(caFile);
        } catch (err) {
          throw new UsageError(`Error loading CA certificate ${caFile}: ${(err as Error).message}`);
        }
      }
      const skipVerify = flags.tlsSkipVerify === true || envBool(envValue(io.env, 'SKIP_VERIFY'), 'SECRETS_SKIP_VERIFY');
      const token = flags.token ?? envValue(io.env, 'TOKEN') ?? (await tokens.get());
      const namespace = flags.namespace ?? flags.ns ?? envValue(io.env, 'NAMESPACE') ?? '';
      try {
        client = createApiClient({ address, token, namespace, ca, skipVerify });
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      return client;
    },
  };
}

/** `key=value` arguments (Vault's), `key=@file` reads a file, `key=-` standard input. */
export async function parseKeyValues(args: readonly string[], io: CliIo): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`Invalid key/value pair ${JSON.stringify(arg)}: format must be key=value`);
    const key = arg.slice(0, eq);
    let value = arg.slice(eq + 1);
    if (value === '-') value = (await io.readStdin()).replace(/\r?\n$/, '');
    else if (value.startsWith('@')) {
      try {
        value = await readFile(value.slice(1), 'utf8');
      } catch (err) {
        throw new UsageError(`Error reading ${value.slice(1)}: ${(err as Error).message}`);
      }
    }
    out[key] = value;
  }
  return out;
}
