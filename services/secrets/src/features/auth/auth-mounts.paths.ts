// `sys/auth` routes (issue 28, item 5; reference §4.10): list, read, enable, disable and
// tune auth methods. Part of the sys table. As in Vault, every `sys/auth/<path>` route is
// root-protected (`sudo`); the listing is not.
import { z } from 'zod';
import { badRequest } from '../../core/errors';
import { secondsField } from '../../core/duration';
import { respondWith } from '../../http/logical-response';
import { secretsPath, type SecretsPathSpec } from '../../http/request-context';
import { normaliseMountPath as normal } from '../mounts/mounts.service';
import type { TokenService } from '../tokens/tokens.service';
import type { AuthMountService } from './auth-mounts.service';
import type { AuthMountEntry } from './auth-mounts.types';

const str = z.string();
const bool = z.boolean();
const duration = z.union([z.number(), z.string()]);
const SYSTEM_TTL = 2_764_800;

/** The built-in token auth method, always enabled. */
export const TOKEN_AUTH_MOUNT = {
  accessor: 'auth_token_00000000',
  config: { default_lease_ttl: 0, force_no_cache: false, max_lease_ttl: 0, token_type: 'default-service' },
  description: 'token based credentials',
  external_entropy_access: false,
  local: false,
  options: null,
  plugin_version: '',
  running_plugin_version: 'v1.15.0+builtin.vault',
  running_sha256: '',
  seal_wrap: false,
  type: 'token',
  uuid: '00000000-0000-0000-0000-000000000001',
};

export function renderAuthMount(m: AuthMountEntry): Record<string, unknown> {
  return {
    accessor: m.accessor,
    config: {
      default_lease_ttl: m.config.default_lease_ttl,
      force_no_cache: false,
      max_lease_ttl: m.config.max_lease_ttl,
      token_type: m.config.token_type,
      ...(m.config.listing_visibility !== '' ? { listing_visibility: m.config.listing_visibility } : {}),
    },
    description: m.description,
    external_entropy_access: false,
    local: m.local,
    options: null,
    plugin_version: '',
    running_plugin_version: 'v1.15.0+builtin.vault',
    running_sha256: '',
    seal_wrap: m.seal_wrap,
    type: m.type,
    uuid: m.uuid,
  };
}

/** Every auth method as `sys/auth` lists it, keys sorted as Go encodes a map. */
export function authMountListing(auth: AuthMountService): Record<string, unknown> {
  const entries: [string, unknown][] = [['token/', TOKEN_AUTH_MOUNT], ...auth.list().map((m): [string, unknown] => [m.path, renderAuthMount(m)])];
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function tuneData(m: AuthMountEntry | null): Record<string, unknown> {
  return {
    default_lease_ttl: m?.config.default_lease_ttl || SYSTEM_TTL,
    description: m ? m.description : TOKEN_AUTH_MOUNT.description,
    force_no_cache: false,
    max_lease_ttl: m?.config.max_lease_ttl || SYSTEM_TTL,
    options: null,
    token_type: m ? m.config.token_type : 'default-service',
  };
}

export function createAuthMountPaths(deps: { auth: AuthMountService; tokens: TokenService }): SecretsPathSpec[] {
  const { auth, tokens } = deps;
  const pathField = { path: { schema: str, in: 'path', required: true, description: 'Path of the auth method, relative to `auth/` (`userpass/`).' } } as const;
  const tuneFields = {
    ...pathField,
    description: { schema: str, in: 'body', description: 'Human-friendly description.' },
    default_lease_ttl: { schema: duration, in: 'body', description: 'Default TTL of the tokens its logins issue.' },
    max_lease_ttl: { schema: duration, in: 'body', description: 'Longest TTL of the tokens its logins issue.' },
    token_type: { schema: str, in: 'body', description: '`default-service` or `service` (batch tokens are not supported).' },
    listing_visibility: { schema: str, in: 'body', description: '`unauth` or `hidden` (UI listing only).' },
  } as const;

  const readTune = async (path: string) => {
    if (normal(path) === 'token/') return respondWith({ data: tuneData(null) });
    const m = await auth.lookup(path);
    if (!m) throw badRequest(`cannot fetch sysview for path ${JSON.stringify(`auth/${normal(path)}`)}`);
    return respondWith({ data: tuneData(m) });
  };
  const tune = async (path: string, d: { description?: string; default_lease_ttl?: number | string; max_lease_ttl?: number | string; token_type?: string; listing_visibility?: string }) => {
    if (normal(path) === 'token/') throw badRequest('the token auth method cannot be tuned by this server');
    await auth.tune(path, {
      description: d.description,
      default_lease_ttl: secondsField(d.default_lease_ttl, 'default_lease_ttl'),
      max_lease_ttl: secondsField(d.max_lease_ttl, 'max_lease_ttl'),
      token_type: d.token_type,
      listing_visibility: d.listing_visibility,
    });
  };

  return [
    secretsPath({
      pattern: 'auth',
      summary: 'List the enabled auth methods.',
      operations: {
        async read() {
          // A listing answers from storage, not from what the bus has told this replica.
          await auth.refresh();
          return respondWith({ data: authMountListing(auth), injectTopLevel: true });
        },
      },
    }),
    secretsPath({
      pattern: 'auth/:path/tune',
      summary: 'Read or tune an auth method.',
      sudo: true,
      fields: tuneFields,
      operations: {
        read: (ctx) => readTune(ctx.data.path),
        async update(ctx) {
          await tune(ctx.data.path, ctx.data);
        },
      },
    }),
    secretsPath({
      pattern: 'auth/*path',
      summary: 'Enable, read or disable an auth method at a path.',
      sudo: true,
      fields: {
        ...pathField,
        type: { schema: str, in: 'body', description: 'Auth method type: `userpass` or `approle`.' },
        description: tuneFields.description,
        config: { schema: z.record(z.string(), z.unknown()), in: 'body', description: '`default_lease_ttl`, `max_lease_ttl`, `token_type`, `listing_visibility`.' },
        local: { schema: bool, in: 'body', description: 'Accepted for compatibility (no replication).' },
        seal_wrap: { schema: bool, in: 'body', description: 'Accepted for compatibility.' },
        options: { schema: z.record(z.string(), z.unknown()).nullable(), in: 'body', description: 'Not used by userpass or approle.' },
        plugin_name: { schema: str, in: 'body', description: 'Deprecated alias of type.' },
        plugin_version: { schema: str, in: 'body', description: 'Must be empty (builtin methods only).' },
      },
      operations: {
        async read(ctx) {
          const path = ctx.data.path;
          if (path.endsWith('/tune')) return readTune(path.slice(0, -'/tune'.length));
          if (normal(path) === 'token/') return respondWith({ data: TOKEN_AUTH_MOUNT, injectTopLevel: true });
          const m = await auth.lookup(path);
          if (!m) throw badRequest(`No auth engine at ${normal(path)}`);
          return respondWith({ data: renderAuthMount(m), injectTopLevel: true });
        },
        async update(ctx) {
          const d = ctx.data;
          if (d.path.endsWith('/tune')) {
            await tune(d.path.slice(0, -'/tune'.length), d);
            return;
          }
          if ((d.plugin_version ?? '') !== '') throw badRequest('plugin versions are not supported: builtin auth methods only');
          const config = d.config ?? {};
          const text = (v: unknown, name: string): string | undefined => {
            if (v === undefined) return undefined;
            if (typeof v !== 'string') throw badRequest(`invalid value for "config.${name}": expected a string`);
            return v;
          };
          await auth.enable(d.path, {
            type: d.type ?? d.plugin_name ?? '',
            description: d.description,
            config: {
              default_lease_ttl: secondsField(config.default_lease_ttl, 'config.default_lease_ttl'),
              max_lease_ttl: secondsField(config.max_lease_ttl, 'config.max_lease_ttl'),
              token_type: text(config.token_type, 'token_type'),
              listing_visibility: text(config.listing_visibility, 'listing_visibility'),
            },
            local: d.local,
            seal_wrap: d.seal_wrap,
          });
        },
        async delete(ctx) {
          const removed = await auth.disable(ctx.data.path);
          // Vault revokes every token the method's logins issued when it is disabled.
          if (removed) await tokens.revokeByAuthMount(removed.uuid);
        },
      },
    }),
  ];
}
