// The auth method table (issue 28, item 5; reference §4.10). One barrier entry,
// `core/auth`, holds every enabled auth method but the built-in `token/`. Like the
// secrets-engine table (mounts.service.ts) it is cached decrypted, reloaded when another
// replica announces a change on the bus, and re-read before this replica answers "no such
// method" (a login routed to a replica that has not heard of a new method yet still works).
import { createRefresher, followChannel, type Bus } from '@selfstack/bus';
import { badRequest } from '../../core/errors';
import { base62, uuid } from '../../core/random';
import type { Storage } from '../barrier/storage.types';
import { normaliseMountPath } from '../mounts/mounts.service';
import { AUTH_TYPES, authMountSchema, authStoragePrefix, type AuthMountEntry, type AuthType, type EnableAuthInput, type TuneAuthInput } from './auth-mounts.types';

export const AUTH_TABLE_PATH = 'core/auth';
export const AUTH_CHANNEL = 'secrets.auth';
const TOKEN_TYPES = new Set(['default', 'default-service', 'service']);
const VISIBILITY = new Set(['', 'hidden', 'unauth']);

export interface AuthMountService {
  list(): AuthMountEntry[];
  /** The method whose path prefixes `requestPath` (a full path: `auth/userpass/login/x`). */
  match(requestPath: string): AuthMountEntry | undefined;
  /** `match`, re-reading the table when nothing matches in memory. */
  resolve(requestPath: string): Promise<AuthMountEntry | undefined>;
  /** The method at `path` (relative to `auth/`), re-reading the table on a miss. */
  lookup(path: string): Promise<AuthMountEntry | undefined>;
  refresh(): Promise<void>;
  enable(path: string, input: EnableAuthInput): Promise<AuthMountEntry>;
  /** Removes the method and its data; returns the removed entry (null when none). */
  disable(path: string): Promise<AuthMountEntry | null>;
  tune(path: string, input: TuneAuthInput): Promise<AuthMountEntry>;
  load(): Promise<void>;
  clear(): void;
  /** Subscribes to the bus; returns what unsubscribes (a namespace's table, when it goes). */
  start(): Promise<() => void>;
}

const parseTable = (raw: Buffer | null): AuthMountEntry[] => (raw ? authMountSchema.array().parse(JSON.parse(raw.toString('utf8'))) : []);

function isAuthType(t: string): t is AuthType {
  return (AUTH_TYPES as readonly string[]).includes(t);
}

function checkTokenType(value: string | undefined): void {
  if (value !== undefined && !TOKEN_TYPES.has(value)) {
    throw badRequest(value === 'batch' || value === 'default-batch' ? 'batch tokens are not supported by this server' : `invalid token_type ${JSON.stringify(value)}`);
  }
}

export function createAuthMountService(deps: { storage: Storage; bus: Bus; tablePath?: string; channel?: string }): AuthMountService {
  const { storage, bus } = deps;
  const tablePath = deps.tablePath ?? AUTH_TABLE_PATH;
  const CHANNEL = deps.channel ?? AUTH_CHANNEL;
  let table: AuthMountEntry[] = [];
  let loads = 0;
  const install = (entries: AuthMountEntry[]): void => {
    table = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  };
  const changed = (entries: AuthMountEntry[]): void => {
    loads++;
    install(entries);
    void bus.publish(CHANNEL, 'changed').catch(() => undefined);
  };
  const get = (path: string): AuthMountEntry | undefined => table.find((m) => m.path === normaliseMountPath(path));

  const service: AuthMountService = {
    list: () => table,
    match(requestPath) {
      if (!requestPath.startsWith('auth/')) return undefined;
      const rel = requestPath.slice(5);
      let best: AuthMountEntry | undefined;
      for (const m of table) {
        if ((rel.startsWith(m.path) || `${rel}/` === m.path) && (!best || m.path.length > best.path.length)) best = m;
      }
      return best;
    },
    async resolve(requestPath) {
      const hit = service.match(requestPath);
      if (hit) return hit;
      await service.refresh();
      return service.match(requestPath);
    },
    async lookup(path) {
      const hit = get(path);
      if (hit) return hit;
      await service.refresh();
      return get(path);
    },
    refresh: () => refresher.refresh(),

    async enable(rawPath, input) {
      const path = normaliseMountPath(rawPath);
      if (path === '') throw badRequest('missing path');
      if (path === 'token/' || path.startsWith('token/')) throw badRequest('path is already in use at token/');
      if (input.type === '') throw badRequest('missing type');
      if (input.type === 'token') throw badRequest('token credential backend cannot be instantiated');
      if (!isAuthType(input.type)) throw badRequest(`plugin not found in the catalog: ${input.type}`);
      checkTokenType(input.config?.token_type);
      const visibility = input.config?.listing_visibility ?? '';
      if (!VISIBILITY.has(visibility)) throw badRequest(`invalid listing_visibility ${visibility}`);
      const defaultTtl = input.config?.default_lease_ttl ?? 0;
      const maxTtl = input.config?.max_lease_ttl ?? 0;
      if (maxTtl > 0 && defaultTtl > maxTtl) throw badRequest('given default lease TTL greater than given max lease TTL');
      const entry: AuthMountEntry = {
        path,
        type: input.type,
        description: input.description ?? '',
        accessor: `auth_${input.type}_${base62(8).toLowerCase()}`,
        uuid: uuid(),
        config: { default_lease_ttl: defaultTtl, max_lease_ttl: maxTtl, token_type: input.config?.token_type ?? 'default-service', listing_visibility: visibility },
        local: input.local ?? false,
        seal_wrap: input.seal_wrap ?? false,
      };
      const entries = await storage.transaction(async (tx) => {
        const current = parseTable(await tx.get(tablePath, { forUpdate: true }));
        for (const m of current) {
          if (m.path.startsWith(path) || path.startsWith(m.path)) throw badRequest(`path is already in use at ${m.path}`);
        }
        const next = [...current, entry];
        await tx.put(tablePath, Buffer.from(JSON.stringify(next)));
        return next;
      });
      changed(entries);
      return entry;
    },

    async disable(rawPath) {
      const path = normaliseMountPath(rawPath);
      if (path === 'token/') throw badRequest('token credential backend cannot be disabled');
      const result = await storage.transaction(async (tx) => {
        const current = parseTable(await tx.get(tablePath, { forUpdate: true }));
        const victim = current.find((m) => m.path === path);
        if (!victim) return null;
        const next = current.filter((m) => m !== victim);
        await tx.put(tablePath, Buffer.from(JSON.stringify(next)));
        await tx.deletePrefix(authStoragePrefix(victim));
        return { victim, next };
      });
      if (!result) return null;
      changed(result.next);
      return result.victim;
    },

    async tune(rawPath, input) {
      const path = normaliseMountPath(rawPath);
      checkTokenType(input.token_type);
      if (input.listing_visibility !== undefined && !VISIBILITY.has(input.listing_visibility)) {
        throw badRequest(`invalid listing_visibility ${input.listing_visibility}`);
      }
      let updated: AuthMountEntry | undefined;
      const entries = await storage.transaction(async (tx) => {
        const current = parseTable(await tx.get(tablePath, { forUpdate: true }));
        const entry = current.find((m) => m.path === path);
        if (!entry) throw badRequest(`cannot tune ${JSON.stringify(`auth/${path}`)}: no auth method at this path`);
        const next: AuthMountEntry = { ...entry, config: { ...entry.config } };
        if (input.description !== undefined) next.description = input.description;
        if (input.default_lease_ttl !== undefined) next.config.default_lease_ttl = input.default_lease_ttl;
        if (input.max_lease_ttl !== undefined) next.config.max_lease_ttl = input.max_lease_ttl;
        if (input.token_type !== undefined) next.config.token_type = input.token_type;
        if (input.listing_visibility !== undefined) next.config.listing_visibility = input.listing_visibility;
        if (next.config.max_lease_ttl > 0 && next.config.default_lease_ttl > next.config.max_lease_ttl) {
          throw badRequest('backend max lease TTL cannot be less than backend default lease TTL');
        }
        updated = next;
        const all = current.map((m) => (m === entry ? next : m));
        await tx.put(tablePath, Buffer.from(JSON.stringify(all)));
        return all;
      });
      changed(entries);
      return updated as AuthMountEntry;
    },

    async load() {
      const id = ++loads;
      const raw = await storage.get(tablePath);
      if (id === loads) install(parseTable(raw));
    },
    clear: () => install([]),
    start() {
      const reload = (): void => {
        void service.load().catch(() => undefined);
      };
      return followChannel(bus, CHANNEL, reload, reload);
    },
  };
  const refresher = createRefresher(() => service.load());
  return service;
}
