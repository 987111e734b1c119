// In-memory entry store (the storage contract, src/features/barrier/storage.types.ts) and
// barrier store for unit tests of the services (no I/O). Transactions are serialised by a
// mutex and applied atomically at the end, like the PostgreSQL store; it passes the same
// contract suite (test/storage-contract.ts).
import { AlreadyInitializedError, type BarrierRecord, type BarrierStore } from '../src/features/barrier/barrier.types';
import {
  assertDisjointPaths,
  EntryConflictError,
  guardOfStored,
  retryOnConflict,
  storedOfGuard,
  type Storage,
  type StorageEntry,
  type StorageTx,
} from '../src/features/barrier/storage.types';

export interface MemoryStores {
  /** The committed rows (tests may change them behind the store's back: "another writer"). */
  entries: Map<string, Buffer>;
  entryStore: Storage;
  barrierStore: BarrierStore;
}

/** Byte order of the paths' UTF-8 (PostgreSQL's "C" collation), not JavaScript's UTF-16 order. */
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function createMemoryStores(): MemoryStores {
  const entries = new Map<string, Buffer>();
  let record: BarrierRecord | null = null;
  let lock: Promise<void> = Promise.resolve();

  const sortedUnder = (prefix: string, source: Map<string, Buffer | null>): string[] =>
    [...source.entries()]
      .filter(([p, v]) => v !== null && p.startsWith(prefix))
      .map(([p]) => p)
      .sort(byteOrder);

  /** One attempt: runs `fn` holding the mutex; its writes land only if it resolves. */
  async function attempt<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    let release!: () => void;
    const previous = lock;
    lock = new Promise<void>((r) => (release = r));
    await previous;
    const overlay = new Map<string, Buffer | null>();
    const current = (path: string): Buffer | null => (overlay.has(path) ? (overlay.get(path) ?? null) : (entries.get(path) ?? null));
    const view = (): Map<string, Buffer | null> => {
      const merged = new Map<string, Buffer | null>(entries);
      for (const [k, v] of overlay) merged.set(k, v);
      return merged;
    };
    const tx: StorageTx = {
      get: async (path) => current(path),
      put: async (path, value) => void overlay.set(path, value),
      insert: async (path, value) => {
        if (current(path) !== null) throw new EntryConflictError(path);
        overlay.set(path, value);
      },
      delete: async (path) => void overlay.set(path, null),
      replace: async (deletes, puts) => {
        for (const p of puts) if (deletes.includes(p.path)) throw new Error(`replace: ${p.path} is both deleted and written`);
        for (const p of deletes) overlay.set(p, null);
        for (const p of puts) overlay.set(p.path, p.value);
      },
      deletePrefix: async (prefix) => {
        const victims = sortedUnder(prefix, view());
        for (const p of victims) overlay.set(p, null);
        return victims.length;
      },
      list: async (prefix) => sortedUnder(prefix, view()),
    };
    try {
      const result = await fn(tx);
      for (const [k, v] of overlay) {
        if (v === null) entries.delete(k);
        else entries.set(k, v);
      }
      return result;
    } finally {
      release();
    }
  }
  const runTx = <T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> => retryOnConflict(() => attempt(fn));

  const entryStore: Storage = {
    get: async (path) => entries.get(path) ?? null,
    getMany: async (paths) => {
      const out = new Map<string, Buffer>();
      for (const p of paths) {
        const v = entries.get(p);
        if (v) out.set(p, v);
      }
      return out;
    },
    getWithLast: async (path, prefix) => {
      const under = sortedUnder(prefix, entries);
      const lastPath = under[under.length - 1];
      const last: StorageEntry | null = lastPath === undefined ? null : { path: lastPath, value: entries.get(lastPath) as Buffer };
      return { entry: entries.get(path) ?? null, last };
    },
    getGuarded: async (path) => {
      const value = entries.get(path) ?? null;
      return { value, guard: guardOfStored(path, value) };
    },
    put: (path, value) => attempt((tx) => tx.put(path, value)),
    delete: (path) => attempt((tx) => tx.delete(path)),
    deletePrefix: (prefix) => attempt((tx) => tx.deletePrefix(prefix)),
    list: async (prefix) => sortedUnder(prefix, entries),
    // As the PostgreSQL statement: the stored bytes must be the guard's, then all or
    // nothing, serialised with transactions.
    applyIf: (path, guard, value, deletes, puts) =>
      attempt(async (tx) => {
        const expected = storedOfGuard(guard, path);
        assertDisjointPaths(path, deletes, puts);
        const stored = await tx.get(path);
        const holds = expected === null ? stored === null : stored !== null && stored.equals(expected);
        if (!holds) return null;
        await tx.put(path, value);
        await tx.replace(deletes, puts);
        return guardOfStored(path, value);
      }),
    transaction: runTx,
  };

  const barrierStore: BarrierStore = {
    load: async () => record,
    create: async (next, setup) => {
      await attempt(async (tx) => {
        if (record) throw new AlreadyInitializedError();
        await setup(tx);
      });
      record = next;
    },
  };
  return { entries, entryStore, barrierStore };
}
