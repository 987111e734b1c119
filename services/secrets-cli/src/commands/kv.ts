// `kv get|put|patch|list|delete|undelete|destroy` and `kv metadata get|put|delete`
// (reference §2, §3). As the Vault CLI's kv helper: the mount and its KV version come
// from `sys/internal/ui/mounts/<path>`, and version 2 paths get `data/`, `metadata/`...
// inserted after the mount.
import type { Command } from 'commander';
import { action, boolValue, expectArgs, intValue, repeatable, sub, type Runner } from '../command-kit';
import { parseKeyValues, type CliContext } from '../cli-context';
import { ApiError } from '../api-client';
import { json, kvTable, table, UsageError } from '../format';

interface KvTarget {
  /** `secret/` */
  mount: string;
  version: '1' | '2';
  /** The key below the mount (`app/db`). */
  key: string;
}

/** Where `path` (or `-mount` + `path`) lives. */
export async function resolveKv(ctx: CliContext, path: string, mountFlag: unknown): Promise<KvTarget> {
  const full = typeof mountFlag === 'string' && mountFlag !== '' ? `${mountFlag.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}` : path.replace(/^\/+/, '');
  if (full === '') throw new UsageError('Missing path');
  const r = await (await ctx.client()).request('GET', `sys/internal/ui/mounts/${encodePath(full)}`);
  const data = (r.body as { data: { path: string; options?: { version?: string } | null } }).data;
  const mount = data.path.endsWith('/') ? data.path : `${data.path}/`;
  return { mount, version: data.options?.version === '2' ? '2' : '1', key: full.slice(Math.min(full.length, mount.length)) };
}

/** Path segments percent-encoded, slashes kept. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function apiPath(t: KvTarget, kind: 'data' | 'metadata' | 'delete' | 'undelete' | 'destroy'): string {
  return t.version === '2' ? `${t.mount}${kind}/${t.key}` : `${t.mount}${t.key}`;
}

function needV2(t: KvTarget, what: string): void {
  if (t.version !== '2') throw new UsageError(`${what} is only supported on KV version 2 mounts; ${t.mount} is version 1`);
}

function versionsOf(value: unknown): number[] {
  if (value === undefined || value === '') return [];
  const list = String(value).split(',').map((v) => v.trim()).filter((v) => v !== '');
  for (const v of list) if (!/^\d+$/.test(v)) throw new UsageError(`Invalid -versions value ${JSON.stringify(v)}`);
  return list.map(Number);
}

function section(title: string, body: string): string {
  return `=== ${title} ===\n${body}`;
}

/** Prints "No value found at <path>" and marks the run as a remote miss (exit code 2). */
function notFound(ctx: CliContext, path: string): void {
  ctx.io.stderr(`No value found at ${path}\n`);
  ctx.exitCode = 2;
}

async function getOr404(ctx: CliContext, path: string, query = ''): Promise<unknown | null> {
  try {
    return (await (await ctx.client()).request('GET', encodePath(path) + query)).body;
  } catch (err) {
    // A soft-deleted or destroyed version is a 404 with the version's metadata (no errors).
    if (err instanceof ApiError && err.status === 404) {
      const b = err.body as { data?: unknown } | null;
      return b !== null && typeof b === 'object' && b.data ? { ...b, deleted: true } : null;
    }
    throw err;
  }
}

/** A kv subcommand: positional arguments and `-mount` (then PATH is relative to the mount). */
function kvSub(parent: Command, name: string, description: string): Command {
  return sub(parent, name, description).option('--mount <mount>', 'Mount path (then PATH is relative to it)');
}

export function registerKv(program: Command, runner: Runner): void {
  const kv = program.command('kv').description('Read and write secrets of KV mounts (versions 1 and 2).');

  kvSub(kv, 'get', 'Read a secret: kv get [-version=N] [-field=KEY] PATH')
    .option('--version <n>', 'Version to read (KV v2)')
    .option('--field <key>', 'Print only this key of the data, bare')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const t = await resolveKv(ctx, args[0] as string, opts.mount);
        const version = intValue(opts.version, 'version');
        const query = version !== undefined && t.version === '2' ? `?version=${version}` : '';
        const body = (await getOr404(ctx, apiPath(t, 'data'), query)) as { data: Record<string, unknown> | null; deleted?: boolean } | null;
        if (!body) {
          notFound(ctx, apiPath(t, 'data'));
          return;
        }
        const secret = t.version === '2' ? ((body.data?.data as Record<string, unknown> | null) ?? null) : body.data;
        if (opts.field !== undefined) {
          const field = String(opts.field);
          if (!secret || !(field in secret)) throw new UsageError(`Field "${field}" not present in secret`);
          const v = secret[field];
          ctx.out(typeof v === 'string' ? v : JSON.stringify(v));
          return;
        }
        if (ctx.format === 'json') {
          ctx.out(json(body));
          if (body.deleted) ctx.exitCode = 2;
          return;
        }
        if (t.version === '1') {
          ctx.out(kvTable(secret ?? {}));
          return;
        }
        const meta = (body.data?.metadata ?? {}) as Record<string, unknown>;
        const parts = [section('Secret Path', apiPath(t, 'data')), '', section('Metadata', kvTable(meta))];
        if (secret) parts.push('', section('Data', kvTable(secret)));
        ctx.out(parts.join('\n'));
        if (body.deleted) ctx.exitCode = 2;
      }),
    );

  const writeCommand = (name: 'put' | 'patch', description: string) =>
    kvSub(kv, name, description)
        .option('--cas <n>', 'Check-and-set: the version the write expects as current (KV v2)')
      .action(
        action(runner, async (ctx, args, opts) => {
          if (args.length < 2) throw new UsageError(`Not enough arguments (expected at least 2, got ${args.length})`);
          const t = await resolveKv(ctx, args[0] as string, opts.mount);
          const data = await parseKeyValues(args.slice(1), ctx.io);
          const cas = intValue(opts.cas, 'cas');
          const client = await ctx.client();
          if (t.version === '1') {
            if (name === 'patch') needV2(t, 'kv patch');
            await client.request('PUT', encodePath(apiPath(t, 'data')), { body: data });
            ctx.out(`Success! Data written to: ${apiPath(t, 'data')}`);
            return;
          }
          const body = { data, ...(cas !== undefined ? { options: { cas } } : {}) };
          const r =
            name === 'put'
              ? await client.request('PUT', encodePath(apiPath(t, 'data')), { body })
              : await client.request('PATCH', encodePath(apiPath(t, 'data')), { body, contentType: 'application/merge-patch+json' });
          if (ctx.format === 'json') ctx.out(json(r.body));
          else ctx.out([section('Secret Path', apiPath(t, 'data')), '', section('Metadata', kvTable((r.body as { data: Record<string, unknown> }).data))].join('\n'));
        }),
      );
  writeCommand('put', 'Write a secret (replaces its data): kv put [-cas=N] PATH key=value [key=@file] ...');
  writeCommand('patch', 'Change some keys of a secret (KV v2, merge-patch): kv patch [-cas=N] PATH key=value ...');

  kvSub(kv, 'list', 'List the keys under a path: kv list PATH')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const t = await resolveKv(ctx, args[0] as string, opts.mount);
        const path = apiPath(t, 'metadata').replace(/\/?$/, '/');
        const r = await (await ctx.client()).request('LIST', encodePath(path), { allow: [404] });
        const keys = (r.body as { data?: { keys?: string[] } } | null)?.data?.keys;
        if (r.status === 404 || !keys) {
          notFound(ctx, path);
          return;
        }
        ctx.out(ctx.format === 'json' ? json(keys) : table(['Keys'], keys.map((k) => [k])));
      }),
    );

  kvSub(kv, 'delete', 'Delete the latest version (or -versions=1,2) of a secret; KV v1: the secret.')
    .option('--versions <list>', 'Comma-separated versions to soft-delete (KV v2)')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const t = await resolveKv(ctx, args[0] as string, opts.mount);
        const versions = versionsOf(opts.versions);
        const client = await ctx.client();
        if (t.version === '2' && versions.length > 0) {
          await client.request('POST', encodePath(apiPath(t, 'delete')), { body: { versions } });
          ctx.out(`Success! Data deleted (if it existed) at: ${apiPath(t, 'delete')}`);
          return;
        }
        await client.request('DELETE', encodePath(apiPath(t, 'data')));
        ctx.out(`Success! Data deleted (if it existed) at: ${apiPath(t, 'data')}`);
      }),
    );

  for (const [name, description] of [
    ['undelete', 'Restore soft-deleted versions: kv undelete -versions=1,2 PATH (KV v2)'],
    ['destroy', 'Destroy versions for good: kv destroy -versions=1,2 PATH (KV v2)'],
  ] as const) {
    kvSub(kv, name, description)
        .option('--versions <list>', 'Comma-separated versions')
      .action(
        action(runner, async (ctx, args, opts) => {
          expectArgs(args, 1);
          const versions = versionsOf(opts.versions);
          if (versions.length === 0) throw new UsageError('No versions provided, use the "-versions" flag');
          const t = await resolveKv(ctx, args[0] as string, opts.mount);
          needV2(t, `kv ${name}`);
          await (await ctx.client()).request(name === 'destroy' ? 'PUT' : 'POST', encodePath(apiPath(t, name)), { body: { versions } });
          ctx.out(`Success! Data written to: ${apiPath(t, name)}`);
        }),
      );
  }

  const metadata = kv.command('metadata').description('Read and write the metadata of KV v2 secrets.');
  kvSub(metadata, 'get', 'Show a secret\'s metadata and versions: kv metadata get PATH')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const t = await resolveKv(ctx, args[0] as string, opts.mount);
        needV2(t, 'kv metadata');
        const body = (await getOr404(ctx, apiPath(t, 'metadata'))) as { data: Record<string, unknown> } | null;
        if (!body) {
          notFound(ctx, apiPath(t, 'metadata'));
          return;
        }
        if (ctx.format === 'json') {
          ctx.out(json(body));
          return;
        }
        const { versions, ...rest } = body.data;
        const parts = [section('Metadata Path', apiPath(t, 'metadata')), '', section('Metadata', kvTable(rest))];
        for (const [n, v] of Object.entries((versions ?? {}) as Record<string, Record<string, unknown>>).sort(([a], [b]) => Number(a) - Number(b))) {
          parts.push('', section(`Version ${n}`, kvTable(v)));
        }
        ctx.out(parts.join('\n'));
      }),
    );
  kvSub(metadata, 'put', 'Set metadata: kv metadata put [-max-versions=N] [-cas-required] [-delete-version-after=D] [-custom-metadata=k=v] PATH')
    .option('--max-versions <n>', 'Versions to keep (0 = the mount\'s)')
    .option('--cas-required [bool]', 'Require check-and-set on writes')
    .option('--delete-version-after <duration>', 'Soft-delete versions after this long')
    .addOption(repeatable('--custom-metadata <key=value>', 'Custom metadata (repeatable)'))
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const t = await resolveKv(ctx, args[0] as string, opts.mount);
        needV2(t, 'kv metadata');
        const custom = opts.customMetadata ? await parseKeyValues(opts.customMetadata as string[], ctx.io) : undefined;
        const body: Record<string, unknown> = {};
        const maxVersions = intValue(opts.maxVersions, 'max-versions');
        if (maxVersions !== undefined) body.max_versions = maxVersions;
        const cas = boolValue(opts.casRequired, 'cas-required');
        if (cas !== undefined) body.cas_required = cas;
        if (opts.deleteVersionAfter !== undefined) body.delete_version_after = opts.deleteVersionAfter;
        if (custom) body.custom_metadata = custom;
        await (await ctx.client()).request('PUT', encodePath(apiPath(t, 'metadata')), { body });
        ctx.out(`Success! Data written to: ${apiPath(t, 'metadata')}`);
      }),
    );
  kvSub(metadata, 'delete', 'Delete a secret\'s metadata and every version: kv metadata delete PATH')
    .action(
      action(runner, async (ctx, args, opts) => {
        expectArgs(args, 1);
        const t = await resolveKv(ctx, args[0] as string, opts.mount);
        needV2(t, 'kv metadata');
        await (await ctx.client()).request('DELETE', encodePath(apiPath(t, 'metadata')));
        ctx.out(`Success! Data deleted (if it existed) at: ${apiPath(t, 'metadata')}`);
      }),
    );
}
