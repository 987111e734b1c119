// The physical cache (Vault's `physical.Cache`): an LRU of stored ciphertext in front of
// the entry store, below the barrier, so it never holds a plaintext value. It wraps a
// `Storage` and is one (storage.types.ts): its `get` and `getWithLast` are served from the
// cache, every other read goes to the store below, and every write goes through and
// invalidates. Its `uncached` view is the same store with every read going below, for the
// readers that keep caches and bus channels of their own (tokens, policies, mounts, KV
// config and metadata, write guards): only KV data reads are given the cached one
// (services.ts). The synchronous fast path (`LatestPeek`) is for the KV v2 read path only.
//
// Coherence:
// - In this process, every write through the store (plain, conditional, batched, inside a
//   transaction) invalidates what it touched once the statement or transaction settles,
//   whatever its outcome.
// - A read that was in flight while an invalidation touched its paths returns its answer
//   but does not cache it (it may have read the old row).
// - Other replicas: the invalidated paths and prefixes are published on the bus channel
//   `secrets.entries` (gathered for `publishDelayMs`) after the write settled; each replica
//   drops them on receipt. After a bus reconnect (messages may have been lost) and on
//   seal/unseal the whole cache is dropped.
// - Lost messages are detected: every message carries its origin's sequence number, and
//   an origin with nothing to say publishes an empty one every `heartbeatMs`. A replica
//   that sees a number skipped (a publication that failed, a message dropped), or hears
//   nothing from a known origin for three heartbeats (its bus cut off while it may still
//   be writing), drops the whole cache. So a lost invalidation is bounded by about three
//   heartbeats; the TTL remains as the last bound (a replica on an older message format).
import { randomUUID } from 'node:crypto';
import type { Bus } from '@selfstack/bus';
import type { LatestPeek, Storage, StorageEntry, StorageTx, WithLast } from './storage.types';

export const ENTRY_CHANNEL = 'secrets.entries';

export interface EntryCacheOptions {
  /** Upper bound of cached bytes (ciphertext + path); 0 disables the cache. */
  maxBytes: number;
  /**
   * Longest time an entry may be served without a re-read (ms; each entry's own life is
   * drawn between half of it and all of it); bounds a lost invalidation.
   */
  ttlMs: number;
  /**
   * How often a replica that published nothing else announces its sequence number (ms;
   * default 1000, 0: never). Three missed heartbeats of a known origin drop the cache.
   */
  heartbeatMs?: number;
  /**
   * How long invalidations are gathered before one message announces them (ms; default
   * DEFAULT_PUBLISH_DELAY_MS; 0: at the end of the event-loop turn).
   */
  publishDelayMs?: number;
  now?: () => number;
}

/** One Redis message per write was a tenth of a KV v2 write's cost (docs/secrets.md). */
export const DEFAULT_PUBLISH_DELAY_MS = 5;

export const DEFAULT_HEARTBEAT_MS = 1000;
/** Heartbeats an origin may miss before its silence counts as lost messages. */
const SILENT_BEATS = 3;

export interface CachedStore extends Storage, LatestPeek {
  /** The same entries, every read from the store below; writes invalidate as through the cache. */
  readonly uncached: Storage;
  /** Subscribes to other replicas' invalidations and to the bus's reconnects. */
  start(): Promise<void>;
  /** Stops the heartbeat (the subscription ends with the bus). */
  stop(): void;
  /** Drops everything (seal, unseal, bus reconnect, a lost message). */
  purge(): void;
  readonly stats: { hits: number; misses: number; refreshes: number; purges: number; readonly size: number; readonly bytes: number };
}

interface Loaded {
  readonly value: Buffer | null;
  readonly last: StorageEntry | null;
}

interface Slot {
  /** Bumped by every invalidation that touches the slot's path (or its prefix). */
  version: number;
  readers: number;
  /** The load in flight, shared by the misses that arrive while it is still valid. */
  load: { prefix: string | null; version: number; epoch: number; promise: Promise<Loaded> } | null;
}

interface Item {
  readonly path: string;
  readonly prefix: string | null;
  readonly value: Buffer | null;
  readonly last: StorageEntry | null;
  readonly bytes: number;
  readonly until: number;
  /** From here on a hit also starts a background re-read (refresh ahead). */
  readonly refreshAt: number;
  /** Hit since it was stored or last passed over by eviction (second chance). */
  used: boolean;
  /** No longer the cache's entry for its path (invalidated, evicted, replaced, purged). */
  dropped?: true;
  /** What peekWithLast hands out for this item: one object for the item's whole life. */
  pair?: CachedPair;
}

/** A cached `getWithLast` answer as handed out, tied to its item (see stillCached). */
interface CachedPair extends WithLast {
  readonly item: Item;
}

interface Message {
  readonly origin: string;
  /** The origin's message number (1, 2, ...; heartbeats included). */
  readonly seq?: number;
  readonly paths: string[];
  readonly prefixes: string[];
}

// Per-item bookkeeping counted against maxBytes besides the bytes themselves.
const ITEM_OVERHEAD = 96;

/**
 * Wraps `inner` with the physical cache. Cached reads are keyed by path: `get` items have
 * no prefix, `getWithLast` items carry theirs (only prefixes ending in "/" are cached, so
 * an invalidated path finds every item whose range holds it through its "/" ancestors).
 */
export function createCachedStore(inner: Storage, deps: { bus: Bus } & EntryCacheOptions): CachedStore {
  const { bus, maxBytes, ttlMs } = deps;
  const now = deps.now ?? Date.now;
  const origin = randomUUID();
  const items = new Map<string, Item>();
  /** prefix -> path of the `getWithLast` item (or in-flight read) that covers it. */
  const owners = new Map<string, Set<string>>();
  const slots = new Map<string, Slot>();
  let bytes = 0;
  /** Bumped by purges and prefix invalidations: every read in flight then is not cached. */
  let epoch = 0;
  const stats = {
    hits: 0,
    misses: 0,
    refreshes: 0,
    purges: 0,
    get size() {
      return items.size;
    },
    get bytes() {
      return bytes;
    },
  };

  // How many owned prefixes end at their n-th "/" (n -> count): an invalidated path looks
  // up only its ancestors of those depths (KV v2's version folders are all at the 4th),
  // not every ancestor (a substring and a Map lookup each, for every path of every write).
  const ownerDepths = new Map<number, number>();
  const slashes = (s: string): number => {
    let n = 0;
    for (let i = s.indexOf('/'); i >= 0; i = s.indexOf('/', i + 1)) n++;
    return n;
  };
  const own = (prefix: string, path: string): void => {
    let set = owners.get(prefix);
    if (!set) {
      owners.set(prefix, (set = new Set()));
      const depth = slashes(prefix);
      ownerDepths.set(depth, (ownerDepths.get(depth) ?? 0) + 1);
    }
    set.add(path);
  };
  const disown = (prefix: string, path: string): void => {
    const set = owners.get(prefix);
    if (!set) return;
    set.delete(path);
    if (set.size === 0) {
      owners.delete(prefix);
      const depth = slashes(prefix);
      const left = (ownerDepths.get(depth) ?? 1) - 1;
      if (left === 0) ownerDepths.delete(depth);
      else ownerDepths.set(depth, left);
    }
  };

  function drop(path: string): void {
    const item = items.get(path);
    if (!item) return;
    item.dropped = true;
    items.delete(path);
    bytes -= item.bytes;
    if (item.prefix !== null && !slots.has(path)) disown(item.prefix, path);
  }

  function store(path: string, item: Item): void {
    drop(path);
    if (item.bytes > maxBytes / 8) return;
    items.set(path, item);
    bytes += item.bytes;
    if (item.prefix !== null) own(item.prefix, path);
    // Oldest first (Map order is insertion order); an item hit since it was stored or
    // last passed over gets a second chance at the young end instead (CLOCK: a hit is a
    // flag, not a move, so reads do not reorder the map).
    for (const [oldest, candidate] of items) {
      if (bytes <= maxBytes) break;
      if (candidate.used) {
        candidate.used = false;
        items.delete(oldest);
        items.set(oldest, candidate);
        continue;
      }
      drop(oldest);
    }
  }

  /** Drops `path` and tells a load in flight for it that it is stale. */
  function hit(path: string): void {
    drop(path);
    const slot = slots.get(path);
    if (slot) slot.version++;
  }

  /** Invalidates `path` and every cached range ("/" ancestor prefix) that holds it. */
  function touchPath(path: string): void {
    hit(path);
    if (owners.size === 0) return;
    let depth = 0;
    for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
      if (!ownerDepths.has(++depth)) continue;
      const set = owners.get(path.slice(0, i + 1));
      if (set) for (const p of [...set]) hit(p);
    }
  }

  function touchPrefix(prefix: string): void {
    epoch++;
    // (Deleting the entry being visited is safe while iterating a Map.)
    for (const [path, item] of items) {
      if (path.startsWith(prefix) || (item.prefix !== null && (item.prefix.startsWith(prefix) || prefix.startsWith(item.prefix)))) drop(path);
    }
  }

  function purge(): void {
    stats.purges++;
    epoch++;
    for (const item of items.values()) item.dropped = true;
    items.clear();
    bytes = 0;
    owners.clear();
    ownerDepths.clear();
  }

  // Numbered publications; a failed one still uses up its number, so the next one tells
  // the other replicas that something was lost.
  let seq = 0;
  let publishedSince = false;
  function send(paths: string[], prefixes: string[]): void {
    publishedSince = true;
    // `origin` first: the subscriber recognises its own messages without parsing them.
    const message: Message = { origin, seq: ++seq, paths, prefixes };
    void bus.publish(ENTRY_CHANNEL, JSON.stringify(message)).catch(() => undefined);
  }

  // Coalesced publication: one message per `publishDelayMs` (or event-loop turn) with
  // everything invalidated in it. This replica itself dropped the paths already.
  const publishDelayMs = deps.publishDelayMs ?? DEFAULT_PUBLISH_DELAY_MS;
  let pending: { paths: Set<string>; prefixes: Set<string> } | null = null;
  const flush = (): void => {
    const batch = pending!;
    pending = null;
    send([...batch.paths], [...batch.prefixes]);
  };
  function publish(paths: readonly string[], prefixes: readonly string[]): void {
    if (!pending) {
      pending = { paths: new Set(), prefixes: new Set() };
      if (publishDelayMs > 0) setTimeout(flush, publishDelayMs);
      else setImmediate(flush);
    }
    for (const p of paths) pending.paths.add(p);
    for (const p of prefixes) pending.prefixes.add(p);
  }

  // Disabled here (maxBytes 0) still announces its writes: other replicas may cache.
  const enabled = maxBytes > 0;

  function invalidate(paths: readonly string[], prefixes: readonly string[] = []): void {
    if (paths.length === 0 && prefixes.length === 0) return;
    if (enabled) {
      for (const p of paths) touchPath(p);
      for (const p of prefixes) touchPrefix(p);
    }
    publish(paths, prefixes);
  }

  /** Runs a write and invalidates what it touched once it settled (applied or not). */
  async function writing<T>(paths: readonly string[], prefixes: readonly string[], fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } finally {
      invalidate(paths, prefixes);
    }
  }

  /**
   * A cacheable read: served from the cache when fresh, else loaded (see `load`). An entry
   * past half its life is still served, and its hit starts a background re-read: an entry
   * in use is replaced before it expires, so its readers do not wait for the database,
   * and none is ever served past its TTL.
   */
  async function read(path: string, prefix: string | null): Promise<Loaded> {
    const t = now();
    const hit = freshHit(path, prefix, t);
    if (hit) return hit;
    stats.misses++;
    return loadShared(path, prefix, t);
  }

  /** The item cached for a read of `path` (with `prefix`), if still fresh: a hit (served). */
  function freshHit(path: string, prefix: string | null, t: number): Item | undefined {
    const hit = items.get(path);
    if (!hit || hit.prefix !== prefix || hit.until <= t) return undefined;
    served(hit, t);
    return hit;
  }

  /** Counts a hit on a fresh item; past half its life it also starts one background re-read. */
  function served(item: Item, t: number): void {
    item.used = true;
    stats.hits++;
    if (item.refreshAt > t || slots.get(item.path)?.load) return;
    stats.refreshes++;
    // A failed refresh changes nothing: the entry expires as it would have.
    loadShared(item.path, item.prefix, t).catch(() => undefined);
  }

  /** What a miss (or a refresh) of a `get` item (no prefix) or a `getWithLast` item reads. */
  async function load(path: string, prefix: string | null): Promise<Loaded> {
    if (prefix === null) return { value: await inner.get(path), last: null };
    const { entry, last } = await inner.getWithLast(path, prefix);
    return { value: entry, last };
  }

  /**
   * One load per path at a time: callers arriving while it runs share it, unless an
   * invalidation came in between (they start their own). Cached unless invalidated meanwhile.
   */
  async function loadShared(path: string, prefix: string | null, t: number): Promise<Loaded> {
    let slot = slots.get(path);
    if (!slot) slots.set(path, (slot = { version: 0, readers: 0, load: null }));
    slot.readers++;
    try {
      const shared = slot.load;
      if (shared !== null && shared.prefix === prefix && shared.version === slot.version && shared.epoch === epoch) return await shared.promise;
      if (prefix !== null) own(prefix, path);
      const started = { prefix, version: slot.version, epoch, promise: load(path, prefix) };
      slot.load = started;
      let loaded = await started.promise.finally(() => {
        if (slot.load === started) slot.load = null;
      });
      if (slot.version === started.version && epoch === started.epoch) {
        loaded = sameAsCached(items.get(path), prefix, loaded);
        const size = ITEM_OVERHEAD + path.length + (prefix?.length ?? 0) + (loaded.value?.length ?? 0) + (loaded.last ? loaded.last.path.length + loaded.last.value.length : 0);
        // Each entry lives between half the TTL and all of it: entries cached together (a
        // warm-up, a restart) do not all expire, and hit the database, together.
        const life = ttlMs * (0.5 + Math.random() / 2);
        store(path, { path, prefix, value: loaded.value, last: loaded.last, bytes: size, until: t + life, refreshAt: t + life / 2, used: false });
      }
      return loaded;
    } finally {
      slot.readers--;
      if (slot.readers === 0) {
        slots.delete(path);
        if (prefix !== null && items.get(path)?.prefix !== prefix) disown(prefix, path);
      }
    }
  }

  /**
   * A re-read that found the bytes already cached (a refresh of an unchanged row) keeps
   * the cached Buffer objects: what readers derived from them and keyed by them (the
   * barrier's decryption, the KV engine's parsed metadata and answers) stays valid instead
   * of being decrypted and built again on the next read. Equal ciphertext is the same row
   * (every encryption draws a new nonce).
   */
  function sameAsCached(prev: Item | undefined, prefix: string | null, loaded: Loaded): Loaded {
    if (!prev || prev.prefix !== prefix) return loaded;
    const value = loaded.value !== null && prev.value !== null && loaded.value.equals(prev.value) ? prev.value : loaded.value;
    const last =
      loaded.last !== null && prev.last !== null && loaded.last.path === prev.last.path && loaded.last.value.equals(prev.last.value) ? prev.last : loaded.last;
    return value === loaded.value && last === loaded.last ? loaded : { value, last };
  }

  function trackedTx(tx: StorageTx, touched: { paths: string[]; prefixes: string[] }): StorageTx {
    return {
      get: (path, options) => tx.get(path, options),
      list: (prefix) => tx.list(prefix),
      async put(path, value) {
        touched.paths.push(path);
        await tx.put(path, value);
      },
      async insert(path, value) {
        touched.paths.push(path);
        await tx.insert(path, value);
      },
      async delete(path) {
        touched.paths.push(path);
        await tx.delete(path);
      },
      async replace(deletes, puts) {
        touched.paths.push(...deletes, ...puts.map((p) => p.path));
        await tx.replace(deletes, puts);
      },
      async deletePrefix(prefix) {
        touched.prefixes.push(prefix);
        return tx.deletePrefix(prefix);
      },
    };
  }

  // Other origins: the last number heard and when. A skipped number, or a known origin
  // silent for SILENT_BEATS heartbeats, means invalidations may have been lost.
  const heartbeatMs = deps.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const peers = new Map<string, { seq: number; heard: number }>();
  function heard(message: Message): void {
    if (typeof message.seq !== 'number') return;
    const peer = peers.get(message.origin);
    if (peer && message.seq !== peer.seq + 1) purge();
    peers.set(message.origin, { seq: message.seq, heard: now() });
  }
  let beat: NodeJS.Timeout | null = null;
  function tick(): void {
    if (!publishedSince) send([], []);
    publishedSince = false;
    const t = now();
    for (const [id, peer] of peers) {
      if (t - peer.heard < SILENT_BEATS * heartbeatMs) continue;
      // Heard again later, it counts as new: nothing before that is trusted anyway.
      peers.delete(id);
      purge();
    }
  }

  // Reads below the cache and every write (the same for both views).
  const below: Omit<Storage, 'get' | 'getWithLast'> = {
    getMany: (paths) => inner.getMany(paths),
    list: (prefix) => inner.list(prefix),
    getGuarded: (path) => inner.getGuarded(path),
    put: (path, value) => writing([path], [], () => inner.put(path, value)),
    delete: (path) => writing([path], [], () => inner.delete(path)),
    deletePrefix: (prefix) => writing([], [prefix], () => inner.deletePrefix(prefix)),
    applyIf: (path, guard, value, deletes, puts) =>
      writing([path, ...deletes, ...puts.map((p) => p.path)], [], () => inner.applyIf(path, guard, value, deletes, puts)),
    async transaction(fn) {
      const touched = { paths: [] as string[], prefixes: [] as string[] };
      try {
        return await inner.transaction((tx) => fn(trackedTx(tx, touched)));
      } finally {
        invalidate(touched.paths, touched.prefixes);
      }
    },
  };
  const uncached: Storage = { ...below, get: (path) => inner.get(path), getWithLast: (path, prefix) => inner.getWithLast(path, prefix) };

  return {
    ...below,
    uncached,
    stats,
    purge,
    async start() {
      // Every replica announces itself, even with its own cache disabled: others may cache.
      if (heartbeatMs > 0 && !beat) {
        beat = setInterval(tick, heartbeatMs);
        beat.unref();
      }
      if (!enabled) return;
      const mine = JSON.stringify({ origin }).slice(0, -1);
      await bus.subscribe(ENTRY_CHANNEL, (raw) => {
        if (raw.startsWith(mine)) return;
        let message: Message;
        try {
          message = JSON.parse(raw) as Message;
        } catch {
          purge();
          return;
        }
        if (message === null || typeof message !== 'object') return purge();
        if (!Array.isArray(message.paths) || !Array.isArray(message.prefixes)) return purge();
        heard(message);
        for (const p of message.paths) if (typeof p === 'string') touchPath(p);
        for (const p of message.prefixes) if (typeof p === 'string') touchPrefix(p);
      });
      bus.onReconnect(() => {
        // What was numbered before the gap is no reference for what comes after it.
        peers.clear();
        purge();
      });
    },
    stop() {
      if (beat) clearInterval(beat);
      beat = null;
    },
    async get(path) {
      if (!enabled) return inner.get(path);
      return (await read(path, null)).value;
    },
    async getWithLast(path, prefix) {
      if (!enabled || !prefix.endsWith('/')) return inner.getWithLast(path, prefix);
      const r = await read(path, prefix);
      return { entry: r.value, last: r.last };
    },
    peekWithLast(path, prefix) {
      if (!enabled || !prefix.endsWith('/')) return undefined;
      const hit = freshHit(path, prefix, now());
      if (!hit) return undefined;
      return (hit.pair ??= { entry: hit.value, last: hit.last, item: hit });
    },
    stillCached(pair) {
      const item = (pair as Partial<CachedPair>).item;
      if (item === undefined || item.dropped) return false;
      const t = now();
      if (item.until <= t) return false;
      served(item, t);
      return true;
    },
  };
}
