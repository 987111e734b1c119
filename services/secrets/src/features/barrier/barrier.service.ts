// Seal state and the encrypted storage view (issue 3, items 1 and 2; reference §4.1-4.4).
//
// init:   random root key -> Shamir shares; random data key (term 1) in a keyring that is
//         encrypted by the root key and stored in the barrier row. The process stays sealed.
// unseal: shares are collected in memory (per process: each replica unseals on its own);
//         at the threshold they are combined and must authenticate the keyring.
// seal:   keys and progress are dropped from memory; `onSeal` hooks clear every cache.
//
// The barrier is the storage contract (storage.types.ts) over plaintext, on top of the same
// contract over ciphertext (the physical store): values are sealed on the way in and opened
// on the way out; paths, guards and transactions pass through unchanged.
import { randomBytes } from 'node:crypto';
import { badRequest, notInitializedError, sealedError, SecretsError } from '../../core/errors';
import { BarrierDecryptError, newKey, open, seal, termOf } from './barrier-crypto';
import { combineShares, splitKey } from './shamir';
import { AlreadyInitializedError, type BarrierRecord, type BarrierStore } from './barrier.types';
import type { LatestPeek, Storage, StorageTx, WithLast } from './storage.types';
import { secretsEqual } from '@selfstack/password';

const KEYRING_AAD = 'core/keyring';

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

/** The decrypted view of the physical cache: KV data reads, and their synchronous fast path. */
export interface CachedView {
  readonly storage: Storage;
  readonly peek: LatestPeek;
}

/** An opened cached pair, tied to the cache's pair it came from (LatestPeek.stillCached). */
interface OpenedPair extends WithLast {
  readonly cached: WithLast;
}

/** The barrier's own view (Storage) reads the physical store it was made with, uncached. */
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
  /**
   * The same entries through a cached physical store (entry-cache.ts), with the same keys
   * and seal state. Its reads share one plaintext per cached ciphertext (never modify what
   * it returns).
   */
  cachedView(cache: Storage & LatestPeek): CachedView;
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

export function createBarrier(deps: { barrierStore: BarrierStore; storage: Storage }): Barrier {
  const { barrierStore } = deps;
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

  const enc = (k: Keyring, path: string, value: Buffer): Buffer => {
    const key = k.keys.get(k.activeTerm) as Buffer;
    return seal(key, k.activeTerm, path, value);
  };
  const dec = (k: Keyring, path: string, value: Buffer): Buffer => {
    const key = k.keys.get(termOf(value));
    if (!key) throw new SecretsError(500, [`no key for term ${termOf(value)} at ${path}`]);
    return open(key, path, value);
  };
  // Reads the physical cache answers return the same ciphertext Buffer for as long as it
  // holds the entry: its plaintext is opened once and shared by those reads (callers never
  // modify what they read). Keyed by the ciphertext object, so it lives exactly as long as
  // the cached entry; replaced on seal.
  let opened = new WeakMap<Buffer, { path: string; plain: Buffer }>();
  let openedPairs = new WeakMap<WithLast, OpenedPair>();
  const decShared = (k: Keyring, path: string, value: Buffer): Buffer => {
    const hit = opened.get(value);
    if (hit !== undefined && hit.path === path) return hit.plain;
    const plain = dec(k, path, value);
    opened.set(value, { path, plain });
    return plain;
  };
  type Opener = (k: Keyring, path: string, value: Buffer) => Buffer;

  const openWithLast = (k: Keyring, path: string, found: WithLast, opener: Opener): WithLast => ({
    entry: found.entry === null ? null : opener(k, path, found.entry),
    last: found.last === null ? null : { path: found.last.path, value: opener(k, found.last.path, found.last.value) },
  });

  const wrapTx = (k: Keyring, tx: StorageTx): StorageTx => ({
    get: async (path, options) => {
      const v = await tx.get(path, options);
      return v === null ? null : dec(k, path, v);
    },
    put: (path, value) => tx.put(path, enc(k, path, value)),
    insert: (path, value) => tx.insert(path, enc(k, path, value)),
    delete: (path) => tx.delete(path),
    replace: (deletes, puts) => tx.replace(deletes, puts.map((p) => ({ path: p.path, value: enc(k, p.path, p.value) }))),
    deletePrefix: (prefix) => tx.deletePrefix(prefix),
    list: (prefix) => tx.list(prefix),
  });

  /** The plaintext view of `physical`; `shared`: its reads hand out cached ciphertext (decShared). */
  const view = (physical: Storage, shared: boolean): Storage => {
    const opener: Opener = shared ? decShared : dec;
    return {
      async get(path) {
        const k = ring();
        const v = await physical.get(path);
        return v === null ? null : opener(k, path, v);
      },
      async getMany(paths) {
        const k = ring();
        const rows = await physical.getMany(paths);
        const out = new Map<string, Buffer>();
        for (const [path, value] of rows) out.set(path, dec(k, path, value));
        return out;
      },
      async getWithLast(path, prefix) {
        const k = ring();
        return openWithLast(k, path, await physical.getWithLast(path, prefix), opener);
      },
      async getGuarded(path) {
        const k = ring();
        const { value, guard } = await physical.getGuarded(path);
        return { value: value === null ? null : dec(k, path, value), guard };
      },
      async applyIf(path, guard, value, deletes, puts) {
        const k = ring();
        return physical.applyIf(path, guard, enc(k, path, value), deletes, puts.map((p) => ({ path: p.path, value: enc(k, p.path, p.value) })));
      },
      put: async (path, value) => physical.put(path, enc(ring(), path, value)),
      delete: async (path) => {
        ring();
        await physical.delete(path);
      },
      deletePrefix: async (prefix) => {
        ring();
        return physical.deletePrefix(prefix);
      },
      list: async (prefix) => {
        ring();
        return physical.list(prefix);
      },
      // The keys are taken at the start of each attempt (a conflict runs `fn` again).
      transaction: async (fn) => {
        ring();
        return physical.transaction((tx) => fn(wrapTx(ring(), tx)));
      },
    };
  };

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
    ...view(deps.storage, false),
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
        await barrierStore.create(record, (tx) => setup(wrapTx(fresh, tx)));
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
      // Constant-time: timing must not tell how much of an earlier share a guess matched.
      if (progress.some((p) => secretsEqual(p, key))) {
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
      opened = new WeakMap();
      openedPairs = new WeakMap();
      for (const listener of sealListeners) listener();
    },
    onSeal: (listener) => void sealListeners.push(listener),
    onUnseal: (listener) => void unsealListeners.push(listener),

    cachedView(cache) {
      const peek: LatestPeek = {
        peekWithLast(path, prefix) {
          const k = ring();
          const found = cache.peekWithLast(path, prefix);
          if (found === undefined) return undefined;
          // One opened pair per cached pair (the cache hands out the same object while it
          // holds it), which remembers the cached one for stillCached.
          let pair = openedPairs.get(found);
          if (pair === undefined) openedPairs.set(found, (pair = { ...openWithLast(k, path, found, decShared), cached: found }));
          return pair;
        },
        stillCached(pair) {
          const cached = (pair as Partial<OpenedPair>).cached;
          return keyring !== null && cached !== undefined && cache.stillCached(cached);
        },
      };
      return { storage: view(cache, true), peek };
    },
  };
  return barrier;
}

/** Per-install random salt (kept behind the barrier) used to hash token ids and key names. */
export function newSalt(): Buffer {
  return randomBytes(32);
}
