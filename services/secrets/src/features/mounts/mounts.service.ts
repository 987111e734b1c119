// The mount table (issue 3, item 5; reference §4.7). One barrier entry, `core/mounts`,
// holds every secrets-engine mount; it is cached decrypted in memory (the router needs it
// on every request) and reloaded when another replica publishes a change on the bus.
// The bus is a hint with latency: a replica that has not heard yet of a mount another one
// just enabled re-reads the table before it answers "no such mount" (`resolve`, `lookup`),
// so a client that enables a mount and writes to it through a load balancer never sees a
// 404 for a mount that exists.
import { createRefresher, followChannel, type Bus } from '@selfstack/bus';
import { AppError } from '@selfstack/errors';
import { badRequest } from '../../core/errors';
import { base62, uuid } from '../../core/random';
import type { Storage, StorageTx } from '../barrier/storage.types';
import { upgradeKvV1ToV2 } from '../kv/kv-layout';
import { mountStoragePrefix, type EnableMountInput, type MountEntry, type TuneMountInput } from './mounts.types';

export const MOUNTS_PATH = 'core/mounts';
export const MOUNT_CHANNEL = 'secrets.mounts';
const RESERVED = ['sys/', 'auth/', 'cubbyhole/', 'identity/'];

/**
 * A write was about to use a mount entry that storage no longer holds as it is (disabled,
 * or upgraded to KV v2, by another replica whose bus message has not arrived yet). Nothing
 * was written; the request handler re-reads the table and serves the request again. Should
 * the mount change once more during that second try, the client gets this as a 503.
 */
export class StaleMountError extends AppError {
  constructor(readonly mountPath: string) {
    super(503, [`the mount at ${mountPath} changed while this request was served; nothing was written, retry`]);
  }
}

const parseTable = (raw: Buffer | null): MountEntry[] => (raw ? (JSON.parse(raw.toString('utf8')) as MountEntry[]) : []);

export interface MountService {
  list(): MountEntry[];
  get(path: string): MountEntry | undefined;
  /** Longest mount whose path prefixes `requestPath` (`secret` also matches `secret/`). */
  match(requestPath: string): MountEntry | undefined;
  /** `match`, re-reading the table from storage when nothing matches in memory. */
  resolve(requestPath: string): Promise<MountEntry | undefined>;
  /** `get`, re-reading the table from storage when the path is not in memory. */
  lookup(path: string): Promise<MountEntry | undefined>;
  /**
   * Re-reads the table from storage. Concurrent callers share one read, which always
   * starts after the call (a read already in flight may predate what the caller expects).
   */
  refresh(): Promise<void>;
  /**
   * Inside a write transaction: takes a share lock on the stored table (so a disable or a
   * v1 -> v2 upgrade, which lock it for update, waits for this transaction, and this one
   * for them) and throws StaleMountError when `entry` is not in it as it is in memory.
   */
  assertCurrent(tx: StorageTx, entry: MountEntry): Promise<void>;
  enable(path: string, input: EnableMountInput): Promise<MountEntry>;
  disable(path: string): Promise<void>;
  tune(path: string, input: TuneMountInput): Promise<MountEntry>;
  load(): Promise<void>;
  clear(): void;
  /** Subscribes to the bus; returns what unsubscribes (a namespace's table, when it goes). */
  start(): Promise<() => void>;
}

/** Where a namespace's table lives and the channel its changes are announced on (root: the defaults). */
export interface TableLocation {
  tablePath?: string;
  channel?: string;
}

export function normaliseMountPath(path: string): string {
  const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

function kvVersion(options: Record<string, unknown> | null | undefined, fallback: '1' | '2'): '1' | '2' {
  const raw = options?.version;
  if (raw === undefined || raw === null || raw === '') return fallback;
  const text = String(raw);
  if (text === '1' || text === '2') return text;
  throw badRequest(`invalid version: ${JSON.stringify(text)}; must be 1 or 2`);
}

export function newKvMount(path: string, version: '1' | '2', description = 'key/value secret storage'): MountEntry {
  return {
    path,
    type: 'kv',
    description,
    accessor: `kv_${base62(8).toLowerCase()}`,
    uuid: uuid(),
    config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false },
    options: { version },
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
  };
}

export async function writeInitialMounts(tx: StorageTx, mounts: MountEntry[]): Promise<void> {
  await tx.put(MOUNTS_PATH, Buffer.from(JSON.stringify(mounts)));
}

export function createMountService(deps: { storage: Storage; bus: Bus; now: () => number; hash: (value: string) => string } & TableLocation): MountService {
  const { storage, bus } = deps;
  const tablePath = deps.tablePath ?? MOUNTS_PATH;
  const CHANNEL = deps.channel ?? MOUNT_CHANNEL;
  let table: MountEntry[] = [];
  let byLength: MountEntry[] = [];
  // Reloads can overlap (bus messages in quick succession); only the newest may install.
  let loads = 0;
  /** The newest load's read (and install). */
  let newest: Promise<void> | null = null;

  const install = (mounts: MountEntry[]): void => {
    table = [...mounts].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    byLength = [...mounts].sort((a, b) => b.path.length - a.path.length);
  };

  const readTable = async (tx: StorageTx): Promise<MountEntry[]> => {
    return parseTable(await tx.get(tablePath, { forUpdate: true }));
  };

  const changed = (mounts: MountEntry[]): void => {
    loads++;
    install(mounts);
    void bus.publish(CHANNEL, 'changed').catch(() => undefined);
  };

  const service: MountService = {
    list: () => table,
    get: (path) => table.find((m) => m.path === normaliseMountPath(path)),
    match(requestPath) {
      for (const m of byLength) {
        if (requestPath.startsWith(m.path) || `${requestPath}/` === m.path) return m;
      }
      return undefined;
    },
    async resolve(requestPath) {
      const hit = service.match(requestPath);
      if (hit) return hit;
      await service.refresh();
      return service.match(requestPath);
    },
    async lookup(path) {
      const hit = service.get(path);
      if (hit) return hit;
      await service.refresh();
      return service.get(path);
    },
    refresh: () => refresher.refresh(),
    async assertCurrent(tx, entry) {
      const same = parseTable(await tx.get(tablePath, { forShare: true })).find((m) => m.uuid === entry.uuid);
      if (!same || same.path !== entry.path || same.options.version !== entry.options.version) throw new StaleMountError(entry.path);
    },

    async enable(rawPath, input) {
      const path = normaliseMountPath(rawPath);
      if (path === '') throw badRequest('missing path');
      for (const reserved of RESERVED) {
        if (path.startsWith(reserved) || reserved.startsWith(path)) {
          throw badRequest(reserved === 'sys/' && path === 'sys/' ? 'path is already in use at sys/' : `cannot mount under reserved path ${JSON.stringify(reserved)}`);
        }
      }
      let version: '1' | '2';
      if (input.type === 'kv') version = kvVersion(input.options, '1');
      else if (input.type === 'kv-v2') version = kvVersion(input.options, '2');
      else if (input.type === 'generic') version = kvVersion(input.options, '1');
      else if (input.type === '') throw badRequest('missing type');
      else throw badRequest(`plugin not found in the catalog: ${input.type}`);
      const entry = newKvMount(path, version, input.description ?? '');
      if (input.config) {
        entry.config = {
          default_lease_ttl: input.config.default_lease_ttl ?? 0,
          max_lease_ttl: input.config.max_lease_ttl ?? 0,
          force_no_cache: input.config.force_no_cache ?? false,
        };
      }
      entry.local = input.local ?? false;
      entry.seal_wrap = input.seal_wrap ?? false;
      entry.external_entropy_access = input.external_entropy_access ?? false;
      const mounts = await storage.transaction(async (tx) => {
        const current = await readTable(tx);
        for (const m of current) {
          if (m.path.startsWith(path) || path.startsWith(m.path)) throw badRequest(`path is already in use at ${m.path}`);
        }
        const next = [...current, entry];
        await tx.put(tablePath, Buffer.from(JSON.stringify(next)));
        return next;
      });
      changed(mounts);
      return entry;
    },

    async disable(rawPath) {
      const path = normaliseMountPath(rawPath);
      const mounts = await storage.transaction(async (tx) => {
        const current = await readTable(tx);
        const victim = current.find((m) => m.path === path);
        if (!victim) return null;
        const next = current.filter((m) => m !== victim);
        await tx.put(tablePath, Buffer.from(JSON.stringify(next)));
        await tx.deletePrefix(mountStoragePrefix(victim));
        return next;
      });
      if (mounts) changed(mounts);
    },

    async tune(rawPath, input) {
      const path = normaliseMountPath(rawPath);
      let result: MountEntry | undefined;
      const mounts = await storage.transaction(async (tx) => {
        const current = await readTable(tx);
        const entry = current.find((m) => m.path === path);
        if (!entry) throw badRequest(`cannot tune ${JSON.stringify(path)}: no mount at this path`);
        const updated: MountEntry = { ...entry, config: { ...entry.config }, options: { ...entry.options } };
        if (input.description !== undefined) updated.description = input.description;
        if (input.default_lease_ttl !== undefined) updated.config.default_lease_ttl = input.default_lease_ttl;
        if (input.max_lease_ttl !== undefined) updated.config.max_lease_ttl = input.max_lease_ttl;
        if (updated.config.max_lease_ttl > 0 && updated.config.default_lease_ttl > updated.config.max_lease_ttl) {
          throw badRequest('backend max lease TTL cannot be less than backend default lease TTL');
        }
        if (input.options) {
          const version = kvVersion(input.options, entry.options.version);
          if (entry.options.version === '2' && version === '1') {
            throw badRequest('cannot downgrade a KV version 2 mount to version 1');
          }
          if (entry.options.version === '1' && version === '2') {
            await upgradeKvV1ToV2(tx, mountStoragePrefix(entry), deps.now(), deps.hash);
          }
          updated.options = { version };
        }
        result = updated;
        const next = current.map((m) => (m === entry ? updated : m));
        await tx.put(tablePath, Buffer.from(JSON.stringify(next)));
        return next;
      });
      changed(mounts);
      return result as MountEntry;
    },

    async load() {
      const id = ++loads;
      const read = (async () => {
        const raw = await storage.get(tablePath);
        if (id === loads) install(parseTable(raw));
      })();
      newest = read;
      await read;
      // Overtaken by a newer load (a bus message while this one read): what this one read
      // was not installed, so its caller (a refresh that must see a table read after its
      // call) waits for the newer one, whose read started later still.
      while (newest !== read && newest !== null) {
        const next: Promise<void> = newest;
        await next;
        if (newest === next) break;
      }
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
