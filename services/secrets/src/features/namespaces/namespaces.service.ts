// The namespace table and the per-namespace tables (issue 28, item 1; docs/secrets.md
// "Namespaces"). Like the mount table it is one barrier entry, cached decrypted, reloaded
// when another replica announces a change on the bus and re-read before this replica
// answers "namespace not found". Each namespace's mounts, auth methods and policies live
// under `namespaces/<id>/` and are served by services of their own, made on first use.
import { createRefresher, type Bus } from '@selfstack/bus';
import { AppError } from '@selfstack/errors';
import { badRequest } from '../../core/errors';
import { base62 } from '../../core/random';
import { createAuthMountService, type AuthMountService } from '../auth/auth-mounts.service';
import { authStoragePrefix } from '../auth/auth-mounts.types';
import type { Storage } from '../barrier/storage.types';
import { createMountService, type MountService } from '../mounts/mounts.service';
import { mountStoragePrefix } from '../mounts/mounts.types';
import { createPolicyService, writeDefaultPolicy, type PolicyService } from '../policies/policies.service';
import type { TokenService } from '../tokens/tokens.service';
import { canonicalNamespacePath, namespaceStoragePrefix, RESERVED_NAMESPACE_NAMES, ROOT_NAMESPACE, type NamespaceEntry, type NamespaceScope } from './namespaces.types';

export const NAMESPACES_PATH = 'core/namespaces';
export const NAMESPACE_CHANNEL = 'secrets.namespaces';
const NAME = /^[A-Za-z0-9_-]+$/;

export const namespaceNotFound = (): AppError => new AppError(404, ['namespace not found']);

const parseTable = (raw: Buffer | null): NamespaceEntry[] => (raw ? (JSON.parse(raw.toString('utf8')) as NamespaceEntry[]) : []);

export interface NamespaceService {
  /** Every namespace but root, sorted by path. */
  list(): NamespaceEntry[];
  /** Whether any namespace exists (requests skip resolution when none does). */
  any(): boolean;
  /** By full path (`ns1/ns2/`, '' for root). */
  get(path: string): NamespaceEntry | undefined;
  /** By id, re-reading the table on a miss (a token of a namespace another replica just made). */
  lookupById(id: string): Promise<NamespaceEntry | undefined>;
  /** The full path of the namespace `id` ('' for root or an unknown id). */
  pathOf(id: string | undefined): string;
  /** Direct children of `parent`. */
  children(parent: NamespaceEntry): NamespaceEntry[];
  /**
   * The namespace a request targets (spec "Authentication" 3): the header's namespace,
   * then as many leading segments of `path` as name child namespaces. Null when the
   * header names a namespace that does not exist.
   */
  resolve(header: string, path: string): Promise<{ ns: NamespaceEntry; path: string } | null>;
  /** `resolve` from the table in memory (no waiting); undefined when the header's namespace is not in it. */
  resolveCached(header: string, path: string): { ns: NamespaceEntry; path: string } | undefined;
  /** Creates `name` (one or more segments, relative to `parent`), or replaces the metadata of an existing one. */
  put(parent: NamespaceEntry, name: string, metadata: Record<string, string> | undefined): Promise<NamespaceEntry>;
  /** Merges `patch` into the metadata (a null value removes the key). */
  patch(parent: NamespaceEntry, name: string, patch: Record<string, string | null>): Promise<NamespaceEntry>;
  /** Deletes the namespace and everything it holds; refused while it has child namespaces. */
  delete(parent: NamespaceEntry, name: string): Promise<void>;
  /** The tables of `ns` (root: the services given at construction). */
  scope(ns: NamespaceEntry): Promise<NamespaceScope>;
  /** `scope` when made and loaded already (no waiting). */
  cachedScope(ns: NamespaceEntry): NamespaceScope | undefined;
  /** Creates the top-level `admin` namespace unless it exists (the hosted mode). */
  ensure(name: string): Promise<NamespaceEntry>;
  refresh(): Promise<void>;
  load(): Promise<void>;
  clear(): void;
  start(): Promise<void>;
}

interface ScopeSlot {
  scope: NamespaceScope;
  ready: Promise<void>;
  loaded: boolean;
  stop: () => void;
}

export function createNamespaceService(deps: {
  storage: Storage;
  bus: Bus;
  tokens: TokenService;
  now: () => number;
  hash: (value: string) => string;
  root: NamespaceScope;
}): NamespaceService {
  const { storage, bus } = deps;
  let table: NamespaceEntry[] = [];
  let byPath = new Map<string, NamespaceEntry>();
  let byId = new Map<string, NamespaceEntry>();
  let loads = 0;
  const slots = new Map<string, ScopeSlot>();

  const install = (entries: NamespaceEntry[]): void => {
    table = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    byPath = new Map(table.map((e) => [e.path, e]));
    byId = new Map(table.map((e) => [e.id, e]));
    // Scopes of namespaces that are gone (deleted here or on another replica) are dropped.
    for (const [id, slot] of slots) {
      if (!byId.has(id)) {
        slot.stop();
        slots.delete(id);
      }
    }
  };
  const changed = (entries: NamespaceEntry[]): void => {
    loads++;
    install(entries);
    void bus.publish(NAMESPACE_CHANNEL, 'changed').catch(() => undefined);
  };
  /** The path-prefix form: leading segments of `path` naming child namespaces of `from`. */
  const walk = (from: NamespaceEntry, path: string): { ns: NamespaceEntry; path: string } => {
    let ns = from;
    let rest = path;
    if (table.length > 0) {
      for (;;) {
        const slash = rest.indexOf('/');
        if (slash <= 0) break;
        const child = byPath.get(`${ns.path}${rest.slice(0, slash)}/`);
        if (!child) break;
        ns = child;
        rest = rest.slice(slash + 1);
      }
    }
    return { ns, path: rest };
  };
  const readTable = async (): Promise<NamespaceEntry[]> => parseTable(await storage.get(NAMESPACES_PATH));

  /** The full path of `name` under `parent`, checked segment by segment. */
  const childPath = (parent: NamespaceEntry, name: string): string => {
    const segments = name.split('/').filter((s) => s !== '');
    if (segments.length === 0) throw badRequest('namespace path must not be empty');
    for (const s of segments) {
      if (RESERVED_NAMESPACE_NAMES.has(s.toLowerCase())) throw badRequest(`${JSON.stringify(s)} is a reserved path and cannot be used as a namespace name`);
      if (!NAME.test(s)) throw badRequest(`invalid namespace name ${JSON.stringify(s)}: letters, digits, '-' and '_' only`);
    }
    return `${parent.path}${segments.join('/')}/`;
  };
  const parentPathOf = (path: string): string => {
    const trimmed = path.slice(0, -1);
    const i = trimmed.lastIndexOf('/');
    return i === -1 ? '' : trimmed.slice(0, i + 1);
  };

  const makeScope = (ns: NamespaceEntry): ScopeSlot => {
    const prefix = namespaceStoragePrefix(ns.id);
    const channel = (kind: string) => `secrets.ns.${ns.id}.${kind}`;
    const mounts: MountService = createMountService({ storage, bus, now: deps.now, hash: deps.hash, tablePath: `${prefix}core/mounts`, channel: channel('mounts') });
    const policies: PolicyService = createPolicyService({ storage, bus, prefix: `${prefix}sys/policy/`, channel: channel('policies') });
    const auth: AuthMountService = createAuthMountService({ storage, bus, tablePath: `${prefix}core/auth`, channel: channel('auth') });
    const stops: (() => void)[] = [];
    const slot: ScopeSlot = {
      scope: { ns, mounts, policies, auth },
      loaded: false,
      ready: Promise.resolve(),
      stop: () => {
        for (const s of stops) s();
        stops.length = 0;
      },
    };
    slot.ready = (async () => {
      stops.push(await mounts.start(), await policies.start(), await auth.start());
      await Promise.all([mounts.load(), auth.load()]);
      slot.loaded = true;
    })();
    // A failed load is not kept: the next request tries again.
    slot.ready.catch(() => {
      slot.stop();
      if (slots.get(ns.id) === slot) slots.delete(ns.id);
    });
    return slot;
  };

  const service: NamespaceService = {
    list: () => table,
    any: () => table.length > 0,
    get: (path) => (path === '' ? ROOT_NAMESPACE : byPath.get(path)),
    async lookupById(id) {
      if (id === 'root') return ROOT_NAMESPACE;
      const hit = byId.get(id);
      if (hit) return hit;
      await service.refresh();
      return byId.get(id);
    },
    pathOf: (id) => (id === undefined ? '' : (byId.get(id)?.path ?? '')),
    children: (parent) => table.filter((e) => parentPathOf(e.path) === parent.path),

    resolveCached(header, path) {
      const wanted = canonicalNamespacePath(header);
      const ns = wanted === '' ? ROOT_NAMESPACE : byPath.get(wanted);
      return ns === undefined ? undefined : walk(ns, path);
    },
    async resolve(header, path) {
      const hit = service.resolveCached(header, path);
      if (hit !== undefined) return hit;
      await service.refresh();
      return service.resolveCached(header, path) ?? null;
    },

    async put(parent, name, metadata) {
      const path = childPath(parent, name);
      const entries = await storage.transaction(async (tx) => {
        const current = parseTable(await tx.get(NAMESPACES_PATH, { forUpdate: true }));
        const existing = current.find((e) => e.path === path);
        if (existing) {
          if (metadata === undefined) return null;
          const updated: NamespaceEntry = { ...existing, custom_metadata: metadata };
          const next = current.map((e) => (e === existing ? updated : e));
          await tx.put(NAMESPACES_PATH, Buffer.from(JSON.stringify(next)));
          return next;
        }
        const parentPath = parentPathOf(path);
        if (parentPath !== '' && !current.some((e) => e.path === parentPath)) throw badRequest(`parent namespace ${JSON.stringify(parentPath)} does not exist`);
        const entry: NamespaceEntry = { id: newId(current), path, custom_metadata: metadata ?? {} };
        // Vault writes each new namespace its own `default` policy.
        await writeDefaultPolicy(tx, `${namespaceStoragePrefix(entry.id)}sys/policy/`);
        const next = [...current, entry];
        await tx.put(NAMESPACES_PATH, Buffer.from(JSON.stringify(next)));
        return next;
      });
      if (entries) changed(entries);
      const entry = (entries ?? (await readTable())).find((e) => e.path === path);
      if (!entry) throw namespaceNotFound();
      return entry;
    },

    async patch(parent, name, patch) {
      const path = childPath(parent, name);
      let result: NamespaceEntry | undefined;
      const entries = await storage.transaction(async (tx) => {
        const current = parseTable(await tx.get(NAMESPACES_PATH, { forUpdate: true }));
        const existing = current.find((e) => e.path === path);
        if (!existing) throw namespaceNotFound();
        const metadata = { ...existing.custom_metadata };
        for (const [k, v] of Object.entries(patch)) {
          if (v === null) delete metadata[k];
          else metadata[k] = v;
        }
        result = { ...existing, custom_metadata: metadata };
        const next = current.map((e) => (e === existing ? (result as NamespaceEntry) : e));
        await tx.put(NAMESPACES_PATH, Buffer.from(JSON.stringify(next)));
        return next;
      });
      changed(entries);
      return result as NamespaceEntry;
    },

    async delete(parent, name) {
      const path = childPath(parent, name);
      const removed = await storage.transaction(async (tx) => {
        const current = parseTable(await tx.get(NAMESPACES_PATH, { forUpdate: true }));
        const victim = current.find((e) => e.path === path);
        if (!victim) return null;
        if (current.some((e) => e !== victim && e.path.startsWith(path))) {
          throw badRequest(`cannot delete namespace ${JSON.stringify(path)} containing child namespaces`);
        }
        const next = current.filter((e) => e !== victim);
        await tx.put(NAMESPACES_PATH, Buffer.from(JSON.stringify(next)));
        return { victim, next };
      });
      if (!removed) return;
      // Out of the table first (no request resolves to it any more), then its contents:
      // the data of its mounts and auth methods, its tokens, its own tables and policies.
      changed(removed.next);
      const prefix = namespaceStoragePrefix(removed.victim.id);
      const mounts = parseTable2<{ uuid: string }>(await storage.get(`${prefix}core/mounts`));
      for (const m of mounts) await storage.deletePrefix(mountStoragePrefix(m));
      const auths = parseTable2<{ uuid: string }>(await storage.get(`${prefix}core/auth`));
      for (const a of auths) await storage.deletePrefix(authStoragePrefix(a));
      await deps.tokens.revokeByNamespace(removed.victim.id);
      await storage.deletePrefix(prefix);
    },

    async scope(ns) {
      if (ns.path === '') return deps.root;
      let slot = slots.get(ns.id);
      if (!slot) {
        slot = makeScope(ns);
        slots.set(ns.id, slot);
      }
      await slot.ready;
      return slot.scope;
    },
    cachedScope(ns) {
      if (ns.path === '') return deps.root;
      const slot = slots.get(ns.id);
      return slot?.loaded ? slot.scope : undefined;
    },

    async ensure(name) {
      await service.refresh();
      return byPath.get(`${name}/`) ?? service.put(ROOT_NAMESPACE, name, undefined);
    },

    refresh: () => refresher.refresh(),
    async load() {
      const id = ++loads;
      const entries = await readTable();
      if (id === loads) install(entries);
    },
    clear() {
      install([]);
    },
    async start() {
      const reload = (): void => {
        void service.load().catch(() => undefined);
      };
      await bus.subscribe(NAMESPACE_CHANNEL, reload);
      bus.onReconnect(reload);
    },
  };
  const refresher = createRefresher(() => service.load());
  return service;
}

function parseTable2<T>(raw: Buffer | null): T[] {
  return raw ? (JSON.parse(raw.toString('utf8')) as T[]) : [];
}

/** Vault's namespace ids: 5 base62 characters, unique in the table. */
function newId(current: readonly NamespaceEntry[]): string {
  for (;;) {
    const id = base62(5);
    if (id !== 'root' && !current.some((e) => e.id === id)) return id;
  }
}
