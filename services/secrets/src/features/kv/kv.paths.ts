// KV engine routes, relative to the mount (issue 3, item 6; reference §2, §3).
import { z } from 'zod';
import { AppError } from '@selfstack/errors';
import { Reply } from '@selfstack/http-kit';
import { badRequest, notFound } from '../../core/errors';
import { goDuration, parseSeconds } from '../../core/duration';
import { isPlainObject } from '../../core/json';
import { respondWith } from '../../http/logical-response';
import { aclPath, secretsPath, type SecretsOpContext, type SecretsPathSpec, type SecretsRequestContext } from '../../http/request-context';
import { SYSTEM_DEFAULT_TTL } from '../tokens/tokens.service';
import type { MountEntry } from '../mounts/mounts.types';
import { mountStoragePrefix } from '../mounts/mounts.types';
import type { KvService } from './kv.service';
import type { MountService } from '../mounts/mounts.service';
import type { StorageTx } from '../barrier/storage.types';

/** Root help of a KV v1 mount (`GET /v1/<mount>?help=1`). */
export const KV_V1_HELP =
  'This backend provides a key-value store. It reads and writes arbitrary secrets under the mount: each key holds one JSON object, encrypted by the barrier before it reaches storage, and a write replaces the whole object (no versions). A `ttl` key in the data is returned as the lease duration of reads.';
/** Root help of a KV v2 mount. */
export const KV_V2_HELP =
  'This backend provides a versioned key-value store. Secrets are written under `data/` and encrypted by the barrier before they reach storage; each key keeps a configurable number of versions (`config`, `metadata/`), readable by version number, which can be soft-deleted (`delete/`), restored (`undelete/`) or destroyed for good (`destroy/`). `subkeys/` shows the structure of a secret without its values.';

const int = z.number().int();
const bool = z.boolean();
const str = z.string();
const durationField = z.union([z.number(), z.string()]);

export const INVALID_V2_PATH =
  "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv get' for this operation.";
export const ROOT_V2_PATH = 'Non-listing operations on the root of a K/V v2 mount are not supported.';

const mountOf = (ctx: { extra: { mount: MountEntry | null } }): MountEntry => ctx.extra.mount as MountEntry;
const prefixOf = (ctx: { extra: { mount: MountEntry | null } }): string => mountStoragePrefix(mountOf(ctx));
const dirOf = (path: string): string => (path === '' || path.endsWith('/') ? path : `${path}/`);

/**
 * The existence check only decides whether a PUT/POST is authorised as `create` or as
 * `update`; every KV route here runs the same handler for both. When the token holds both
 * capabilities on the path the answer cannot change the outcome, so the metadata query is
 * skipped (issue 3, item 9: one Postgres round trip less per write). Otherwise (one of the
 * two denied) the real check runs, so policies that tell create from update still do.
 */
function existenceCheckOf(exists: (ctx: SecretsRequestContext) => Promise<boolean>) {
  return (ctx: SecretsRequestContext): boolean | Promise<boolean> => {
    const acl = ctx.extra.acl;
    if (acl) {
      const full = aclPath(ctx);
      if (acl.allows(full, 'create') && acl.allows(full, 'update')) return true;
    }
    return exists(ctx);
  };
}

function seconds(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseSeconds(value);
  } catch {
    throw badRequest(`invalid value for ${JSON.stringify(field)}: ${JSON.stringify(value)}`);
  }
}

function listResponse(keys: string[]) {
  if (keys.length === 0) throw notFound();
  return respondWith({ data: { keys } });
}

/** v1 lease: the `ttl` (or legacy `lease`) key of the secret, else the mount default (reference §2). */
function v1LeaseSeconds(text: string, mount: MountEntry): number {
  const fallback = mount.config.default_lease_ttl || SYSTEM_DEFAULT_TTL;
  if (!text.includes('"ttl"') && !text.includes('"lease"')) return fallback;
  const data = JSON.parse(text) as Record<string, unknown>;
  const raw = data.ttl ?? data.lease;
  if (raw === undefined) return fallback;
  try {
    return parseSeconds(raw);
  } catch {
    return fallback;
  }
}

export function createKvV1Paths(deps: { kv: KvService; mounts: Pick<MountService, 'assertCurrent'> }): SecretsPathSpec[] {
  const { kv, mounts } = deps;
  // v1 keys live where an upgrade to v2 moves them from: a write on a replica that has not
  // heard of the upgrade (or of a disable) yet must not land there after it committed.
  const current = (ctx: { extra: { mount: MountEntry | null } }) => (tx: StorageTx) => mounts.assertCurrent(tx, mountOf(ctx));
  return [
    secretsPath({
      pattern: '*path',
      summary: 'Pass-through secret storage (KV version 1).',
      description: 'Writes store the request body as the secret; reads return it; LIST returns the keys under a folder.',
      fields: { path: { schema: str, in: 'path', required: true, description: 'Location of the secret.' } },
      takesArbitraryInput: true,
      existenceCheck: existenceCheckOf((ctx) => kv.v1Exists(prefixOf(ctx), ctx.rawParams.path ?? '')),
      operations: {
        async read(ctx) {
          if (ctx.data.path === '') throw notFound();
          const raw = await kv.v1Read(prefixOf(ctx), ctx.data.path);
          if (!raw) throw notFound();
          return respondWith({ data: raw, leaseDuration: v1LeaseSeconds(raw.text, mountOf(ctx)) });
        },
        async list(ctx) {
          return listResponse(await kv.v1List(prefixOf(ctx), dirOf(ctx.data.path)));
        },
        async create(ctx) {
          await v1Write(ctx);
        },
        async update(ctx) {
          await v1Write(ctx);
        },
        async delete(ctx) {
          if (ctx.data.path === '') throw badRequest('missing path');
          await kv.v1Delete(prefixOf(ctx), ctx.data.path, current(ctx));
        },
      },
    }),
  ];

  async function v1Write(ctx: SecretsOpContext<{ path: { schema: typeof str; in: 'path'; required: true; description: string } }>) {
    if (ctx.data.path === '') throw badRequest('missing path');
    if (!isPlainObject(ctx.input) || Object.keys(ctx.input).length === 0) throw badRequest('missing data fields');
    if (ctx.data.path.endsWith('/')) throw badRequest('cannot write to a path ending in \'/\'');
    await kv.v1Write(prefixOf(ctx), ctx.data.path, ctx.input, current(ctx));
  }
}

function parseCas(options: Record<string, unknown> | undefined): number | undefined {
  if (!options || options.cas === undefined || options.cas === null) return undefined;
  const raw = options.cas;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 0) throw badRequest('error parsing check-and-set parameter');
  return n;
}

function parseVersions(value: unknown): number[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  const out: number[] = [];
  for (const item of items) {
    for (const part of String(item).split(',')) {
      const t = part.trim();
      if (t === '') continue;
      if (!/^\d+$/.test(t)) throw badRequest(`invalid version number ${JSON.stringify(t)}`);
      out.push(Number(t));
    }
  }
  return out;
}

const rootOnly = () => new Reply(404, { warnings: [ROOT_V2_PATH] });

export function createKvV2Paths(deps: { kv: KvService }): SecretsPathSpec[] {
  const { kv } = deps;
  const keyField = { path: { schema: str, in: 'path', required: true, description: 'Location of the secret.' } } as const;
  const versionsField = {
    ...keyField,
    versions: { schema: z.union([z.array(z.union([int, str])), int, str]), in: 'body', description: 'The versions to act on.' },
  } as const;
  const metadataFields = {
    ...keyField,
    max_versions: { schema: int, in: 'body', description: 'Versions to keep (0 = the mount setting, default 10).' },
    cas_required: { schema: bool, in: 'body', description: 'Require the cas option on writes.' },
    delete_version_after: { schema: durationField, in: 'body', description: 'Soft-delete versions after this long.' },
    custom_metadata: { schema: z.record(z.string(), z.unknown()).nullable(), in: 'body', description: 'User metadata (string values).' },
  } as const;

  return [
    secretsPath({
      pattern: 'config',
      summary: 'Backend-wide settings of the versioned KV store.',
      fields: {
        max_versions: metadataFields.max_versions,
        cas_required: metadataFields.cas_required,
        delete_version_after: metadataFields.delete_version_after,
      },
      operations: {
        async read(ctx) {
          const c = await kv.readConfig(prefixOf(ctx));
          return respondWith({ data: { cas_required: c.cas_required, delete_version_after: goDuration(c.delete_version_after), max_versions: c.max_versions } });
        },
        async update(ctx) {
          if (ctx.data.max_versions !== undefined && ctx.data.max_versions < 0) throw badRequest('max_versions must be greater than or equal to 0');
          const input: Record<string, unknown> = {};
          if (ctx.data.max_versions !== undefined) input.max_versions = ctx.data.max_versions;
          if (ctx.data.cas_required !== undefined) input.cas_required = ctx.data.cas_required;
          const dva = seconds(ctx.data.delete_version_after, 'delete_version_after');
          if (dva !== undefined) input.delete_version_after = dva;
          await kv.writeConfig(prefixOf(ctx), input);
        },
      },
    }),
    secretsPath({
      pattern: 'data/*path',
      summary: 'Write, patch, read and soft-delete versions of a secret.',
      fields: {
        ...keyField,
        version: { schema: int, in: 'body', description: 'Version to read (0 or absent = latest).' },
        data: { schema: z.unknown(), in: 'body', description: 'The secret: a JSON object.' },
        options: { schema: z.record(z.string(), z.unknown()), in: 'body', description: '`cas`: the current version, for check-and-set.' },
      },
      existenceCheck: existenceCheckOf((ctx) => kv.exists(prefixOf(ctx), ctx.rawParams.path ?? '')),
      operations: {
        async read(ctx) {
          if (ctx.data.path === '') return rootOnly();
          const result = await kv.read(prefixOf(ctx), ctx.data.path, ctx.data.version ?? 0);
          if (result instanceof Reply) return result;
          return respondWith({ data: result });
        },
        create: (ctx) => v2Write(ctx),
        update: (ctx) => v2Write(ctx),
        async patch(ctx) {
          if (ctx.data.path === '') return rootOnly();
          if (ctx.data.data === undefined || ctx.data.data === null) throw badRequest('no data provided');
          if (!isPlainObject(ctx.data.data)) throw badRequest('data must be a JSON object');
          const result = await kv.patch(prefixOf(ctx), ctx.data.path, ctx.data.data, parseCas(ctx.data.options));
          if (result instanceof Reply) return result;
          return respondWith({ data: result });
        },
        async delete(ctx) {
          if (ctx.data.path === '') return rootOnly();
          await kv.deleteLatest(prefixOf(ctx), ctx.data.path);
        },
      },
    }),
    secretsPath({
      pattern: 'delete/*path',
      summary: 'Soft-delete versions of a secret.',
      fields: versionsField,
      operations: {
        async update(ctx) {
          if (ctx.data.path === '') return rootOnly();
          await kv.deleteVersions(prefixOf(ctx), ctx.data.path, parseVersions(ctx.data.versions));
        },
      },
    }),
    secretsPath({
      pattern: 'undelete/*path',
      summary: 'Undelete soft-deleted versions of a secret.',
      fields: versionsField,
      operations: {
        async update(ctx) {
          if (ctx.data.path === '') return rootOnly();
          await kv.undeleteVersions(prefixOf(ctx), ctx.data.path, parseVersions(ctx.data.versions));
        },
      },
    }),
    secretsPath({
      pattern: 'destroy/*path',
      summary: 'Permanently remove versions of a secret.',
      fields: versionsField,
      operations: {
        async update(ctx) {
          if (ctx.data.path === '') return rootOnly();
          await kv.destroyVersions(prefixOf(ctx), ctx.data.path, parseVersions(ctx.data.versions));
        },
      },
    }),
    secretsPath({
      pattern: 'metadata/*path',
      summary: 'Key metadata and settings; LIST lists keys; DELETE removes every version.',
      fields: metadataFields,
      existenceCheck: existenceCheckOf((ctx) => kv.exists(prefixOf(ctx), ctx.rawParams.path ?? '')),
      operations: {
        async read(ctx) {
          if (ctx.data.path === '') return rootOnly();
          const meta = await kv.readMetadata(prefixOf(ctx), ctx.data.path);
          if (!meta) throw notFound();
          return respondWith({ data: meta });
        },
        async list(ctx) {
          return listResponse(await kv.list(prefixOf(ctx), dirOf(ctx.data.path)));
        },
        create: (ctx) => writeMetadata(ctx, false),
        update: (ctx) => writeMetadata(ctx, false),
        patch: (ctx) => writeMetadata(ctx, true),
        async delete(ctx) {
          if (ctx.data.path === '') return rootOnly();
          await kv.deleteMetadata(prefixOf(ctx), ctx.data.path);
        },
      },
    }),
    secretsPath({
      pattern: 'subkeys/*path',
      summary: 'The structure of a secret without its values.',
      fields: {
        ...keyField,
        version: { schema: int, in: 'query', description: 'Version (0 or absent = latest).' },
        depth: { schema: int, in: 'query', description: 'Nesting depth to report (0 = unlimited).' },
      },
      operations: {
        async read(ctx) {
          if (ctx.data.path === '') return rootOnly();
          if ((ctx.data.depth ?? 0) < 0) throw badRequest('depth must be a non-negative integer');
          const result = await kv.subkeys(prefixOf(ctx), ctx.data.path, ctx.data.version ?? 0, ctx.data.depth ?? 0);
          if (result instanceof Reply) return result;
          return respondWith({ data: result });
        },
      },
    }),
    secretsPath({
      pattern: '*path',
      summary: 'Any other path of a versioned mount is invalid (use data/, metadata/, ...).',
      fields: keyField,
      takesArbitraryInput: true,
      operations: {
        read: () => new Reply(404, { warnings: [INVALID_V2_PATH] }),
        list: () => new Reply(404, { warnings: [INVALID_V2_PATH] }),
        update: () => new Reply(404, { warnings: [INVALID_V2_PATH] }),
        patch: () => new Reply(404, { warnings: [INVALID_V2_PATH] }),
        delete: () => new Reply(404, { warnings: [INVALID_V2_PATH] }),
      },
    }),
  ];

  async function v2Write(ctx: SecretsOpContext<{ path: { schema: typeof str; in: 'path'; required: true; description: string }; data: { schema: z.ZodUnknown; in: 'body'; description: string }; options: { schema: z.ZodRecord<z.ZodString, z.ZodUnknown>; in: 'body'; description: string } }>) {
    if (ctx.data.path === '') return rootOnly();
    if (ctx.data.data === undefined || ctx.data.data === null) throw badRequest('no data provided');
    if (!isPlainObject(ctx.data.data)) throw badRequest('data must be a JSON object');
    if (ctx.data.path.endsWith('/')) throw badRequest("cannot write to a path ending in '/'");
    const info = await kv.write(prefixOf(ctx), ctx.data.path, ctx.data.data, parseCas(ctx.data.options));
    return respondWith({ data: info });
  }

  async function writeMetadata(ctx: SecretsOpContext<typeof metadataFields>, patch: boolean) {
    if (ctx.data.path === '') return rootOnly();
    if (ctx.data.path.endsWith('/')) throw badRequest("cannot write to a path ending in '/'");
    try {
      await kv.writeMetadata(
        prefixOf(ctx),
        ctx.data.path,
        {
          max_versions: ctx.data.max_versions,
          cas_required: ctx.data.cas_required,
          delete_version_after: seconds(ctx.data.delete_version_after, 'delete_version_after'),
          custom_metadata: ctx.data.custom_metadata,
        },
        patch,
      );
    } catch (err) {
      if (patch && err instanceof AppError && err.status === 404) return new Reply(404);
      throw err;
    }
    return undefined;
  }
}
