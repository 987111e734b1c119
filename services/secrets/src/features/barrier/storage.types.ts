// The storage contract (issue 31, item 3): one interface in the anchor's shape, Vault's
// `logical.Storage` (Get, Put, Delete, List), plus the transactional and conditional
// operations the KV v2 engine needs. Every layer implements it: the PostgreSQL entry store
// (barrier.store.ts) and the in-memory one of the tests (test/memory-store.ts) hold opaque
// bytes, the physical cache (entry-cache.ts) wraps either, and the barrier
// (barrier.service.ts) is the same interface over plaintext, encrypting on the way in and
// decrypting on the way out. `test/storage-contract.ts` is the suite they all pass.
//
// Nothing here is about caching: the cache's synchronous fast path is `LatestPeek`, handed
// only to the KV v2 read path (kv/kv-reads.ts).

/** One stored row. */
export interface StorageEntry {
  readonly path: string;
  readonly value: Buffer;
}

/** A path's value and the greatest path under a prefix with its value (KV v2: metadata and newest version). */
export interface WithLast {
  readonly entry: Buffer | null;
  readonly last: StorageEntry | null;
}

declare const storageGuardBrand: unique symbol;

/**
 * Opaque "unchanged since read" token of one path, made by the store that read it
 * (`getGuarded`, `applyIf`) and handed back to it unchanged through every wrapper. A path
 * is unchanged while it holds the same bytes (or is still absent). The barrier's
 * ciphertexts carry a random nonce, so through it equal bytes mean no write in between
 * (no ABA); a store of values that may repeat would see A-B-A as unchanged.
 */
export interface StorageGuard {
  readonly [storageGuardBrand]: true;
}

export interface Guarded {
  readonly value: Buffer | null;
  readonly guard: StorageGuard;
}

/** Row locks a transaction's read may take until the transaction ends. */
export interface TxReadOptions {
  /** SELECT ... FOR UPDATE */
  forUpdate?: boolean;
  /** SELECT ... FOR SHARE */
  forShare?: boolean;
}

/** What a transaction's function may do; everything it writes commits together or not at all. */
export interface StorageTx {
  get(path: string, options?: TxReadOptions): Promise<Buffer | null>;
  /** Insert or replace. */
  put(path: string, value: Buffer): Promise<void>;
  /**
   * Insert only: throws `EntryConflictError` when the path exists. Unless the function
   * catches it, the transaction rolls back and runs again (see `Storage.transaction`).
   */
  insert(path: string, value: Buffer): Promise<void>;
  delete(path: string): Promise<void>;
  /** Deletes `deletes` and inserts or replaces `puts` (one round trip; paths disjoint). */
  replace(deletes: readonly string[], puts: readonly StorageEntry[]): Promise<void>;
  deletePrefix(prefix: string): Promise<number>;
  list(prefix: string): Promise<string[]>;
}

export interface Storage {
  get(path: string): Promise<Buffer | null>;
  /** Insert or replace. */
  put(path: string, value: Buffer): Promise<void>;
  delete(path: string): Promise<void>;
  /**
   * Every stored path that starts with `prefix`, in byte order (UTF-8, the "C" collation).
   * Vault's List answers the next level only; the KV engine folds this into that
   * (kv-versions.ts `childrenOf`).
   */
  list(prefix: string): Promise<string[]>;
  /** Deletes every path that starts with `prefix`; how many there were. */
  deletePrefix(prefix: string): Promise<number>;
  /** The paths of `paths` that exist (one round trip). */
  getMany(paths: readonly string[]): Promise<Map<string, Buffer>>;
  /** `path` and the greatest path under `prefix`, in one round trip (KV v2 latest-version reads). */
  getWithLast(path: string, prefix: string): Promise<WithLast>;
  /** Reads `path` (no lock, no transaction: one round trip) with a guard for `applyIf`. */
  getGuarded(path: string): Promise<Guarded>;
  /**
   * Conditional write (KV v2 check-and-set: one round trip, no lock held between round
   * trips): if `path` is still as `guard` saw it, writes `value` there, deletes `deletes`
   * and inserts or replaces `puts`, all or nothing; otherwise changes nothing. Returns the
   * guard of what it wrote (for the path's next conditional write), or null when the guard
   * no longer held (re-read and retry). `guard` must be of `path`; all paths disjoint.
   */
  applyIf(path: string, guard: StorageGuard, value: Buffer, deletes: readonly string[], puts: readonly StorageEntry[]): Promise<StorageGuard | null>;
  /**
   * Runs `fn` in one transaction: its writes commit together when it resolves and none
   * does when it throws. An insert that meets an existing row (`EntryConflictError`) rolls
   * it back and runs `fn` again, a few times at most; then the error is thrown.
   */
  transaction<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T>;
}

/**
 * The physical cache's synchronous fast path (docs/secrets.md, "Eighth round"): a cached
 * KV v2 latest-version read finishes without waiting on a single promise. Only the KV v2
 * read path is given it; everything else sees `Storage`.
 */
export interface LatestPeek {
  /**
   * What `getWithLast(path, prefix)` would answer, when the cache holds it fresh now
   * (counted and refreshed ahead like a hit); otherwise undefined. The same object comes
   * back for as long as the cache holds the same pair.
   */
  peekWithLast(path: string, prefix: string): WithLast | undefined;
  /**
   * Whether a pair `peekWithLast` handed out is still the cache's current, fresh answer
   * (then it counts as a hit, as a peek would): what a reader derived from it may be reused
   * without looking the pair up again.
   */
  stillCached(pair: WithLast): boolean;
}

/** What the stores here keep in a guard: the bytes they read or wrote at the path. */
interface StoredState {
  readonly path: string;
  readonly stored: Buffer | null;
}

/** The guard of `stored` (null: no row) at `path`, as the PostgreSQL and in-memory stores make theirs. */
export function guardOfStored(path: string, stored: Buffer | null): StorageGuard {
  const state: StoredState = { path, stored };
  return state as unknown as StorageGuard;
}

/** The bytes a `guardOfStored` guard holds; refuses a guard of another path. */
export function storedOfGuard(guard: StorageGuard, path: string): Buffer | null {
  const state = guard as unknown as Partial<StoredState>;
  if (state.path !== path) throw new Error(`applyIf: guard of ${String(state.path)} used for ${path}`);
  return state.stored ?? null;
}

export class EntryConflictError extends Error {
  override readonly name = 'EntryConflictError';
}

/** Attempts of a transaction whose inserts keep meeting rows written meanwhile. */
export const TX_ATTEMPTS = 5;

/**
 * Runs `attempt` (one transaction) again while it fails with `EntryConflictError`, after
 * a short random pause, TX_ATTEMPTS times at most: how every store implements
 * `Storage.transaction`'s retry.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof EntryConflictError) || n >= TX_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5 * n)));
    }
  }
}

/** `applyIf` writes the guarded path, deletes and puts in one statement: they must not overlap. */
function nthPath(guardPath: string, deletes: readonly string[], puts: readonly { path: string }[], i: number): string {
  return i === 0 ? guardPath : i <= deletes.length ? (deletes[i - 1] as string) : (puts[i - 1 - deletes.length] as { path: string }).path;
}

export function assertDisjointPaths(guardPath: string, deletes: readonly string[], puts: readonly { path: string }[]): void {
  const count = 1 + deletes.length + puts.length;
  // A write has a handful (the guard, the pruned version, the new one): compared pairwise,
  // no Set and no copies per call. Many (max_versions lowered a long way): a Set.
  const seen = count > 16 ? new Set<string>() : null;
  for (let i = 0; i < count; i++) {
    const p = nthPath(guardPath, deletes, puts, i);
    if (seen !== null) {
      if (seen.has(p)) throw new Error(`applyIf: ${p} appears more than once`);
      seen.add(p);
      continue;
    }
    for (let j = 0; j < i; j++) if (nthPath(guardPath, deletes, puts, j) === p) throw new Error(`applyIf: ${p} appears more than once`);
  }
}
