// Routes of an AppRole mount, relative to `auth/<mount>/` (issue 28, item 5; reference
// §5.5): roles CRUD, the role ID, secret IDs (generate, list, lookup, destroy, by value
// or by accessor), tidy, and the login, which needs no token.
import { z } from 'zod';
import { badRequest, notFound } from '../../core/errors';
import { rfc3339, secondsField } from '../../core/duration';
import { respondWith } from '../../http/logical-response';
import { commaList, secretsPath, type SecretsOpContext, type SecretsPathSpec } from '../../http/request-context';
import { authBlock } from '../tokens/tokens.paths';
import type { AuthMountEntry } from '../auth/auth-mounts.types';
import { applyTokenFields, TOKEN_FIELDS, tokenSettingsData, type LoginIssuer } from '../auth/token-settings';
import type { AppRoleService, RoleEntry, SecretIdEntry } from './approle.service';

/** Root help of an approle mount (`GET /v1/auth/<path>?help=1`). */
export const APPROLE_HELP =
  'The AppRole auth method lets machines and applications log in with a role ID and a secret ID. Roles are created under `role/` with their policies, token settings and secret ID constraints (TTL, use limit, CIDR lists); `login` needs no token and returns a client token in the `auth` block.';

// Vault's framework.GenericNameRegex for role names.
const ROLE_NAME = /^\w(?:[\w\-.]*\w)?$/;
const str = z.string();
const list = z.union([z.array(str), str]);
const duration = z.union([z.number(), z.string()]);
const ZERO_TIME = '0001-01-01T00:00:00Z';

const roleField = { role_name: { schema: str.regex(ROLE_NAME, 'invalid role name'), in: 'path', required: true, description: 'Name of the role.' } } as const;
const secretIdField = { secret_id: { schema: str, in: 'body', description: 'The secret ID.' } } as const;
const accessorField = { secret_id_accessor: { schema: str, in: 'body', description: 'Accessor of the secret ID.' } } as const;

function mountOf(ctx: SecretsOpContext): AuthMountEntry {
  const m = ctx.extra.authMount;
  if (!m) throw new Error('approle route without its auth mount');
  return m;
}

function roleData(role: RoleEntry): Record<string, unknown> {
  return {
    bind_secret_id: role.bindSecretId,
    local_secret_ids: false,
    secret_id_bound_cidrs: [],
    secret_id_num_uses: role.secretIdNumUses,
    secret_id_ttl: role.secretIdTtl,
    ...tokenSettingsData(role.token),
  };
}

function secretIdData(e: SecretIdEntry): Record<string, unknown> {
  return {
    cidr_list: [],
    creation_time: rfc3339(e.creationMs),
    expiration_time: e.expirationMs === null ? ZERO_TIME : rfc3339(e.expirationMs),
    last_updated_time: rfc3339(e.lastUpdatedMs),
    metadata: e.metadata,
    secret_id_accessor: e.accessor,
    secret_id_num_uses: e.numUses,
    secret_id_ttl: e.ttl,
    token_bound_cidrs: [],
  };
}

/** Vault's `metadata` on secret-id generation: a JSON object of strings, sent as a string. */
function parseMetadata(raw: string | undefined): Record<string, string> {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest('failed to parse metadata: not a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw badRequest('failed to parse metadata: must be a JSON object of strings');
  }
  return parsed as Record<string, string>;
}

export function createAppRolePaths(deps: { approle: AppRoleService; issuer: LoginIssuer }): SecretsPathSpec[] {
  const { approle, issuer } = deps;
  const roleFields = {
    ...roleField,
    bind_secret_id: { schema: z.boolean(), in: 'body', description: 'Require a secret ID at login (default true; false is refused: no CIDR bindings here).' },
    secret_id_num_uses: { schema: z.number().int(), in: 'body', description: 'Uses of each secret ID (0 = unlimited).' },
    secret_id_ttl: { schema: duration, in: 'body', description: 'Lifetime of each secret ID (0 = no expiry).' },
    secret_id_bound_cidrs: { schema: list, in: 'body', description: 'Not supported (must be empty).' },
    bound_cidr_list: { schema: list, in: 'body', description: 'Deprecated alias of secret_id_bound_cidrs (must be empty).' },
    local_secret_ids: { schema: z.boolean(), in: 'body', description: 'Accepted as false only (no replication).' },
    role_id: { schema: str, in: 'body', description: 'A custom role ID (default: a random UUID).' },
    ...TOKEN_FIELDS,
  } as const;
  type RoleCtx = SecretsOpContext<typeof roleFields>;

  const writeRole = async (ctx: RoleCtx): Promise<void> => {
    const d = ctx.data;
    if (commaList(d.secret_id_bound_cidrs ?? d.bound_cidr_list).length > 0) throw badRequest('secret_id_bound_cidrs is not supported by this server');
    if (d.local_secret_ids === true) throw badRequest('local_secret_ids is not supported by this server');
    await approle.writeRole(mountOf(ctx), d.role_name, {
      roleId: d.role_id,
      bindSecretId: d.bind_secret_id,
      secretIdNumUses: d.secret_id_num_uses,
      secretIdTtl: secondsField(d.secret_id_ttl, 'secret_id_ttl'),
      token: (cur) => applyTokenFields(cur, d),
    });
  };

  const generate = async (
    ctx: SecretsOpContext,
    data: { role_name: string; secret_id?: string; metadata?: string; ttl?: number | string; num_uses?: number; cidr_list?: string | string[]; token_bound_cidrs?: string | string[] },
  ) => {
    if (commaList(data.cidr_list).length > 0 || commaList(data.token_bound_cidrs).length > 0) throw badRequest('CIDR bindings are not supported by this server');
    const { secretId, entry } = await approle.generateSecretId(mountOf(ctx), data.role_name, {
      secretId: data.secret_id,
      ttl: secondsField(data.ttl, 'ttl'),
      numUses: data.num_uses,
      metadata: parseMetadata(data.metadata),
    });
    return respondWith({ data: { secret_id: secretId, secret_id_accessor: entry.accessor, secret_id_num_uses: entry.numUses, secret_id_ttl: entry.ttl } });
  };
  const generateFields = {
    ...roleField,
    metadata: { schema: str, in: 'body', description: 'JSON object of string metadata, shown on lookup.' },
    ttl: { schema: duration, in: 'body', description: "Lifetime of this secret ID (at most the role's secret_id_ttl)." },
    num_uses: { schema: z.number().int(), in: 'body', description: "Uses of this secret ID (at most the role's secret_id_num_uses)." },
    cidr_list: { schema: list, in: 'body', description: 'Not supported (must be empty).' },
    token_bound_cidrs: { schema: list, in: 'body', description: 'Not supported (must be empty).' },
  } as const;

  return [
    secretsPath({
      pattern: 'role',
      summary: 'List the roles.',
      operations: {
        async list(ctx) {
          const keys = await approle.listRoles(mountOf(ctx));
          if (keys.length === 0) throw notFound();
          return respondWith({ data: { keys } });
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name',
      summary: 'Create, read, update or delete a role.',
      fields: roleFields,
      existenceCheck: async (ctx) => (await approle.getRole(mountOf(ctx as SecretsOpContext), ctx.rawParams.role_name ?? '')) !== null,
      operations: {
        async read(ctx) {
          const role = await approle.getRole(mountOf(ctx), ctx.data.role_name);
          if (!role) throw notFound();
          return respondWith({ data: roleData(role) });
        },
        create: writeRole,
        update: writeRole,
        async delete(ctx) {
          await approle.deleteRole(mountOf(ctx), ctx.data.role_name);
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/role-id',
      summary: 'Read or set the role ID of a role.',
      fields: { ...roleField, role_id: { schema: str, in: 'body', description: 'The new role ID.' } },
      operations: {
        async read(ctx) {
          const role = await approle.getRole(mountOf(ctx), ctx.data.role_name);
          if (!role) throw notFound();
          return respondWith({ data: { role_id: role.roleId } });
        },
        async update(ctx) {
          if (!ctx.data.role_id) throw badRequest('missing role_id');
          await approle.setRoleId(mountOf(ctx), ctx.data.role_name, ctx.data.role_id);
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/secret-id',
      summary: 'Generate a secret ID for a role, or list the accessors of its secret IDs.',
      fields: generateFields,
      operations: {
        async list(ctx) {
          const keys = await approle.listSecretIdAccessors(mountOf(ctx), ctx.data.role_name);
          if (keys.length === 0) throw notFound();
          return respondWith({ data: { keys } });
        },
        update: (ctx) => generate(ctx, ctx.data),
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/custom-secret-id',
      summary: 'Register a secret ID chosen by the caller.',
      fields: { ...generateFields, ...secretIdField },
      operations: {
        async update(ctx) {
          if (!ctx.data.secret_id) throw badRequest('missing secret_id');
          return generate(ctx, ctx.data);
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/secret-id/lookup',
      summary: 'Read the properties of a secret ID (never the secret ID itself).',
      fields: { ...roleField, ...secretIdField },
      operations: {
        async update(ctx) {
          if (!ctx.data.secret_id) throw badRequest('missing secret_id');
          const e = await approle.lookupSecretId(mountOf(ctx), ctx.data.role_name, ctx.data.secret_id);
          // Vault answers an unknown secret ID with no content.
          return e ? respondWith({ data: secretIdData(e) }) : undefined;
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/secret-id/destroy',
      summary: 'Destroy a secret ID.',
      fields: { ...roleField, ...secretIdField },
      operations: {
        async update(ctx) {
          if (!ctx.data.secret_id) throw badRequest('missing secret_id');
          await approle.destroySecretId(mountOf(ctx), ctx.data.role_name, ctx.data.secret_id);
        },
        async delete(ctx) {
          if (!ctx.data.secret_id) throw badRequest('missing secret_id');
          await approle.destroySecretId(mountOf(ctx), ctx.data.role_name, ctx.data.secret_id);
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/secret-id-accessor/lookup',
      summary: 'Read the properties of a secret ID by its accessor.',
      fields: { ...roleField, ...accessorField },
      operations: {
        async update(ctx) {
          if (!ctx.data.secret_id_accessor) throw badRequest('missing secret_id_accessor');
          const e = await approle.lookupAccessor(mountOf(ctx), ctx.data.role_name, ctx.data.secret_id_accessor);
          if (!e) throw badRequest(`failed to find accessor entry for secret_id_accessor: ${JSON.stringify(ctx.data.secret_id_accessor)}`);
          return respondWith({ data: secretIdData(e) });
        },
      },
    }),
    secretsPath({
      pattern: 'role/:role_name/secret-id-accessor/destroy',
      summary: 'Destroy a secret ID by its accessor.',
      fields: { ...roleField, ...accessorField },
      operations: {
        async update(ctx) {
          if (!ctx.data.secret_id_accessor) throw badRequest('missing secret_id_accessor');
          await approle.destroyAccessor(mountOf(ctx), ctx.data.role_name, ctx.data.secret_id_accessor);
        },
        async delete(ctx) {
          if (!ctx.data.secret_id_accessor) throw badRequest('missing secret_id_accessor');
          await approle.destroyAccessor(mountOf(ctx), ctx.data.role_name, ctx.data.secret_id_accessor);
        },
      },
    }),
    secretsPath({
      pattern: 'tidy/secret-id',
      summary: 'Delete expired secret IDs.',
      operations: {
        async update(ctx) {
          const removed = await approle.tidy(mountOf(ctx));
          return respondWith({ warnings: [`Tidy operation removed ${removed} expired secret IDs.`] });
        },
      },
    }),
    secretsPath({
      pattern: 'login',
      summary: 'Log in with a role ID and a secret ID.',
      unauthenticated: true,
      fields: {
        role_id: { schema: str, in: 'body', description: 'Role ID of the role.' },
        ...secretIdField,
      },
      operations: {
        async update(ctx) {
          const mount = mountOf(ctx);
          if (!ctx.data.role_id) throw badRequest('missing role_id');
          const role = await approle.login(mount, ctx.data.role_id, ctx.data.secret_id);
          if (!role) throw badRequest('invalid role or secret ID');
          const { id, entry } = await issuer.issue({
            mount,
            settings: role.token,
            path: `auth/${mount.path}login`,
            displayName: mount.path.replace(/\/$/, '').replace(/\//g, '-'),
            meta: { role_name: role.name },
          });
          return respondWith({ auth: authBlock(id, entry) });
        },
      },
    }),
  ];
}
