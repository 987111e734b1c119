// The token store (issue 3, item 3; reference §5). Tokens are `hvs.` + 24 base62 chars;
// only HMACs of ids are stored. Children are indexed under their parent so revoking a
// parent revokes the whole tree. Lookups are cached for a few seconds in memory and the
// cache is invalidated across replicas through the bus when a token is revoked, renewed
// or used up.
import type { Bus } from '@selfstack/bus';
import { badRequest, invalidToken, SecretsError } from '../../core/errors';
import type { Clock } from '../../core/clock';
import { base62 } from '../../core/random';
import type { Storage, StorageTx } from '../barrier/storage.types';
import type { Salt } from '../barrier/salt';
import type { TokenCreateParams, TokenEntry } from './tokens.types';

export const SYSTEM_MAX_TTL = 2_764_800;
export const SYSTEM_DEFAULT_TTL = 2_764_800;
const CACHE_MS = 5_000;
const CACHE_MAX = 10_000;
export const TOKEN_CHANNEL = 'secrets.tokens';

const ID_PREFIX = 'sys/token/id/';
const ACCESSOR_PREFIX = 'sys/token/accessor/';
const PARENT_PREFIX = 'sys/token/parent/';

export interface TokenService {
  /** Resolves a client token; null when unknown, expired or revoked. */
  lookup(id: string): Promise<TokenEntry | null>;
  /** `lookup`'s answer when this process has the token cached and it is still valid (no
   * waiting); undefined otherwise, and `lookup` decides. */
  lookupCached(id: string): TokenEntry | undefined;
  lookupByAccessor(accessor: string): Promise<TokenEntry | null>;
  create(parent: TokenEntry | null, params: TokenCreateParams, privileged: boolean): Promise<{ id: string; entry: TokenEntry }>;
  /** Writes a root token inside an existing transaction (init, dev mode). */
  createRootInTx(tx: StorageTx, hash: (v: string) => string, id?: string): Promise<string>;
  renew(entry: TokenEntry, incrementSeconds: number): Promise<TokenEntry>;
  revokeTree(hash: string): Promise<void>;
  revokeOrphan(hash: string): Promise<void>;
  /** Counts one use of a limited-use token (revoked after the last one); returns the entry as it now stands. */
  use(entry: TokenEntry): Promise<TokenEntry>;
  /** Accessors of every live token of a namespace (sorted; '' = root), for `LIST auth/token/accessors`. */
  listAccessors(namespaceId?: string): Promise<string[]>;
  /** Revokes every token a login on the auth mount `uuid` issued (the mount is being disabled). */
  revokeByAuthMount(uuid: string): Promise<number>;
  /** Revokes every token of the namespace `id` (the namespace is being deleted). */
  revokeByNamespace(id: string): Promise<number>;
  clearCache(): void;
  start(): Promise<void>;
}

interface Cached {
  entry: TokenEntry;
  until: number;
}

export function sanitizePolicies(policies: readonly string[], addDefault: boolean): string[] {
  const set = new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (set.has('root')) return ['root'];
  if (addDefault) set.add('default');
  return [...set].sort();
}

function displayNameOf(name: string | undefined): string {
  if (!name) return 'token';
  const cleaned = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return cleaned ? `token-${cleaned}` : 'token';
}

export function createTokenService(deps: { storage: Storage; salt: Salt; clock: Clock; bus: Bus }): TokenService {
  const { storage, salt, clock, bus } = deps;
  const cache = new Map<string, Cached>();
  // Bumped on every invalidation so a lookup that raced with a revocation does not cache
  // the entry it read before the revocation.
  let generation = 0;
  const drop = (hash: string | null): void => {
    generation++;
    if (hash === null) cache.clear();
    else cache.delete(hash);
  };

  const encode = (e: TokenEntry): Buffer => Buffer.from(JSON.stringify(e));
  const decode = (b: Buffer): TokenEntry => JSON.parse(b.toString('utf8')) as TokenEntry;
  const invalidate = (hash: string): void => {
    drop(hash);
    void bus.publish(TOKEN_CHANNEL, hash).catch(() => undefined);
  };

  const expired = (e: TokenEntry): boolean => e.expireTime !== null && e.expireTime <= clock.now();

  async function load(hash: string): Promise<TokenEntry | null> {
    const hit = cache.get(hash);
    const now = clock.now();
    if (hit && hit.until > now) return hit.entry;
    const started = generation;
    const raw = await storage.get(ID_PREFIX + hash);
    if (!raw) {
      cache.delete(hash);
      return null;
    }
    const entry = decode(raw);
    if (entry.numUses === 0 && generation === started) {
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(hash, { entry, until: now + CACHE_MS });
    }
    return entry;
  }

  async function checked(entry: TokenEntry | null): Promise<TokenEntry | null> {
    if (!entry) return null;
    if (expired(entry)) {
      await revokeTree(entry.hash);
      return null;
    }
    return entry;
  }

  async function revokeTree(hash: string): Promise<void> {
    const children = await storage.list(`${PARENT_PREFIX}${hash}/`);
    for (const childPath of children) {
      await revokeTree(childPath.slice(PARENT_PREFIX.length + hash.length + 1));
    }
    await storage.transaction(async (tx) => {
      const raw = await tx.get(ID_PREFIX + hash, { forUpdate: true });
      if (!raw) return;
      const entry = decode(raw);
      await tx.delete(ID_PREFIX + hash);
      await tx.delete(ACCESSOR_PREFIX + salt.hash(entry.accessor));
      if (entry.parent) await tx.delete(`${PARENT_PREFIX}${entry.parent}/${hash}`);
      await tx.deletePrefix(`${PARENT_PREFIX}${hash}/`);
    });
    invalidate(hash);
  }

  function computeTtl(params: TokenCreateParams, policies: string[]): number {
    let ttl = params.ttl ?? 0;
    const explicitMax = params.explicitMaxTtl ?? 0;
    if (ttl === 0 && !(policies.length === 1 && policies[0] === 'root')) ttl = SYSTEM_DEFAULT_TTL;
    if (ttl === 0 && explicitMax > 0) ttl = explicitMax;
    if (explicitMax > 0 && ttl > explicitMax) ttl = explicitMax;
    const loginMax = params.login?.maxTtl ?? 0;
    if (loginMax > 0 && ttl > loginMax) ttl = loginMax;
    if (ttl > SYSTEM_MAX_TTL) ttl = SYSTEM_MAX_TTL;
    return ttl;
  }

  async function writeNew(tx: StorageTx, entry: TokenEntry): Promise<void> {
    await tx.insert(ID_PREFIX + entry.hash, encode(entry));
    await tx.insert(ACCESSOR_PREFIX + salt.hash(entry.accessor), Buffer.from(JSON.stringify({ hash: entry.hash })));
    if (entry.parent) await tx.put(`${PARENT_PREFIX}${entry.parent}/${entry.hash}`, Buffer.from('{}'));
  }

  async function revokeWhere(test: (e: TokenEntry) => boolean): Promise<number> {
    const paths = await storage.list(ID_PREFIX);
    let revoked = 0;
    for (let i = 0; i < paths.length; i += 500) {
      const rows = await storage.getMany(paths.slice(i, i + 500));
      for (const raw of rows.values()) {
        const e = decode(raw);
        if (!test(e)) continue;
        await revokeTree(e.hash);
        revoked++;
      }
    }
    return revoked;
  }

  return {
    async lookup(id) {
      if (id === '') return null;
      return checked(await load(salt.hash(id)));
    },

    lookupCached(id) {
      if (id === '') return undefined;
      const hit = cache.get(salt.hash(id));
      return hit !== undefined && hit.until > clock.now() && !expired(hit.entry) ? hit.entry : undefined;
    },

    async lookupByAccessor(accessor) {
      if (accessor === '') return null;
      const raw = await storage.get(ACCESSOR_PREFIX + salt.hash(accessor));
      if (!raw) return null;
      const { hash } = JSON.parse(raw.toString('utf8')) as { hash: string };
      return checked(await load(hash));
    },

    async create(parent, params, privileged) {
      const parentIsRoot = parent !== null && parent.policies.includes('root');
      if (params.id !== undefined && params.id !== '') {
        if (!privileged) throw badRequest('root or sudo privileges required to specify token id');
        if (params.id.includes('.')) throw badRequest('token IDs can not contain a period');
      }
      if (params.noParent && !privileged && !params.viaOrphanEndpoint) throw badRequest('root or sudo privileges required to create orphan token');
      if ((params.numUses ?? 0) < 0) throw badRequest('number of uses cannot be negative');
      if (params.type !== undefined && params.type !== '' && params.type !== 'service') {
        throw badRequest(params.type === 'batch' ? 'batch tokens are not supported by this server' : `invalid 'type' value ${JSON.stringify(params.type)}`);
      }
      const namespaceId = params.namespaceId ?? '';
      // Policies are names in the token's namespace: a parent of another namespace (an
      // ancestor, creating a token in a child) hands none of its own down (Vault's
      // handleCreateCommon inherits only within one namespace).
      const sameNamespace = parent !== null && (parent.namespaceId ?? '') === namespaceId;
      let requested = params.policies ?? [];
      if (requested.length === 0 && parent && sameNamespace) requested = parent.policies.filter((p) => p !== 'default' || !params.noDefaultPolicy);
      const policies = sanitizePolicies(requested, !params.noDefaultPolicy);
      // Within one namespace a child's policies are a subset of its parent's. A parent of an
      // ancestor namespace names policies of another namespace: with sudo on the create path
      // it may give a token of the child namespace any of the child's policies.
      if (parent && !parentIsRoot && (sameNamespace || !privileged)) {
        const allowed = new Set(sanitizePolicies(parent.policies, true));
        if (!policies.every((p) => allowed.has(p))) throw badRequest('child policies must be subset of parent');
      }
      let ttl = computeTtl(params, policies);
      const now = clock.now();
      // A child never outlives its parent: Vault revokes the children when the parent
      // expires; capping the child's expiry gives the same observable result.
      const orphan = params.noParent === true || parent === null;
      if (!orphan && parent.expireTime !== null) {
        const remaining = Math.max(0, Math.floor((parent.expireTime - now) / 1000));
        if (ttl === 0 || ttl > remaining) ttl = remaining;
      }
      // Reference §5: a namespace's tokens end in `.<namespace id>`.
      const base = params.id && params.id !== '' ? params.id : `hvs.${base62(24)}`;
      const id = namespaceId === '' ? base : `${base}.${namespaceId}`;
      const entry: TokenEntry = {
        hash: salt.hash(id),
        accessor: base62(24),
        policies,
        meta: params.meta && Object.keys(params.meta).length > 0 ? params.meta : null,
        displayName: params.login ? params.login.displayName : displayNameOf(params.displayName),
        numUses: params.numUses ?? 0,
        creationTime: Math.floor(now / 1000),
        creationTtl: ttl,
        explicitMaxTtl: params.explicitMaxTtl ?? 0,
        ttl,
        expireTime: ttl > 0 || (!orphan && parent.expireTime !== null) ? now + ttl * 1000 : null,
        renewable: ttl > 0 ? params.renewable ?? true : false,
        parent: orphan ? null : parent.hash,
        path: params.login ? params.login.path : params.viaOrphanEndpoint ? 'auth/token/create-orphan' : 'auth/token/create',
        issueTimeMs: now,
        lastRenewalMs: null,
        ...(params.login ? { authMount: params.login.authMount, ...(params.login.maxTtl > 0 ? { maxTtl: params.login.maxTtl } : {}) } : {}),
        ...(namespaceId === '' ? {} : { namespaceId }),
      };
      try {
        await storage.transaction(async (tx) => {
          if (entry.parent && !(await tx.get(ID_PREFIX + entry.parent, { forUpdate: true }))) {
            throw new SecretsError(403, ['parent token was revoked']);
          }
          await writeNew(tx, entry);
        });
      } catch (err) {
        if (err instanceof Error && err.name === 'EntryConflictError') throw badRequest('cannot create a token with a duplicate ID');
        throw err;
      }
      return { id, entry };
    },

    async createRootInTx(tx, hash, requestedId) {
      const id = requestedId && requestedId !== '' ? requestedId : `hvs.${base62(24)}`;
      const now = clock.now();
      const entry: TokenEntry = {
        hash: hash(id),
        accessor: base62(24),
        policies: ['root'],
        meta: null,
        displayName: 'root',
        numUses: 0,
        creationTime: Math.floor(now / 1000),
        creationTtl: 0,
        explicitMaxTtl: 0,
        ttl: 0,
        expireTime: null,
        renewable: false,
        parent: null,
        path: 'auth/token/root',
        issueTimeMs: now,
        lastRenewalMs: null,
      };
      await tx.put(ID_PREFIX + entry.hash, encode(entry));
      await tx.put(ACCESSOR_PREFIX + hash(entry.accessor), Buffer.from(JSON.stringify({ hash: entry.hash })));
      return id;
    },

    async renew(entry, increment) {
      if (!entry.renewable || entry.expireTime === null) throw badRequest('lease is not renewable');
      const updated = await storage.transaction(async (tx) => {
        const raw = await tx.get(ID_PREFIX + entry.hash, { forUpdate: true });
        if (!raw) throw new SecretsError(400, ['token not found']);
        const current = decode(raw);
        const now = clock.now();
        let ttl = increment > 0 ? increment : current.creationTtl;
        const limits = [current.creationTime * 1000 + SYSTEM_MAX_TTL * 1000];
        if (current.explicitMaxTtl > 0) limits.push(current.creationTime * 1000 + current.explicitMaxTtl * 1000);
        // A login token's role, user or mount maximum (issue 28, item 5).
        if ((current.maxTtl ?? 0) > 0) limits.push(current.creationTime * 1000 + (current.maxTtl as number) * 1000);
        if (current.parent) {
          const parentRaw = await tx.get(ID_PREFIX + current.parent);
          const parentEntry = parentRaw ? decode(parentRaw) : null;
          if (parentEntry?.expireTime != null) limits.push(parentEntry.expireTime);
        }
        const cap = Math.min(...limits);
        let expire = now + ttl * 1000;
        if (expire > cap) {
          expire = cap;
          ttl = Math.max(0, Math.floor((cap - now) / 1000));
        }
        current.ttl = ttl;
        current.expireTime = expire;
        current.lastRenewalMs = now;
        await tx.put(ID_PREFIX + entry.hash, encode(current));
        return current;
      });
      invalidate(entry.hash);
      return updated;
    },

    revokeTree,

    async revokeOrphan(hash) {
      const children = await storage.list(`${PARENT_PREFIX}${hash}/`);
      for (const childPath of children) {
        const childHash = childPath.slice(PARENT_PREFIX.length + hash.length + 1);
        await storage.transaction(async (tx) => {
          const raw = await tx.get(ID_PREFIX + childHash, { forUpdate: true });
          if (!raw) return;
          const child = { ...decode(raw), parent: null };
          await tx.put(ID_PREFIX + childHash, encode(child));
        });
        invalidate(childHash);
      }
      await storage.deletePrefix(`${PARENT_PREFIX}${hash}/`);
      await revokeTree(hash);
    },

    async use(entry) {
      if (entry.numUses === 0) return entry;
      // Issue 33: the use is counted, and the last use revokes the token, in the one
      // transaction that admits the request. A request waiting on the row lock then finds
      // the row gone (403), never the count as it stood before the last use.
      const { current, children } = await storage.transaction(async (tx) => {
        const raw = await tx.get(ID_PREFIX + entry.hash, { forUpdate: true });
        if (!raw) throw invalidToken();
        const e = decode(raw);
        if (expired(e) || e.numUses <= 0) throw invalidToken();
        e.numUses -= 1;
        if (e.numUses > 0) {
          await tx.put(ID_PREFIX + entry.hash, encode(e));
          return { current: e, children: [] as string[] };
        }
        const kids = await tx.list(`${PARENT_PREFIX}${entry.hash}/`);
        await tx.delete(ID_PREFIX + entry.hash);
        await tx.delete(ACCESSOR_PREFIX + salt.hash(e.accessor));
        if (e.parent) await tx.delete(`${PARENT_PREFIX}${e.parent}/${entry.hash}`);
        await tx.deletePrefix(`${PARENT_PREFIX}${entry.hash}/`);
        return { current: e, children: kids.map((p) => p.slice(PARENT_PREFIX.length + entry.hash.length + 1)) };
      });
      invalidate(entry.hash);
      // The token's own row is gone with the transaction; its children follow it.
      for (const child of children) await revokeTree(child);
      return current;
    },

    async listAccessors(namespaceId = '') {
      const paths = await storage.list(ID_PREFIX);
      const out: string[] = [];
      const now = clock.now();
      for (let i = 0; i < paths.length; i += 500) {
        const rows = await storage.getMany(paths.slice(i, i + 500));
        for (const raw of rows.values()) {
          const e = decode(raw);
          if ((e.namespaceId ?? '') !== namespaceId) continue;
          if (e.expireTime === null || e.expireTime > now) out.push(e.accessor);
        }
      }
      return out.sort();
    },

    // Disabling an auth method or deleting a namespace is rare; a scan of the token index
    // is acceptable there (Vault revokes by the login path prefix the same way).
    revokeByAuthMount: (uuid) => revokeWhere((e) => e.authMount === uuid),
    revokeByNamespace: (id) => revokeWhere((e) => e.namespaceId === id),

    clearCache: () => drop(null),

    async start() {
      await bus.subscribe(TOKEN_CHANNEL, (hash) => drop(hash));
      bus.onReconnect(() => drop(null));
    },
  };
}
