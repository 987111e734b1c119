// Seal state and the encrypted storage view (issue 3, items 1 and 2; reference §4.1-4.4).
//
// init:   random root key -> Shamir shares; random data key (term 1) in a keyring that is
//         encrypted by the root key and stored in the barrier row. The process stays sealed.
// unseal: shares are collected in memory (per process: each replica unseals on its own);
//         at the threshold they are combined and must authenticate the keyring.
// seal:   keys and progress are dropped from memory; `onSeal` hooks clear every cache.
import { randomBytes } from 'node:crypto';
import { badRequest, notInitializedError, sealedError, SecretsError } from '../../core/errors';
import { BarrierDecryptError, guardOf, newKey, open, seal, termOf } from './barrier-crypto';
import { combineShares, splitKey } from './shamir';
import {
  AlreadyInitializedError,
  EntryConflictError,
  type BarrierRecord,
  type BarrierStore,
  type EntryGuard,
  type EntryStore,
  type RawEntryTx,
  type RawEntry,
  type Storage,
  type StorageTx,
} from './barrier.types';

const KEYRING_AAD = 'core/keyring';
const MAX_TX_ATTEMPTS = 5;

/** What an `EntryGuard` holds: the path and its stored ciphertext when read. */
interface GuardState {
  readonly path: string;
  readonly stored: Buffer | null;
}

interface Keyring {
  activeTerm: number;
  keys: Map<number, Buffer>;
}

export interface SealStatus {
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
}

export interface InitResult {
  keys: Buffer[];
}

export interface Barrier extends Storage {
  isInitialized(): Promise<boolean>;
  isSealed(): boolean;
  status(): Promise<SealStatus>;
  /** `setup` runs unsealed inside the init transaction (root token, default policy, mounts). */
  initialize(shares: number, threshold: number, setup: (tx: StorageTx) => Promise<void>): Promise<InitResult>;
  submitUnsealKey(key: Buffer): Promise<SealStatus>;
  resetUnseal(): Promise<SealStatus>;
  seal(): void;
  onSeal(listener: () => void): void;
  onUnseal(listener: () => Promise<void>): void;
}

export function validateSealConfig(shares: number, threshold: number): void {
  if (!Number.isInteger(shares) || shares < 1) throw badRequest('shares must be at least one');
  if (!Number.isInteger(threshold) || threshold < 1) throw badRequest('threshold must be at least one');
  if (shares > 1 && threshold === 1) throw badRequest('threshold must be greater than one for multiple shares');
  if (shares > 255) throw badRequest('shares must be less than 256');
  if (threshold > 255) throw badRequest('threshold must be less than 256');
  if (threshold > shares) throw badRequest('threshold cannot be larger than shares');
}

function encodeKeyring(k: Keyring): Buffer {
  return Buffer.from(
    JSON.stringify({
      active_term: k.activeTerm,
      keys: [...k.keys].map(([term, key]) => ({ term, key: key.toString('base64') })),
    }),
  );
}

function decodeKeyring(raw: Buffer): Keyring {
  const parsed = JSON.parse(raw.toString('utf8')) as { active_term: number; keys: { term: number; key: string }[] };
  return { activeTerm: parsed.active_term, keys: new Map(parsed.keys.map((k) => [k.term, Buffer.from(k.key, 'base64')])) };
}

export function createBarrier(deps: { barrierStore: BarrierStore; entryStore: EntryStore }): Barrier {
  const { barrierStore, entryStore } = deps;
  let keyring: Keyring | null = null;
  let initializedCache = false;
  // The barrier row never changes once written (no rekey), so it is read from Postgres
  // only until it exists; sys/health and sys/seal-status then cost no query.
  let recordCache: BarrierRecord | null = null;
  const loadRecord = async (): Promise<BarrierRecord | null> => {
    if (recordCache) return recordCache;
    recordCache = await barrierStore.load();
    if (recordCache) initializedCache = true;
    return recordCache;
  };
  let progress: Buffer[] = [];
  const sealListeners: (() => void)[] = [];
  const unsealListeners: (() => Promise<void>)[] = [];

  const ring = (): Keyring => {
    if (!keyring) throw sealedError();
    return keyring;
  };

  // Last known state of paths written optimistically (getGuarded/applyIf), so that the next
  // write of a key can skip its read: the guard (stored ciphertext, random nonce, so
  // no ABA) makes a stale entry cost one failed attempt, never a wrong write. Bounded (the
  // path remembered first goes first), dropped on seal; any other write to a path forgets
  // it. A path keeps its record, updated in place: a Map entry added and deleted per write
  // got each write's Buffers promoted by V8's scavenges (@selfstack/http-kit's slot-set.ts).
  const GUARD_CACHE_MAX = 4096;
  const guards = new Map<string, { known: boolean; stored: Buffer | null; value: Buffer | null }>();
  const remember = (path: string, stored: Buffer | null, value: Buffer | null): void => {
    const g = guards.get(path);
    if (g !== undefined) {
      g.known = true;
      g.stored = stored;
      g.value = value;
      return;
    }
    guards.set(path, { known: true, stored, value });
    if (guards.size > GUARD_CACHE_MAX) guards.delete(guards.keys().next().value as string);
  };
  const forget = (path: string): void => {
    const g = guards.get(path);
    if (g === undefined) return;
    g.known = false;
    g.stored = null;
    g.value = null;
  };
  const forgetPrefix = (prefix: string): void => {
    for (const path of guards.keys()) if (path.startsWith(prefix)) forget(path);
  };
  const enc = (k: Keyring, path: string, value: Buffer): Buffer => {
    const key = k.keys.get(k.activeTerm) as Buffer;
    return seal(key, k.activeTerm, path, value);
  };
  const dec = (k: Keyring, path: string, value: Buffer): Buffer => {
    const key = k.keys.get(termOf(value));
    if (!key) throw new SecretsError(500, [`no key for term ${termOf(value)} at ${path}`]);
    return open(key, path, value);
  };
  // Reads the physical cache may answer return the same ciphertext Buffer for as long as
  // it holds the entry: its plaintext is opened once and shared by those reads (callers
  // never modify what they read). Keyed by the ciphertext object, so it lives exactly as
  // long as the cached entry; replaced on seal.
  let opened = new WeakMap<Buffer, { path: string; plain: Buffer }>();
  let openedPairs = new WeakMap<object, { entry: Buffer | null; last: RawEntry | null; cached: object }>();
  const decShared = (k: Keyring, path: string, value: Buffer): Buffer => {
    const hit = opened.get(value);
    if (hit !== undefined && hit.path === path) return hit.plain;
    const plain = dec(k, path, value);
    opened.set(value, { path, plain });
    return plain;
  };

  const openWithLast = (k: Keyring, path: string, found: { entry: Buffer | null; last: RawEntry | null }) => ({
    entry: found.entry === null ? null : decShared(k, path, found.entry),
    last: found.last === null ? null : { path: found.last.path, value: decShared(k, found.last.path, found.last.value) },
  });

  // `touched` collects what the transaction writes: the guard cache forgets it afterwards.
  const wrapTx = (k: Keyring, tx: RawEntryTx, touched: { paths: string[]; prefixes: string[] }): StorageTx => ({
    get: async (path, options) => {
      const v = await tx.get(path, options);
      return v === null ? null : dec(k, path, v);
    },
    put: (path, value) => {
      touched.paths.push(path);
      return tx.put(path, enc(k, path, value));
    },
    insert: (path, value) => {
      touched.paths.push(path);
      return tx.insert(path, enc(k, path, value));
    },
    delete: (path) => {
      touched.paths.push(path);
      return tx.delete(path);
    },
    replace: (deletes, puts) => {
      touched.paths.push(...deletes, ...puts.map((p) => p.path));
      return tx.replace(deletes, puts.map((p) => ({ path: p.path, value: enc(k, p.path, p.value) })));
    },
    deletePrefix: (prefix) => {
      touched.prefixes.push(prefix);
      return tx.deletePrefix(prefix);
    },
    listPaths: (prefix) => tx.listPaths(prefix),
  });

  async function isInitialized(): Promise<boolean> {
    if (initializedCache) return true;
    return (await loadRecord()) !== null;
  }

  async function status(): Promise<SealStatus> {
    const record = await loadRecord();
    if (!record) return { initialized: false, sealed: true, t: 0, n: 0, progress: 0 };
    initializedCache = true;
    return {
      initialized: true,
      sealed: keyring === null,
      t: record.secretThreshold,
      n: record.secretShares,
      progress: keyring === null ? progress.length : 0,
    };
  }

  const barrier: Barrier = {
    isInitialized,
    isSealed: () => keyring === null,
    status,

    async initialize(shares, threshold, setup) {
      validateSealConfig(shares, threshold);
      if (await isInitialized()) throw badRequest('Vault is already initialized');
      const rootKey = newKey();
      const fresh: Keyring = { activeTerm: 1, keys: new Map([[1, newKey()]]) };
      const record = {
        secretShares: shares,
        secretThreshold: threshold,
        keyring: seal(rootKey, 0, KEYRING_AAD, encodeKeyring(fresh)),
      };
      try {
        await barrierStore.create(record, (tx) => setup(wrapTx(fresh, tx, { paths: [], prefixes: [] })));
      } catch (err) {
        if (err instanceof AlreadyInitializedError) throw badRequest('Vault is already initialized');
        throw err;
      }
      initializedCache = true;
      const keys = await splitKey(rootKey, shares, threshold);
      rootKey.fill(0);
      return { keys };
    },

    async submitUnsealKey(key) {
      const record = await loadRecord();
      if (!record) throw notInitializedError();
      if (keyring !== null) return status();
      if (progress.some((p) => p.equals(key))) {
        throw badRequest('given key has already been provided during this unseal operation');
      }
      progress.push(Buffer.from(key));
      if (progress.length < record.secretThreshold) return status();
      const parts = progress;
      progress = [];
      let rootKey: Buffer;
      try {
        rootKey = await combineShares(parts);
      } catch {
        throw badRequest('Unseal failed, invalid key');
      }
      let decoded: Keyring;
      try {
        if (rootKey.length !== 32) throw new BarrierDecryptError('wrong key length');
        decoded = decodeKeyring(open(rootKey, KEYRING_AAD, record.keyring));
      } catch (err) {
        if (err instanceof BarrierDecryptError) throw badRequest('Unseal failed, invalid key');
        throw err;
      } finally {
        rootKey.fill(0);
      }
      keyring = decoded;
      try {
        for (const listener of unsealListeners) await listener();
      } catch (err) {
        barrier.seal();
        throw err;
      }
      return status();
    },

    async resetUnseal() {
      if (!(await isInitialized())) throw notInitializedError();
      if (keyring !== null) throw badRequest('vault is unsealed');
      progress = [];
      return status();
    },

    seal() {
      if (keyring) for (const key of keyring.keys.values()) key.fill(0);
      keyring = null;
      progress = [];
      guards.clear();
      opened = new WeakMap();
      openedPairs = new WeakMap();
      for (const listener of sealListeners) listener();
    },
    onSeal: (listener) => void sealListeners.push(listener),
    onUnseal: (listener) => void unsealListeners.push(listener),

    async get(path, options) {
      const k = ring();
      const v = await entryStore.get(path, options);
      return v === null ? null : options?.cached ? decShared(k, path, v) : dec(k, path, v);
    },
    async getMany(paths) {
      const k = ring();
      const rows = await entryStore.getMany(paths);
      return new Map(rows.map((r) => [r.path, dec(k, r.path, r.value)]));
    },
    async getWithLast(path, prefix) {
      const k = ring();
      return openWithLast(k, path, await entryStore.getWithLast(path, prefix));
    },
    peekWithLast(path, prefix) {
      const k = ring();
      const found = entryStore.peekWithLast?.(path, prefix);
      if (found === undefined) return undefined;
      // One opened pair per cached pair (the cache hands out the same object while it holds
      // it), which remembers the cached one for stillCached.
      let pair = openedPairs.get(found);
      if (pair === undefined) openedPairs.set(found, (pair = { ...openWithLast(k, path, found), cached: found }));
      return pair;
    },
    stillCached(pair) {
      const cached = (pair as { cached?: object }).cached;
      return keyring !== null && cached !== undefined && entryStore.stillCached?.(cached) === true;
    },
    async getGuarded(path, options) {
      const k = ring();
      const known = options?.cached ? guards.get(path) : undefined;
      if (known?.known) return { value: known.value, guard: { path, stored: known.stored } as unknown as EntryGuard, cached: true };
      const stored = await entryStore.get(path);
      const value = stored === null ? null : dec(k, path, stored);
      remember(path, stored, value);
      const guard: GuardState = { path, stored };
      return { value, guard: guard as unknown as EntryGuard, cached: false };
    },
    async applyIf(path, guard, value, deletes, puts) {
      const k = ring();
      const g = guard as unknown as GuardState;
      if (g.path !== path) throw new Error(`applyIf: guard of ${g.path} used for ${path}`);
      const stored = enc(k, path, value);
      let applied = false;
      try {
        applied = await entryStore.applyIf(
          path,
          g.stored === null ? null : guardOf(g.stored),
          stored,
          deletes,
          puts.map((p) => ({ path: p.path, value: enc(k, p.path, p.value) })),
        );
      } finally {
        if (applied) remember(path, stored, value);
        else forget(path);
      }
      return applied;
    },
    put: async (path, value) => {
      forget(path);
      return entryStore.put(path, enc(ring(), path, value));
    },
    insert: async (path, value) => {
      forget(path);
      return entryStore.insert(path, enc(ring(), path, value));
    },
    delete: async (path) => {
      ring();
      forget(path);
      await entryStore.delete(path);
    },
    deletePrefix: async (prefix) => {
      ring();
      forgetPrefix(prefix);
      return entryStore.deletePrefix(prefix);
    },
    listPaths: async (prefix) => {
      ring();
      return entryStore.listPaths(prefix);
    },
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        const k = ring();
        const touched = { paths: [] as string[], prefixes: [] as string[] };
        try {
          return await entryStore.transaction((tx) => fn(wrapTx(k, tx, touched)));
        } catch (err) {
          if (!(err instanceof EntryConflictError) || attempt >= MAX_TX_ATTEMPTS) throw err;
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5 * attempt)));
        } finally {
          for (const path of touched.paths) forget(path);
          for (const prefix of touched.prefixes) forgetPrefix(prefix);
        }
      }
    },
  };
  return barrier;
}

/** Per-install random salt (kept behind the barrier) used to hash token ids and key names. */
export function newSalt(): Buffer {
  return randomBytes(32);
}
