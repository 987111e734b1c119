// Storage contracts of the barrier (issue 3, item 2). The physical layer (EntryStore)
// only ever sees ciphertext; the Barrier encrypts on the way in and decrypts on the way out.

/** One stored row: the path is plaintext (as in Vault), the value is barrier ciphertext. */
export interface RawEntry {
  readonly path: string;
  readonly value: Buffer;
}

export interface RawEntryTx {
  /** `forUpdate`/`forShare`: row lock until the transaction ends (FOR UPDATE / FOR SHARE). */
  get(path: string, options?: { forUpdate?: boolean; forShare?: boolean }): Promise<Buffer | null>;
  /** Insert or replace. */
  put(path: string, value: Buffer): Promise<void>;
  /** Insert only; throws `EntryConflictError` when the path exists (the transaction is retried). */
  insert(path: string, value: Buffer): Promise<void>;
  delete(path: string): Promise<void>;
  /** Deletes `deletes` and inserts or replaces `puts` in one statement (one round trip);
   * a path must not be in both lists. */
  replace(deletes: readonly string[], puts: readonly RawEntry[]): Promise<void>;
  deletePrefix(prefix: string): Promise<number>;
  listPaths(prefix: string): Promise<string[]>;
}

export interface EntryStore extends Omit<RawEntryTx, 'get' | 'replace'> {
  /**
   * With `cached`, a store with a physical cache (entry-cache.ts) may answer from it;
   * without, it always reads the database.
   */
  get(path: string, options?: { cached?: boolean }): Promise<Buffer | null>;
  getMany(paths: readonly string[]): Promise<RawEntry[]>;
  /**
   * `path` plus the greatest path under `prefix` (one round trip; KV v2 latest-version
   * reads). A store with a physical cache may answer it from the cache.
   */
  getWithLast(path: string, prefix: string): Promise<{ entry: Buffer | null; last: RawEntry | null }>;
  /**
   * What `getWithLast` would answer, when a physical cache can answer it at once (a fresh
   * hit, counted and refreshed ahead like one); otherwise undefined. Lets a cached read
   * finish without waiting on promises. The same object comes back for as long as the
   * cache holds the same pair. Stores without a cache leave it out.
   */
  peekWithLast?(path: string, prefix: string): { entry: Buffer | null; last: RawEntry | null } | undefined;
  /**
   * Whether a pair `peekWithLast` handed out is still the cache's current, fresh answer
   * (then it counts as a hit, as a peek would): what a reader derived from it may be
   * reused without looking the pair up again.
   */
  stillCached?(pair: object): boolean;
  /**
   * Conditional write in one autocommit statement (one round trip, no lock held across
   * round trips): if the stored bytes at `guardPath` start with `expected` (`null`: no
   * row), sets `guardPath` to `next`, deletes `deletes` and inserts or replaces `puts`, all
   * or nothing; otherwise changes nothing. Returns whether it applied. Paths must be
   * disjoint. The barrier passes a ciphertext's header (key term and random nonce, unique
   * to one encryption: barrier-crypto.ts `guardOf`), not the whole value.
   */
  applyIf(guardPath: string, expected: Buffer | null, next: Buffer, deletes: readonly string[], puts: readonly RawEntry[]): Promise<boolean>;
  transaction<T>(fn: (tx: RawEntryTx) => Promise<T>): Promise<T>;
}

/** The barrier row: seal configuration (not secret) and the keyring encrypted by the root key. */
export interface BarrierRecord {
  readonly secretShares: number;
  readonly secretThreshold: number;
  readonly keyring: Buffer;
}

export interface BarrierStore {
  load(): Promise<BarrierRecord | null>;
  /**
   * Creates the barrier row and runs `setup` in the same transaction; throws
   * `AlreadyInitializedError` when another process initialised first.
   */
  create(record: BarrierRecord, setup: (tx: RawEntryTx) => Promise<void>): Promise<void>;
}

/** `applyIf` writes the guard path, deletes and puts in one statement: they must not overlap. */
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

export class EntryConflictError extends Error {
  override readonly name = 'EntryConflictError';
}

export class AlreadyInitializedError extends Error {
  override readonly name = 'AlreadyInitializedError';
  constructor() {
    super('Vault is already initialized');
  }
}

/** Decrypted view used by every feature. */
export interface StorageTx {
  /** `forUpdate`/`forShare`: row lock until the transaction ends (FOR UPDATE / FOR SHARE). */
  get(path: string, options?: { forUpdate?: boolean; forShare?: boolean }): Promise<Buffer | null>;
  put(path: string, value: Buffer): Promise<void>;
  insert(path: string, value: Buffer): Promise<void>;
  delete(path: string): Promise<void>;
  /** Deletes `deletes` and inserts or replaces `puts` in one round trip (paths disjoint). */
  replace(deletes: readonly string[], puts: readonly { path: string; value: Buffer }[]): Promise<void>;
  deletePrefix(prefix: string): Promise<number>;
  listPaths(prefix: string): Promise<string[]>;
}

declare const entryGuardBrand: unique symbol;

/**
 * Opaque "unchanged since read" token of one path: the stored ciphertext (or its
 * absence). Barrier ciphertext carries a random nonce, so every write of a path stores
 * different bytes, and the same header (term and nonce: what the conditional write
 * compares) means no write happened in between (no ABA).
 */
export interface EntryGuard {
  readonly [entryGuardBrand]: true;
}

export interface Storage extends Omit<StorageTx, 'get' | 'replace'> {
  /** With `cached`, may be answered by the physical cache (KV data reads only). */
  get(path: string, options?: { cached?: boolean }): Promise<Buffer | null>;
  getMany(paths: readonly string[]): Promise<Map<string, Buffer>>;
  /** Served by the physical cache when there is one (KV v2 latest-version reads). */
  getWithLast(path: string, prefix: string): Promise<{ entry: Buffer | null; last: { path: string; value: Buffer } | null }>;
  /**
   * `getWithLast`'s answer if the physical cache has it now (synchronous), else undefined;
   * the same object for as long as the cache holds the same pair.
   */
  peekWithLast(path: string, prefix: string): { entry: Buffer | null; last: { path: string; value: Buffer } | null } | undefined;
  /** Whether a pair `peekWithLast` returned is still the cache's current answer (and unsealed). */
  stillCached(pair: object): boolean;
  /**
   * Reads `path` without a lock or transaction (one round trip), with a guard for `applyIf`.
   * With `cached`, the state this process last read or wrote there through getGuarded /
   * applyIf may be returned instead, without a round trip (`cached: true`): it may be stale
   * (another replica wrote since), which `applyIf` detects. A caller must not answer an
   * error decided on a cached state before confirming it with a fresh read.
   */
  getGuarded(path: string, options?: { cached?: boolean }): Promise<{ value: Buffer | null; guard: EntryGuard; cached: boolean }>;
  /**
   * Optimistic write (one round trip): if `path` is still as `guard` (from `getGuarded` of
   * the same path) saw it, writes `value` there, deletes `deletes` and inserts or replaces
   * `puts`, atomically; otherwise changes nothing. Returns whether it applied; on `false`
   * re-read and retry. Paths must be disjoint.
   */
  applyIf(
    path: string,
    guard: EntryGuard,
    value: Buffer,
    deletes: readonly string[],
    puts: readonly { path: string; value: Buffer }[],
  ): Promise<boolean>;
  /** Runs `fn` in one database transaction; retried (up to a few times) on insert conflicts. */
  transaction<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T>;
}
