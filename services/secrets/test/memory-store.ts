// In-memory EntryStore/BarrierStore for unit tests of the services (no I/O). Transactions
// are serialised by a mutex and applied atomically at the end, like the Postgres store.
import {
  AlreadyInitializedError,
  assertDisjointPaths,
  EntryConflictError,
  type BarrierRecord,
  type BarrierStore,
  type EntryStore,
  type RawEntry,
  type RawEntryTx,
} from '../src/features/barrier/barrier.types';

export interface MemoryStores {
  entries: Map<string, Buffer>;
  entryStore: EntryStore;
  barrierStore: BarrierStore;
}

export function createMemoryStores(): MemoryStores {
  const entries = new Map<string, Buffer>();
  let record: BarrierRecord | null = null;
  let lock: Promise<void> = Promise.resolve();

  const sortedUnder = (prefix: string, source: Map<string, Buffer | null>): string[] =>
    [...source.entries()].filter(([p, v]) => v !== null && p.startsWith(prefix)).map(([p]) => p).sort();

  async function runTx<T>(fn: (tx: RawEntryTx) => Promise<T>): Promise<T> {
    let release!: () => void;
    const previous = lock;
    lock = new Promise<void>((r) => (release = r));
    await previous;
    const overlay = new Map<string, Buffer | null>();
    const view = (): Map<string, Buffer | null> => {
      const merged = new Map<string, Buffer | null>(entries);
      for (const [k, v] of overlay) merged.set(k, v);
      return merged;
    };
    const tx: RawEntryTx = {
      get: async (path) => (overlay.has(path) ? overlay.get(path) ?? null : entries.get(path) ?? null),
      put: async (path, value) => void overlay.set(path, value),
      insert: async (path, value) => {
        const existing = overlay.has(path) ? overlay.get(path) : entries.get(path);
        if (existing) throw new EntryConflictError(path);
        overlay.set(path, value);
      },
      delete: async (path) => void overlay.set(path, null),
      replace: async (deletes, puts) => {
        for (const p of deletes) overlay.set(p, null);
        for (const p of puts) overlay.set(p.path, p.value);
      },
      deletePrefix: async (prefix) => {
        const victims = sortedUnder(prefix, view());
        for (const p of victims) overlay.set(p, null);
        return victims.length;
      },
      listPaths: async (prefix) => sortedUnder(prefix, view()),
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

  const entryStore: EntryStore = {
    get: async (path) => entries.get(path) ?? null,
    getMany: async (paths) =>
      paths.flatMap((p): RawEntry[] => {
        const v = entries.get(p);
        return v ? [{ path: p, value: v }] : [];
      }),
    getWithLast: async (path, prefix) => {
      const under = [...entries.keys()].filter((p) => p.startsWith(prefix)).sort();
      const lastPath = under[under.length - 1];
      return {
        entry: entries.get(path) ?? null,
        last: lastPath === undefined ? null : { path: lastPath, value: entries.get(lastPath) as Buffer },
      };
    },
    put: (path, value) => runTx((tx) => tx.put(path, value)),
    insert: (path, value) => runTx((tx) => tx.insert(path, value)),
    delete: (path) => runTx((tx) => tx.delete(path)),
    deletePrefix: (prefix) => runTx((tx) => tx.deletePrefix(prefix)),
    listPaths: async (prefix) => [...entries.keys()].filter((p) => p.startsWith(prefix)).sort(),
    // Same semantics as the Postgres statement: the stored bytes must start with
    // `expected`, then apply all or nothing, serialised with transactions.
    applyIf: (guardPath, expected, next, deletes, puts) =>
      runTx(async (tx) => {
        assertDisjointPaths(guardPath, deletes, puts);
        const current = await tx.get(guardPath);
        const holds = expected === null ? current === null : current !== null && current.subarray(0, expected.length).equals(expected);
        if (!holds) return false;
        await tx.put(guardPath, next);
        await tx.replace(deletes, puts);
        return true;
      }),
    transaction: runTx,
  };

  const barrierStore: BarrierStore = {
    load: async () => record,
    create: async (next, setup) => {
      await runTx(async (tx) => {
        if (record) throw new AlreadyInitializedError();
        await setup(tx);
      });
      record = next;
    },
  };
  return { entries, entryStore, barrierStore };
}
