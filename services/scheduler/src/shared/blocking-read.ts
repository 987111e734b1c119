// What services need from the state layer: the Prisma client for plain reads, the state
// store for writes (withWrite) and blocking reads (spec "Blocking queries").
import type { PrismaClient } from '@selfstack/db';
import type { StateStore } from '@selfstack/state';
import type { Db, Indexed, ReadOptions } from './common.types';
import type { PointReads } from './point-reads.store';

export interface SchedulerState {
  prisma: PrismaClient;
  state: StateStore<Db>;
  /** Table indexes and the hot point reads, as prepared statements (point-reads.store.ts). */
  reads: PointReads;
}

/**
 * Coalesces concurrent index reads: callers arriving before a batch's query is sent share
 * it; a query already sent is never joined, so every caller's index is read after the
 * caller started (a woken reader must not be handed an index from before its wake-up).
 * With 1,000 readers woken by one write this is a handful of queries instead of 1,000.
 */
class IndexBatcher {
  private pending = new Map<string, { tables: readonly string[]; waiters: Array<{ resolve(v: number): void; reject(e: unknown): void }> }>();

  constructor(private readonly reads: PointReads) {}

  read(tables: readonly string[]): Promise<number> {
    const key = tables.join('\0');
    return new Promise<number>((resolve, reject) => {
      let batch = this.pending.get(key);
      if (!batch) {
        batch = { tables, waiters: [] };
        this.pending.set(key, batch);
        const b = batch;
        setImmediate(() => {
          this.pending.delete(key);
          this.reads.index(b.tables).then(
            (v) => b.waiters.forEach((w) => w.resolve(v)),
            (e: unknown) => b.waiters.forEach((w) => w.reject(e)),
          );
        });
      }
      batch.waiters.push({ resolve, reject });
    });
  }
}

/**
 * Loads in flight, by (key, index). A load for index I starts after I was read, so its
 * rows include every write up to I (writers commit in index order): readers that read the
 * same index and ask the same question may share it. Only loads still in flight are
 * shared, so nothing is kept once the woken readers have their answer.
 */
class SharedLoads {
  private readonly inFlight = new Map<string, { index: number; value: Promise<unknown> }>();

  get<T>(key: string, index: number, load: () => Promise<T>): Promise<T> {
    const current = this.inFlight.get(key);
    if (current && current.index === index) return current.value as Promise<T>;
    const value = load();
    const entry = { index, value };
    this.inFlight.set(key, entry);
    const done = (): void => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
    value.then(done, done);
    return value;
  }
}

/**
 * Point reads not yet sent, by key: callers arriving before a read is sent (in the same
 * event-loop turn) share it, so each one's answer is read after it asked. A thousand
 * blocking readers re-arming at once on one job cost a handful of statements instead of a
 * thousand queued on the pool (where a write's wake-up read would wait behind them).
 */
class PendingReads {
  private readonly pending = new Map<string, { read: () => Promise<unknown>; waiters: Array<{ resolve(v: unknown): void; reject(e: unknown): void }> }>();

  get<T>(key: string, read: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let batch = this.pending.get(key);
      if (!batch) {
        const b = { read: read as () => Promise<unknown>, waiters: [] as Array<{ resolve(v: unknown): void; reject(e: unknown): void }> };
        batch = b;
        this.pending.set(key, b);
        setImmediate(() => {
          this.pending.delete(key);
          b.read().then(
            (v) => b.waiters.forEach((w) => w.resolve(v)),
            (e: unknown) => b.waiters.forEach((w) => w.reject(e)),
          );
        });
      }
      batch.waiters.push({ resolve: resolve as (v: unknown) => void, reject });
    });
  }
}

interface PerStore {
  batcher: IndexBatcher;
  loads: SharedLoads;
  pendingReads: PendingReads;
}

const perStore = new WeakMap<PointReads, PerStore>();

function perStoreOf(reads: PointReads): PerStore {
  let p = perStore.get(reads);
  if (!p) {
    p = { batcher: new IndexBatcher(reads), loads: new SharedLoads(), pendingReads: new PendingReads() };
    perStore.set(reads, p);
  }
  return p;
}

/** A blockingRead shareKey: the question and every input its load depends on. */
export function shareKey(...parts: ReadonlyArray<string | boolean | null | readonly string[]>): string {
  return JSON.stringify(parts);
}

/**
 * A blocking read over `tables`: the index is read before the data, so a write that lands
 * between the two reads is seen again by the next blocking call rather than skipped. A
 * reader woken by a write uses that write's index instead (the store's WakeHint: every
 * write up to it is visible to a load started now), which saves the woken readers an index
 * query and a batch round before their load.
 *
 * `shareKey` names the question `load` answers (every input it depends on): concurrent
 * readers with the same key and index (the readers one write wakes) share one load instead
 * of sending one query each. Results are then shared objects: callers must not mutate them.
 */
export function blockingRead<T>(
  s: SchedulerState,
  tables: readonly string[],
  opts: ReadOptions,
  load: (db: Db, index: number) => Promise<T>,
  shareKey?: string,
): Promise<Indexed<T>> {
  const { batcher, loads } = perStoreOf(s.reads);
  const key = shareKey === undefined ? undefined : `${tables.join(',')}\0${shareKey}`;
  return s.state.blockingQuery(
    { minIndex: opts.minIndex, waitMs: opts.waitMs, tables, ...(opts.signal ? { signal: opts.signal } : {}) },
    async (hint) => {
      const index = hint ? hint.index : await batcher.read(tables);
      const value = key === undefined ? await load(s.prisma, index) : await loads.get(key, index, () => load(s.prisma, index));
      return { index, value };
    },
  );
}

/**
 * A blocking read whose `read` answers the value together with the index of `tables` in
 * one statement (a point read, point-reads.store.ts): one round trip instead of two. Readers woken
 * by the same write (same hint index) with the same `shareKey` share one statement, and so
 * do readers asking in the same event-loop turn (PendingReads).
 */
export function blockingPointRead<T>(
  s: SchedulerState,
  tables: readonly string[],
  opts: ReadOptions,
  read: () => Promise<Indexed<T>>,
  shareKey: string,
): Promise<Indexed<T>> {
  const { loads, pendingReads } = perStoreOf(s.reads);
  const key = `${tables.join(',')}\0${shareKey}`;
  return s.state.blockingQuery(
    { minIndex: opts.minIndex, waitMs: opts.waitMs, tables, ...(opts.signal ? { signal: opts.signal } : {}) },
    (hint) => (hint ? loads.get(key, hint.index, read) : pendingReads.get(key, read)),
  );
}

/**
 * The result of a whole-table load, kept for the table index it was read at. A load for
 * index I starts after I was read, so its rows include every write up to I: callers that
 * read the same index may share it (in flight or finished). A new index means a new load.
 */
export class IndexedSnapshot<T> {
  private cached: { index: number; value: Promise<T> } | null = null;

  constructor(private readonly load: (db: Db) => Promise<T>) {}

  get(db: Db, index: number): Promise<T> {
    const c = this.cached;
    if (c && c.index === index) return c.value;
    const value = this.load(db);
    if (!c || index > c.index) {
      const entry = { index, value };
      this.cached = entry;
      value.catch(() => {
        if (this.cached === entry) this.cached = null;
      });
    }
    return value;
  }
}

/**
 * Results derived from a shared value (a snapshot, a shared load), computed once per
 * (value, key): the readers one write wakes ask the same question of the same snapshot, so
 * they get the same answer object (and `respond` serialises it once). Entries live as long
 * as the value they derive from; at most `maxKeys` questions are kept per value.
 */
export class DerivedCache {
  private readonly byBase = new WeakMap<object, Map<string, unknown>>();

  constructor(private readonly maxKeys = 64) {}

  get<V>(base: object, key: string, compute: () => V): V {
    let m = this.byBase.get(base);
    if (!m) {
      m = new Map();
      this.byBase.set(base, m);
    }
    if (m.has(key)) return m.get(key) as V;
    const value = compute();
    if (m.size >= this.maxKeys) m.clear();
    m.set(key, value);
    return value;
  }
}
