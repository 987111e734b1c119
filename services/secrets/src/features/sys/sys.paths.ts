// sys/ routes (issue 3, items 1, 4, 5; reference §4). Two tables: the raw handlers that
// work without a token and while sealed (init, seal-status, unseal, health, leader; their
// results are written as bare JSON bodies by writeRaw, a Reply where the status is not
// 200), and the logical ones (envelope, token + ACL).
import { z } from 'zod';
import { Reply } from '@selfstack/http-kit';
import { badRequest, notFound, SecretsError } from '../../core/errors';
import { secondsField } from '../../core/duration';
import { respondWith } from '../../http/logical-response';
import { commaList, secretsPath, type SecretsPathSpec } from '../../http/request-context';
import type { MountService } from '../mounts/mounts.service';
import type { MountEntry } from '../mounts/mounts.types';
import { normalisePolicyName, type PolicyService } from '../policies/policies.service';
import type { SysService } from './sys.service';
import { authMountListing } from '../auth/auth-mounts.paths';
import type { AuthMountService } from '../auth/auth-mounts.service';
import type { NamespaceService } from '../namespaces/namespaces.service';
import type { NamespaceEntry } from '../namespaces/namespaces.types';

/** Root help of `sys/` (`GET /v1/sys?help=1`). */
export const SYS_HELP =
  'The system backend is built in and cannot be disabled or moved. Its paths configure and operate the server itself: initialization, sealing and unsealing, health and leader status, secrets engine mounts, auth methods, policies, capabilities, CORS and the OpenAPI document of the API.';

const int = z.number().int();
const bool = z.boolean();
const str = z.string();
const durationField = z.union([z.number(), z.string()]);

const seconds = secondsField;

export function createSysRawPaths(deps: { sys: SysService }): SecretsPathSpec[] {
  const { sys } = deps;
  return [
    secretsPath({
      pattern: 'init',
      summary: 'Initialize a new server (GET reports whether it is initialized).',
      unauthenticated: true,
      fields: {
        secret_shares: { schema: int, in: 'body', description: 'Number of key shares to split the root key into.' },
        secret_threshold: { schema: int, in: 'body', description: 'Number of key shares required to reconstruct the root key.' },
        pgp_keys: { schema: z.array(str), in: 'body', description: 'Not supported: must be empty.' },
        root_token_pgp_key: { schema: str, in: 'body', description: 'Not supported: must be empty.' },
        stored_shares: { schema: int, in: 'body', description: 'Ignored (auto-unseal only).' },
        recovery_shares: { schema: int, in: 'body', description: 'Ignored (auto-unseal only).' },
        recovery_threshold: { schema: int, in: 'body', description: 'Ignored (auto-unseal only).' },
        recovery_pgp_keys: { schema: z.array(str), in: 'body', description: 'Ignored (auto-unseal only).' },
      },
      operations: {
        async read() {
          const status = await sys.sealStatus();
          return { initialized: status.initialized };
        },
        async update(ctx) {
          if ((ctx.data.pgp_keys?.length ?? 0) > 0 || (ctx.data.root_token_pgp_key ?? '') !== '') {
            throw badRequest('PGP-encrypted key shares are not supported by this server');
          }
          const result = await sys.initialize(ctx.data.secret_shares ?? 0, ctx.data.secret_threshold ?? 0);
          return result;
        },
      },
    }),
    secretsPath({
      pattern: 'seal-status',
      summary: 'Check the seal status.',
      unauthenticated: true,
      operations: {
        async read() {
          return sys.sealStatus();
        },
      },
    }),
    secretsPath({
      pattern: 'unseal',
      summary: 'Submit one unseal key share (or reset the progress).',
      unauthenticated: true,
      fields: {
        key: { schema: str, in: 'body', description: 'One key share, hex or base64.' },
        reset: { schema: bool, in: 'body', description: 'Discard the shares submitted so far.' },
        migrate: { schema: bool, in: 'body', description: 'Ignored (seal migration is not supported).' },
      },
      operations: {
        async update(ctx) {
          return sys.unseal(ctx.data.key, ctx.data.reset ?? false);
        },
      },
    }),
    secretsPath({
      pattern: 'health',
      summary: 'Health status: 200 active, 429 standby, 472 DR secondary, 473 performance standby, 501 not initialized, 503 sealed.',
      unauthenticated: true,
      fields: {
        standbyok: { schema: bool, in: 'query', description: 'Answer activecode on a standby.' },
        perfstandbyok: { schema: bool, in: 'query', description: 'Answer activecode on a performance standby.' },
        activecode: { schema: int, in: 'query', description: 'Status for an active node (default 200).' },
        standbycode: { schema: int, in: 'query', description: 'Status for a standby (default 429).' },
        drsecondarycode: { schema: int, in: 'query', description: 'Status for a DR secondary (default 472).' },
        performancestandbycode: { schema: int, in: 'query', description: 'Status for a performance standby (default 473).' },
        sealedcode: { schema: int, in: 'query', description: 'Status when sealed (default 503).' },
        uninitcode: { schema: int, in: 'query', description: 'Status when not initialized (default 501).' },
      },
      operations: {
        async read(ctx) {
          const h = await sys.health();
          // This server has no standbys or replication: only init/seal/active apply.
          const status = !h.initialized ? ctx.data.uninitcode ?? 501 : h.sealed ? ctx.data.sealedcode ?? 503 : ctx.data.activecode ?? 200;
          if (status < 100 || status > 599) throw badRequest('invalid status code');
          return new Reply(status, h.body);
        },
      },
    }),
    secretsPath({
      pattern: 'leader',
      summary: 'High-availability status (this server runs without HA: every replica serves).',
      unauthenticated: true,
      operations: {
        read() {
          return {
            ha_enabled: false,
            is_self: false,
            active_time: '0001-01-01T00:00:00Z',
            leader_address: '',
            leader_cluster_address: '',
            performance_standby: false,
            performance_standby_last_remote_wal: 0,
          };
        },
      },
    }),
  ];
}

export const SYS_MOUNT = {
  accessor: 'system_00000000',
  config: { default_lease_ttl: 0, force_no_cache: false, max_lease_ttl: 0, passthrough_request_headers: ['Accept'] },
  description: 'system endpoints used for control, policy and debugging',
  external_entropy_access: false,
  local: false,
  options: null,
  plugin_version: '',
  running_plugin_version: 'v1.15.0+builtin.vault',
  running_sha256: '',
  seal_wrap: true,
  type: 'system',
  uuid: '00000000-0000-0000-0000-000000000000',
};

export function renderMount(m: MountEntry): Record<string, unknown> {
  return {
    accessor: m.accessor,
    config: { default_lease_ttl: m.config.default_lease_ttl, force_no_cache: m.config.force_no_cache, max_lease_ttl: m.config.max_lease_ttl },
    description: m.description,
    external_entropy_access: m.external_entropy_access,
    local: m.local,
    options: { version: m.options.version },
    plugin_version: '',
    running_plugin_version: 'v0.16.1+builtin',
    running_sha256: '',
    seal_wrap: m.seal_wrap,
    type: m.type,
    uuid: m.uuid,
  };
}


function tuneBody(m: MountEntry): Record<string, unknown> {
  return {
    default_lease_ttl: m.config.default_lease_ttl || 2_764_800,
    description: m.description,
    force_no_cache: m.config.force_no_cache,
    max_lease_ttl: m.config.max_lease_ttl || 2_764_800,
    options: { version: m.options.version },
  };
}

export function createSysPaths(deps: {
  sys: SysService;
  mounts: MountService;
  policies: PolicyService;
  auth: AuthMountService;
  /**
   * Namespaces (issue 28, item 1): `sys/internal/ui/mounts/<path>` follows a `<path>` that
   * starts with child namespaces to the mount there, as Vault's router does.
   */
  namespaces?: NamespaceService;
}): SecretsPathSpec[] {
  const { sys, mounts, policies, auth, namespaces } = deps;

  /** Reference §4.8: the legacy list appends `root` in the root namespace only. */
  const legacyPolicyList = async (here: NamespaceEntry): Promise<string[]> => {
    const names = await policies.list();
    return here.path === '' ? [...names, 'root'] : names;
  };

  /** The mount table `path` falls in (the request namespace's or a child's) and the child's path relative to it. */
  const mountsOf = async (here: NamespaceEntry, path: string): Promise<{ table: MountService; prefix: string; rest: string }> => {
    if (!namespaces || !namespaces.any()) return { table: mounts, prefix: '', rest: path };
    const r = await namespaces.resolve(here.path, path);
    if (!r || r.ns.path === here.path) return { table: mounts, prefix: '', rest: path };
    return { table: (await namespaces.scope(r.ns)).mounts, prefix: r.ns.path.slice(here.path.length), rest: r.path };
  };

  const mountFields = {
    path: { schema: str, in: 'path', required: true, description: 'Mount path (`secret/`); `<path>/tune` reads or tunes it.' },
    type: { schema: str, in: 'body', description: 'Engine type: `kv` (or `kv-v2`).' },
    description: { schema: str, in: 'body', description: 'Human-friendly description.' },
    config: { schema: z.record(z.string(), z.unknown()), in: 'body', description: '`default_lease_ttl`, `max_lease_ttl`, `force_no_cache`.' },
    options: { schema: z.record(z.string(), z.unknown()).nullable(), in: 'body', description: 'Engine options: `version` "1" or "2".' },
    local: { schema: bool, in: 'body', description: 'Accepted for compatibility (no replication).' },
    seal_wrap: { schema: bool, in: 'body', description: 'Accepted for compatibility.' },
    external_entropy_access: { schema: bool, in: 'body', description: 'Accepted for compatibility.' },
    plugin_name: { schema: str, in: 'body', description: 'Deprecated alias of type.' },
    plugin_version: { schema: str, in: 'body', description: 'Must be empty (builtin engines only).' },
    default_lease_ttl: { schema: durationField, in: 'body', description: 'Tune: default lease TTL.' },
    max_lease_ttl: { schema: durationField, in: 'body', description: 'Tune: maximum lease TTL.' },
  } as const;

  const tune = async (path: string, data: { description?: string; default_lease_ttl?: unknown; max_lease_ttl?: unknown; options?: Record<string, unknown> | null }) => {
    await mounts.tune(path, {
      description: data.description,
      default_lease_ttl: seconds(data.default_lease_ttl, 'default_lease_ttl'),
      max_lease_ttl: seconds(data.max_lease_ttl, 'max_lease_ttl'),
      options: data.options ?? undefined,
    });
  };
  const tunePath = (path: string): string | null => (path.endsWith('/tune') ? path.slice(0, -'/tune'.length) : null);
  const readTune = async (path: string) => {
    const m = await mounts.lookup(path);
    if (!m) throw badRequest(`cannot fetch sysview for path ${JSON.stringify(path.endsWith('/') ? path : `${path}/`)}`);
    return respondWith({ data: tuneBody(m) });
  };

  const policyName = { name: { schema: str, in: 'path', required: true, description: 'Policy name (case-insensitive).' } } as const;

  return [
    secretsPath({
      pattern: 'mounts',
      summary: 'List the mounted secrets engines.',
      operations: {
        async read() {
          // A listing answers from storage, not from what the bus has told this replica.
          await mounts.refresh();
          const data: Record<string, unknown> = { 'sys/': SYS_MOUNT };
          for (const m of mounts.list()) data[m.path] = renderMount(m);
          return respondWith({ data, injectTopLevel: true });
        },
      },
    }),
    secretsPath({
      pattern: 'mounts/:path/tune',
      summary: 'Read or tune a mount.',
      fields: {
        path: mountFields.path,
        description: mountFields.description,
        default_lease_ttl: mountFields.default_lease_ttl,
        max_lease_ttl: mountFields.max_lease_ttl,
        options: mountFields.options,
      },
      operations: {
        read: (ctx) => readTune(ctx.data.path),
        async update(ctx) {
          await tune(ctx.data.path, ctx.data);
        },
      },
    }),
    secretsPath({
      pattern: 'mounts/*path',
      summary: 'Enable, read or disable a secrets engine at a path.',
      fields: mountFields,
      operations: {
        async read(ctx) {
          const t = tunePath(ctx.data.path);
          if (t !== null) return readTune(t);
          const m = await mounts.lookup(ctx.data.path);
          if (!m) throw badRequest(`No secret engine mount at ${ctx.data.path.endsWith('/') ? ctx.data.path : `${ctx.data.path}/`}`);
          return respondWith({ data: renderMount(m), injectTopLevel: true });
        },
        async update(ctx) {
          const t = tunePath(ctx.data.path);
          if (t !== null && (await mounts.lookup(t))) {
            await tune(t, ctx.data);
            return;
          }
          if ((ctx.data.plugin_version ?? '') !== '') throw badRequest('plugin versions are not supported: builtin engines only');
          // A mount may not take the name of a child namespace (the path-prefix form could
          // not tell them apart).
          const first = ctx.data.path.split('/').find((p) => p !== '');
          if (first !== undefined && namespaces?.get(`${ctx.extra.namespace.path}${first}/`)) throw badRequest(`path is already in use at ${first}/`);
          const config = ctx.data.config ?? {};
          await mounts.enable(ctx.data.path, {
            type: ctx.data.type ?? ctx.data.plugin_name ?? '',
            description: ctx.data.description,
            config: {
              default_lease_ttl: seconds(config.default_lease_ttl, 'config.default_lease_ttl'),
              max_lease_ttl: seconds(config.max_lease_ttl, 'config.max_lease_ttl'),
              force_no_cache: config.force_no_cache === true,
            },
            options: ctx.data.options,
            local: ctx.data.local,
            seal_wrap: ctx.data.seal_wrap,
            external_entropy_access: ctx.data.external_entropy_access,
          });
        },
        async delete(ctx) {
          await mounts.disable(ctx.data.path);
        },
      },
    }),
    secretsPath({
      pattern: 'policy',
      summary: 'List the ACL policies (legacy API).',
      operations: {
        async read(ctx) {
          const keys = await legacyPolicyList(ctx.extra.namespace);
          return respondWith({ data: { keys, policies: keys }, injectTopLevel: true });
        },
        async list(ctx) {
          const keys = await legacyPolicyList(ctx.extra.namespace);
          return respondWith({ data: { keys, policies: keys }, injectTopLevel: true });
        },
      },
    }),
    secretsPath({
      pattern: 'policy/:name',
      summary: 'Read, write or delete an ACL policy (legacy API; field `rules`).',
      fields: {
        ...policyName,
        policy: { schema: str, in: 'body', description: 'The policy document (HCL or JSON).' },
        rules: { schema: str, in: 'body', description: 'Legacy name of `policy`.' },
      },
      operations: {
        async read(ctx) {
          const name = normalisePolicyName(ctx.data.name);
          const p = await policies.get(name);
          if (!p) throw notFound();
          return respondWith({ data: { name: p.name, rules: p.policy }, injectTopLevel: true });
        },
        async update(ctx) {
          await policies.set(normalisePolicyName(ctx.data.name), ctx.data.policy ?? ctx.data.rules ?? '');
        },
        async delete(ctx) {
          await policies.delete(normalisePolicyName(ctx.data.name));
        },
      },
    }),
    secretsPath({
      pattern: 'policies/acl',
      summary: 'List the ACL policies.',
      operations: {
        async list() {
          return respondWith({ data: { keys: await policies.list() } });
        },
      },
    }),
    secretsPath({
      pattern: 'policies/acl/:name',
      summary: 'Read, write or delete an ACL policy.',
      fields: {
        ...policyName,
        policy: { schema: str, in: 'body', description: 'The policy document (HCL or JSON).' },
      },
      operations: {
        async read(ctx) {
          const p = await policies.get(normalisePolicyName(ctx.data.name));
          if (!p) throw notFound();
          return respondWith({ data: { name: p.name, policy: p.policy } });
        },
        async update(ctx) {
          await policies.set(normalisePolicyName(ctx.data.name), ctx.data.policy ?? '');
        },
        async delete(ctx) {
          await policies.delete(normalisePolicyName(ctx.data.name));
        },
      },
    }),
    secretsPath({
      pattern: 'capabilities-self',
      summary: "The calling token's capabilities on the given paths.",
      fields: {
        paths: { schema: z.union([z.array(str), str]), in: 'body', description: 'Paths to check.' },
        path: { schema: z.union([z.array(str), str]), in: 'body', description: 'Deprecated: single path.' },
      },
      operations: {
        update(ctx) {
          const paths = [...commaList(ctx.data.paths), ...commaList(ctx.data.path)];
          if (paths.length === 0) throw badRequest("'paths' must be specified");
          const acl = ctx.extra.acl;
          const data: Record<string, unknown> = {};
          for (const p of paths) {
            const clean = p.replace(/^\/+/, '');
            data[p] = acl ? acl.capabilityNames(ctx.extra.aclPrefix + clean) : ['deny'];
          }
          if (paths.length === 1) data.capabilities = data[paths[0] as string];
          return respondWith({ data, injectTopLevel: true });
        },
      },
    }),
    secretsPath({
      pattern: 'seal',
      summary: 'Seal this replica (root or sudo on sys/seal).',
      sudo: true,
      operations: {
        update() {
          sys.seal();
        },
      },
    }),
    secretsPath({
      pattern: 'internal/ui/mounts/*path',
      summary: 'Mount information for a path (used by CLIs to detect the KV version).',
      fields: { path: { schema: str, in: 'path', required: true, description: 'A path inside a mount.' } },
      operations: {
        async read(ctx) {
          // Issue 33: as the anchor (logical_system.go, hasMountAccess), only mounts the
          // caller's policies reach: any capability on the mount path or on a path under
          // it. The single-mount form answers 403 for a mount the caller cannot reach and
          // for a path under no mount alike, so it cannot be used to probe for mounts.
          const acl = ctx.extra.acl;
          const reaches = (mountPath: string): boolean => acl !== null && acl.hasMountAccess(ctx.extra.aclPrefix + mountPath);
          if (ctx.data.path === '') {
            await mounts.refresh();
            const secret: Record<string, unknown> = {};
            for (const m of mounts.list()) if (reaches(m.path)) secret[m.path] = renderMount(m);
            await auth.refresh();
            const methods: Record<string, unknown> = {};
            for (const [path, entry] of Object.entries(authMountListing(auth))) if (reaches(`auth/${path}`)) methods[path] = entry;
            return respondWith({ data: { auth: methods, secret } });
          }
          const where = await mountsOf(ctx.extra.namespace, ctx.data.path);
          const m = await where.table.resolve(where.rest);
          if (!m || !reaches(where.prefix + m.path)) {
            const shown = ctx.data.path.endsWith('/') ? ctx.data.path : `${ctx.data.path}/`;
            throw new SecretsError(403, [`preflight capability check returned 403, please ensure client's policies grant access to path ${JSON.stringify(shown)}`]);
          }
          return respondWith({ data: { ...renderMount(m), path: where.prefix + m.path } });
        },
      },
    }),
  ];
}
