// auth/token/ routes (issue 3, item 3; reference §5). Responses carry the `auth` block in
// Vault's field order; lookups answer the token's properties under `data`.
import { z } from 'zod';
import { badRequest, invalidToken, notFound, permissionDenied } from '../../core/errors';
import { rfc3339, secondsField } from '../../core/duration';
import { respondWith } from '../../http/logical-response';
import { commaList, secretsPath, type SecretsOpContext, type SecretsPathSpec } from '../../http/request-context';
import type { PolicyService } from '../policies/policies.service';
import type { TokenService } from './tokens.service';
import { tokenNamespaceId } from '../namespaces/namespaces.types';
import type { TokenCreateParams, TokenEntry } from './tokens.types';

/** Root help of `auth/token/` (`GET /v1/auth/token?help=1`). */
export const TOKEN_HELP =
  'The token auth method is built in and always enabled. Every authenticated request carries a client token, which names its policies, TTL and use limit; these paths create tokens (child or orphan), look them up, renew them and revoke them (with or without their children), by token or by accessor.';

const str = z.string();
const bool = z.boolean();
const durationField = z.union([z.number(), z.string()]);
const listField = z.union([z.array(str), str]);

const seconds = secondsField;

export function remainingTtl(entry: TokenEntry, now: number): number {
  return entry.expireTime === null ? 0 : Math.max(0, Math.floor((entry.expireTime - now) / 1000));
}

export function authBlock(id: string, entry: TokenEntry): Record<string, unknown> {
  return {
    client_token: id,
    accessor: entry.accessor,
    policies: entry.policies,
    token_policies: entry.policies,
    metadata: entry.meta,
    lease_duration: entry.ttl,
    renewable: entry.renewable,
    entity_id: '',
    token_type: 'service',
    orphan: entry.parent === null,
    mfa_requirement: null,
    num_uses: entry.numUses,
  };
}

/** `namespacePath`: the full path of the token's namespace ('' for root), as Vault Enterprise shows it. */
export function lookupData(id: string, entry: TokenEntry, now: number, namespacePath = ''): Record<string, unknown> {
  const data: Record<string, unknown> = {
    accessor: entry.accessor,
    creation_time: entry.creationTime,
    creation_ttl: entry.creationTtl,
    display_name: entry.displayName,
    entity_id: '',
    expire_time: entry.expireTime === null ? null : rfc3339(entry.expireTime),
    explicit_max_ttl: entry.explicitMaxTtl,
    id,
    issue_time: rfc3339(entry.issueTimeMs),
    meta: entry.meta,
    namespace_path: namespacePath,
    num_uses: entry.numUses,
    orphan: entry.parent === null,
    path: entry.path,
    policies: entry.policies,
    renewable: entry.renewable,
    ttl: remainingTtl(entry, now),
    type: 'service',
  };
  if (entry.lastRenewalMs !== null) {
    data.last_renewal = rfc3339(entry.lastRenewalMs);
    data.last_renewal_time = Math.floor(entry.lastRenewalMs / 1000);
  }
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export function createTokenPaths(deps: {
  tokens: TokenService;
  policies: PolicyService;
  now: () => number;
  /** Refuses renewing a login's token whose user or role is gone or changed (issue 28, item 5). */
  checkRenewal?: (entry: TokenEntry) => Promise<void>;
  /** The full path of a token's namespace by its id (issue 28, item 1); '' for root. */
  namespacePathOf?: (id: string | undefined) => string;
}): SecretsPathSpec[] {
  const { tokens, policies, now, checkRenewal } = deps;
  const nsPath = (entry: TokenEntry): string => deps.namespacePathOf?.(entry.namespaceId) ?? '';

  const createFields = {
    id: { schema: str, in: 'body', description: 'Token id (root or sudo only).' },
    role_name: { schema: str, in: 'body', description: 'Token roles are not supported.' },
    policies: { schema: listField, in: 'body', description: 'Policies of the token (subset of the parent\'s).' },
    meta: { schema: z.record(z.string(), z.string()), in: 'body', description: 'Metadata shown on lookup and in audit.' },
    no_parent: { schema: bool, in: 'body', description: 'Create an orphan (root or sudo).' },
    no_default_policy: { schema: bool, in: 'body', description: 'Do not attach the default policy.' },
    renewable: { schema: bool, in: 'body', description: 'Whether the token may be renewed (default true).' },
    ttl: { schema: durationField, in: 'body', description: 'Initial TTL.' },
    lease: { schema: durationField, in: 'body', description: 'Deprecated alias of ttl.' },
    explicit_max_ttl: { schema: durationField, in: 'body', description: 'Hard cap on the TTL, renewals included.' },
    display_name: { schema: str, in: 'body', description: 'Display name (prefixed with "token-").' },
    num_uses: { schema: z.number().int(), in: 'body', description: 'Maximum number of uses (0 = unlimited).' },
    period: { schema: durationField, in: 'body', description: 'Periodic tokens are not supported (must be empty).' },
    type: { schema: str, in: 'body', description: '`service` (batch tokens are not supported).' },
    entity_alias: { schema: str, in: 'body', description: 'Not supported (must be empty).' },
  } as const;

  type CreateCtx = SecretsOpContext<typeof createFields>;
  async function create(ctx: CreateCtx, orphan: boolean) {
    const caller = ctx.extra.token as TokenEntry;
    const acl = ctx.extra.acl;
    if ((ctx.data.role_name ?? '') !== '') throw badRequest(`unknown role ${ctx.data.role_name}`);
    const period = seconds(ctx.data.period, 'period') ?? 0;
    if (period > 0) throw badRequest('periodic tokens are not supported by this server');
    if ((ctx.data.entity_alias ?? '') !== '') throw badRequest('entity aliases are not supported by this server');
    const privileged = acl?.root === true || acl?.allows(`${ctx.extra.aclPrefix}auth/token/${orphan ? 'create-orphan' : 'create'}`, 'sudo') === true;
    const params: TokenCreateParams = {
      id: ctx.data.id,
      policies: commaList(ctx.data.policies),
      meta: ctx.data.meta,
      noParent: orphan || ctx.data.no_parent === true,
      noDefaultPolicy: ctx.data.no_default_policy,
      renewable: ctx.data.renewable,
      ttl: seconds(ctx.data.ttl ?? ctx.data.lease, 'ttl'),
      explicitMaxTtl: seconds(ctx.data.explicit_max_ttl, 'explicit_max_ttl'),
      displayName: ctx.data.display_name,
      numUses: ctx.data.num_uses,
      type: ctx.data.type,
      viaOrphanEndpoint: orphan,
      namespaceId: tokenNamespaceId(ctx.extra.namespace),
    };
    const { id, entry } = await tokens.create(caller, params, privileged);
    const warnings: string[] = [];
    for (const p of entry.policies) {
      if (p !== 'root' && p !== 'default' && !(await policies.exists(p))) warnings.push(`Policy ${JSON.stringify(p)} does not exist`);
    }
    return respondWith({ auth: authBlock(id, entry), warnings });
  }

  // A namespace's token store holds its own tokens only (issue 28, item 1): the tokens of
  // other namespaces are not found by token or accessor there, so a namespace's
  // administrators cannot look up, renew or revoke another tenant's tokens.
  const ours = (ctx: SecretsOpContext, entry: TokenEntry | null): TokenEntry | null =>
    entry !== null && entry.namespaceId === tokenNamespaceId(ctx.extra.namespace) ? entry : null;
  async function byToken(ctx: SecretsOpContext, token: string | undefined): Promise<{ id: string; entry: TokenEntry }> {
    if (!token) throw badRequest('missing token');
    const entry = ours(ctx, await tokens.lookup(token));
    if (!entry) throw invalidToken();
    return { id: token, entry };
  }
  async function byAccessor(ctx: SecretsOpContext, accessor: string | undefined): Promise<TokenEntry> {
    if (!accessor) throw badRequest('missing accessor');
    const entry = ours(ctx, await tokens.lookupByAccessor(accessor));
    if (!entry) throw badRequest('invalid accessor');
    return entry;
  }
  const self = (ctx: SecretsOpContext): { id: string; entry: TokenEntry } => ({ id: ctx.extra.tokenId, entry: ctx.extra.token as TokenEntry });

  const renew = async (id: string, entry: TokenEntry, increment: unknown) => {
    if (checkRenewal) await checkRenewal(entry);
    const updated = await tokens.renew(entry, seconds(increment, 'increment') ?? 0);
    return respondWith({ auth: authBlock(id, updated) });
  };

  const tokenField = { token: { schema: str, in: 'body', description: 'The token.' } } as const;
  const accessorField = { accessor: { schema: str, in: 'body', description: 'The token accessor.' } } as const;
  const incrementField = { increment: { schema: durationField, in: 'body', description: 'Requested new TTL.' } } as const;

  return [
    secretsPath({
      pattern: 'create',
      summary: 'Create a token (a child of the calling token).',
      fields: createFields,
      operations: { update: (ctx) => create(ctx, false) },
    }),
    secretsPath({
      pattern: 'create-orphan',
      summary: 'Create an orphan token (no parent).',
      fields: createFields,
      operations: { update: (ctx) => create(ctx, true) },
    }),
    secretsPath({
      pattern: 'lookup',
      summary: 'Look up a token.',
      fields: tokenField,
      operations: {
        async update(ctx) {
          const { id, entry } = await byToken(ctx, ctx.data.token);
          return respondWith({ data: lookupData(id, entry, now(), nsPath(entry)) });
        },
      },
    }),
    secretsPath({
      pattern: 'lookup-self',
      summary: 'Look up the calling token.',
      operations: {
        read(ctx) {
          const { id, entry } = self(ctx);
          return respondWith({ data: lookupData(id, entry, now(), nsPath(entry)) });
        },
        update(ctx) {
          const { id, entry } = self(ctx);
          return respondWith({ data: lookupData(id, entry, now(), nsPath(entry)) });
        },
      },
    }),
    secretsPath({
      pattern: 'lookup-accessor',
      summary: 'Look up a token by accessor (the id is not returned).',
      fields: accessorField,
      operations: {
        async update(ctx) {
          const entry = await byAccessor(ctx, ctx.data.accessor);
          return respondWith({ data: lookupData('', entry, now(), nsPath(entry)) });
        },
      },
    }),
    secretsPath({
      pattern: 'renew',
      summary: 'Renew a token.',
      fields: { ...tokenField, ...incrementField },
      operations: {
        async update(ctx) {
          const { id, entry } = await byToken(ctx, ctx.data.token);
          return renew(id, entry, ctx.data.increment);
        },
      },
    }),
    secretsPath({
      pattern: 'renew-self',
      summary: 'Renew the calling token.',
      fields: incrementField,
      operations: {
        update(ctx) {
          const { id, entry } = self(ctx);
          return renew(id, entry, ctx.data.increment);
        },
      },
    }),
    secretsPath({
      pattern: 'renew-accessor',
      summary: 'Renew a token by accessor.',
      fields: { ...accessorField, ...incrementField },
      operations: {
        async update(ctx) {
          const entry = await byAccessor(ctx, ctx.data.accessor);
          if (checkRenewal) await checkRenewal(entry);
          const updated = await tokens.renew(entry, seconds(ctx.data.increment, 'increment') ?? 0);
          const auth = authBlock('', updated);
          return respondWith({ auth });
        },
      },
    }),
    secretsPath({
      pattern: 'revoke',
      summary: 'Revoke a token and all its children.',
      fields: tokenField,
      operations: {
        async update(ctx) {
          if (!ctx.data.token) throw badRequest('missing token');
          const entry = ours(ctx, await tokens.lookup(ctx.data.token));
          if (entry) await tokens.revokeTree(entry.hash);
        },
      },
    }),
    secretsPath({
      pattern: 'revoke-self',
      summary: 'Revoke the calling token and all its children.',
      operations: {
        async update(ctx) {
          await tokens.revokeTree((ctx.extra.token as TokenEntry).hash);
        },
      },
    }),
    secretsPath({
      pattern: 'revoke-accessor',
      summary: 'Revoke a token by accessor.',
      fields: accessorField,
      operations: {
        async update(ctx) {
          if (!ctx.data.accessor) throw badRequest('missing accessor');
          const entry = ours(ctx, await tokens.lookupByAccessor(ctx.data.accessor));
          if (entry) await tokens.revokeTree(entry.hash);
        },
      },
    }),
    secretsPath({
      pattern: 'accessors',
      summary: 'List the accessors of all tokens (root or sudo).',
      sudo: true,
      operations: {
        async list(ctx) {
          const keys = await tokens.listAccessors(tokenNamespaceId(ctx.extra.namespace));
          if (keys.length === 0) throw notFound();
          return respondWith({ data: { keys } });
        },
      },
    }),
    secretsPath({
      pattern: 'revoke-orphan',
      summary: 'Revoke a token, making its children orphans (root or sudo).',
      sudo: true,
      fields: tokenField,
      operations: {
        async update(ctx) {
          if (!ctx.data.token) throw badRequest('missing token');
          if (!ctx.extra.acl?.allows(`${ctx.extra.aclPrefix}auth/token/revoke-orphan`, 'sudo')) throw permissionDenied();
          const entry = ours(ctx, await tokens.lookup(ctx.data.token));
          if (entry) await tokens.revokeOrphan(entry.hash);
        },
      },
    }),
  ];
}
