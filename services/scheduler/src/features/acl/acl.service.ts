// Token resolution and ACL administration (spec "Authentication"; reference §5). With
// ACLs disabled every request acts with management rights, as Nomad does.
import { randomUUID } from 'node:crypto';
import { BadRequestError, ForbiddenError, NotFoundError } from '@selfstack/errors';
import { sha256Hex, TABLES, type Clock, type Indexed, type ReadOptions } from '../../shared/common.types';
import { blockingRead, type SchedulerState } from '../../shared/blocking-read';
import { compileFilter, paginateByCreateIndex } from '../../http/pagination';
import type { ListQuery } from '../../http/query';
import { Acl, parseRules, type PolicyRules } from './acl-policy';
import type { AclPolicy, AclStore, AclToken } from './acl.store';

export interface Identity {
  acl: Acl;
  /** null for anonymous requests or when ACLs are off */
  token: AclToken | null;
}

export interface AclServiceDeps extends SchedulerState {
  aclStore: AclStore;
  enabled: boolean;
  clock: Clock;
  /** Is this sha256 a node's SecretID? Client agents authenticate with it (issue 25). */
  isNodeSecret?: (secretHash: string) => Promise<boolean>;
}

const ANONYMOUS = 'anonymous';

export const PERMISSION_DENIED = 'Permission denied';

export function denied(): ForbiddenError {
  return new ForbiddenError(PERMISSION_DENIED);
}

/** ACLToken without its SecretID (event payloads, list stubs). */
function tokenStub(t: AclToken): Record<string, unknown> {
  return {
    AccessorID: t.AccessorID,
    Name: t.Name,
    Type: t.Type,
    Policies: t.Policies,
    Roles: t['Roles'] ?? null,
    Global: t.Global,
    Hash: t['Hash'] ?? '',
    CreateTime: t.CreateTime,
    ExpirationTime: t.ExpirationTime,
    CreateIndex: t.CreateIndex,
    ModifyIndex: t.ModifyIndex,
  };
}

export interface TokenInput {
  Name?: unknown;
  Type?: unknown;
  Policies?: unknown;
  Global?: unknown;
  ExpirationTTL?: unknown;
}

export function createAclService(deps: AclServiceDeps) {
  const { aclStore, prisma, state } = deps;
  const parsed = new Map<string, { modifyIndex: number; rules: PolicyRules }>();

  async function rulesOf(policies: AclPolicy[]): Promise<PolicyRules[]> {
    const out: PolicyRules[] = [];
    for (const p of policies) {
      const cached = parsed.get(p.Name);
      if (cached && cached.modifyIndex === p.ModifyIndex) {
        out.push(cached.rules);
        continue;
      }
      const rules = await parseRules(p.Rules);
      parsed.set(p.Name, { modifyIndex: p.ModifyIndex, rules });
      out.push(rules);
    }
    return out;
  }

  function newToken(input: TokenInput, index: number, accessor?: AclToken): { token: AclToken; secret: string } {
    const type = input.Type === undefined || input.Type === '' ? (accessor?.Type ?? 'client') : input.Type;
    if (type !== 'client' && type !== 'management') throw new BadRequestError('token type must be client or management');
    const policies = Array.isArray(input.Policies) ? input.Policies.map(String) : (accessor?.Policies ?? null);
    if (type === 'client' && (!policies || policies.length === 0)) throw new BadRequestError('client token missing policies');
    if (type === 'management' && policies && policies.length > 0) {
      throw new BadRequestError('management token cannot be associated with policies');
    }
    const now = new Date(deps.clock.nowMs());
    let expiration: string | null = accessor?.ExpirationTime ?? null;
    if (typeof input.ExpirationTTL === 'string' && input.ExpirationTTL !== '' && !accessor) {
      const ms = parseTtl(input.ExpirationTTL);
      if (ms === null) throw new BadRequestError(`invalid ExpirationTTL ${JSON.stringify(input.ExpirationTTL)}`);
      expiration = new Date(now.getTime() + ms).toISOString();
    }
    const secret = randomUUID();
    const token: AclToken = {
      AccessorID: accessor?.AccessorID ?? randomUUID(),
      Name: typeof input.Name === 'string' ? input.Name : (accessor?.Name ?? ''),
      Type: type,
      Policies: type === 'management' ? null : policies,
      Roles: null,
      Global: input.Global === true || (input.Global === undefined && (accessor?.Global ?? false)),
      Hash: sha256Hex(`${type}:${(policies ?? []).join(',')}`).slice(0, 44),
      CreateTime: accessor?.CreateTime ?? now.toISOString(),
      ExpirationTime: expiration,
      ExpirationTTL: 0,
      CreateIndex: accessor?.CreateIndex ?? index,
      ModifyIndex: index,
    };
    return { token, secret };
  }

  return {
    enabled: deps.enabled,

    /** Resolves a request's secret into its permissions; 403 for unknown or expired tokens. */
    async resolve(secret: string): Promise<Identity> {
      if (!deps.enabled) return { acl: Acl.management(), token: null };
      if (secret === '') {
        const anon = await aclStore.getPolicy(prisma, ANONYMOUS);
        return { acl: Acl.fromPolicies(anon ? await rulesOf([anon]) : []), token: null };
      }
      const token = await aclStore.getTokenBySecretHash(prisma, sha256Hex(secret));
      if (!token) {
        // A client agent's node SecretID: no ACL capabilities; node routes check it themselves.
        if (deps.isNodeSecret && (await deps.isNodeSecret(sha256Hex(secret)))) return { acl: Acl.fromPolicies([]), token: null };
        throw new ForbiddenError('ACL token not found');
      }
      if (token.ExpirationTime !== null && Date.parse(token.ExpirationTime) <= deps.clock.nowMs()) {
        throw new ForbiddenError('ACL token expired');
      }
      if (token.Type === 'management') return { acl: Acl.management(), token };
      const policies = await aclStore.getPolicies(prisma, token.Policies ?? []);
      return { acl: Acl.fromPolicies(await rulesOf(policies)), token };
    },

    /** PUT /v1/acl/bootstrap: once only; the response is the only time the secret is shown. */
    async bootstrap(): Promise<{ index: number; token: Record<string, unknown> }> {
      if (!deps.enabled) throw new BadRequestError('ACL support disabled');
      const { index, result } = await state.withWrite([TABLES.aclTokens], async ({ tx, index, emit }) => {
        const done = await aclStore.bootstrapIndex(tx);
        if (done !== null) throw new BadRequestError(`ACL bootstrap already done (reset index: ${done})`);
        const { token, secret } = newToken({ Name: 'Bootstrap Token', Type: 'management', Global: true }, index);
        await aclStore.putToken(tx, token, sha256Hex(secret));
        await aclStore.markBootstrapped(tx, index);
        emit({ topic: 'ACLToken', type: 'ACLTokenUpserted', key: token.AccessorID, namespace: '', payload: { ACLToken: tokenStub(token) } });
        return { ...token, SecretID: secret };
      });
      return { index, token: result };
    },

    async listPolicies(prefix: string, opts: ReadOptions): Promise<Indexed<Record<string, unknown>[]>> {
      return blockingRead(deps, [TABLES.aclPolicies], opts, async (db) =>
        (await aclStore.listPolicies(db, prefix)).map((p) => ({
          Name: p.Name,
          Description: p.Description,
          JobACL: p['JobACL'] ?? null,
          CreateIndex: p.CreateIndex,
          ModifyIndex: p.ModifyIndex,
        })),
      );
    },

    async getPolicy(name: string, opts: ReadOptions): Promise<Indexed<AclPolicy>> {
      const r = await blockingRead(deps, [TABLES.aclPolicies], opts, (db) => aclStore.getPolicy(db, name));
      if (!r.value) throw new NotFoundError('ACL policy not found');
      return { index: r.index, value: r.value };
    },

    async upsertPolicy(name: string, body: Record<string, unknown>): Promise<number> {
      const bodyName = body['Name'];
      if (typeof bodyName === 'string' && bodyName !== '' && bodyName !== name) {
        throw new BadRequestError('ACL policy name does not match request path');
      }
      if (!/^[a-zA-Z0-9-]{1,128}$/.test(name)) throw new BadRequestError(`invalid name '${name}'`);
      const rules = typeof body['Rules'] === 'string' ? body['Rules'] : '';
      await parseRules(rules);
      const { index } = await state.withWrite([TABLES.aclPolicies], async ({ tx, index, emit }) => {
        const prev = await aclStore.getPolicy(tx, name);
        const policy: AclPolicy = {
          Name: name,
          Description: typeof body['Description'] === 'string' ? body['Description'] : '',
          Rules: rules,
          JobACL: body['JobACL'] ?? null,
          Hash: sha256Hex(rules).slice(0, 44),
          CreateIndex: prev?.CreateIndex ?? index,
          ModifyIndex: index,
        };
        await aclStore.putPolicy(tx, policy);
        emit({ topic: 'ACLPolicy', type: 'ACLPolicyUpserted', key: name, namespace: '', payload: { ACLPolicy: policy } });
      });
      return index;
    },

    async deletePolicy(name: string): Promise<number> {
      const { index } = await state.withWrite([TABLES.aclPolicies], async ({ tx, emit }) => {
        const prev = await aclStore.getPolicy(tx, name);
        if (!prev) throw new NotFoundError('ACL policy not found');
        await aclStore.deletePolicy(tx, name);
        emit({ topic: 'ACLPolicy', type: 'ACLPolicyDeleted', key: name, namespace: '', payload: { ACLPolicy: prev } });
      });
      return index;
    },

    /** GET /v1/acl/tokens: by CreateIndex (by ID with a prefix), filter and pagination (reference §0.3). */
    async listTokens(q: ListQuery, opts: ReadOptions): Promise<Indexed<Record<string, unknown>[]> & { nextToken: string }> {
      const filter = compileFilter(q.filter);
      const r = await blockingRead(deps, [TABLES.aclTokens], opts, (db) => aclStore.listTokens(db, q.prefix));
      const page = paginateByCreateIndex(r.value, q, filter, { idOf: (t) => t.AccessorID, datumOf: tokenStub });
      return { index: r.index, value: page.items.map(tokenStub), nextToken: page.nextToken };
    },

    async getToken(accessorId: string, opts: ReadOptions): Promise<Indexed<Record<string, unknown>>> {
      const r = await blockingRead(deps, [TABLES.aclTokens], opts, (db) => aclStore.getToken(db, accessorId));
      if (!r.value) throw new NotFoundError('ACL token not found');
      return { index: r.index, value: { ...tokenStub(r.value), SecretID: '' } };
    },

    async createToken(input: TokenInput): Promise<{ index: number; token: Record<string, unknown> }> {
      await this.checkPolicies(input.Policies);
      const { index, result } = await state.withWrite([TABLES.aclTokens], async ({ tx, index, emit }) => {
        const { token, secret } = newToken(input, index);
        await aclStore.putToken(tx, token, sha256Hex(secret));
        emit({ topic: 'ACLToken', type: 'ACLTokenUpserted', key: token.AccessorID, namespace: '', payload: { ACLToken: tokenStub(token) } });
        return { ...tokenStub(token), SecretID: secret };
      });
      return { index, token: result };
    },

    async updateToken(accessorId: string, input: TokenInput & { AccessorID?: unknown }): Promise<{ index: number; token: Record<string, unknown> }> {
      if (typeof input.AccessorID === 'string' && input.AccessorID !== '' && input.AccessorID !== accessorId) {
        throw new BadRequestError('Accessor ID does not match request path');
      }
      await this.checkPolicies(input.Policies);
      const { index, result } = await state.withWrite([TABLES.aclTokens], async ({ tx, index, emit }) => {
        const prev = await aclStore.getToken(tx, accessorId);
        if (!prev) throw new NotFoundError('ACL token not found');
        const { token } = newToken(input, index, prev);
        await aclStore.putToken(tx, token, null);
        emit({ topic: 'ACLToken', type: 'ACLTokenUpserted', key: token.AccessorID, namespace: '', payload: { ACLToken: tokenStub(token) } });
        return { ...tokenStub(token), SecretID: '' };
      });
      return { index, token: result };
    },

    async deleteToken(accessorId: string): Promise<number> {
      const { index } = await state.withWrite([TABLES.aclTokens], async ({ tx, emit }) => {
        const prev = await aclStore.getToken(tx, accessorId);
        if (!prev) throw new NotFoundError('ACL token not found');
        await aclStore.deleteToken(tx, accessorId);
        emit({ topic: 'ACLToken', type: 'ACLTokenDeleted', key: accessorId, namespace: '', payload: { ACLToken: tokenStub(prev) } });
      });
      return index;
    },

    async checkPolicies(policies: unknown): Promise<void> {
      if (!Array.isArray(policies)) return;
      const names = policies.map(String);
      const found = new Set((await aclStore.getPolicies(prisma, names)).map((p) => p.Name));
      for (const n of names) if (!found.has(n)) throw new BadRequestError(`policy lookup for "${n}" failed: ACL policy not found`);
    },

    tokenSelf(identity: Identity): Record<string, unknown> {
      if (!identity.token) throw new NotFoundError('ACL token not found');
      return { ...tokenStub(identity.token), SecretID: '' };
    },
  };
}

export type AclService = ReturnType<typeof createAclService>;

function parseTtl(v: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v);
  if (!m) return null;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return Number(m[1]) * (unit[m[2] as string] as number);
}
