// KV v2 data writes (issue 3, item 6; docs/secrets.md "Atomicity"): the write queue (one
// key's optimistic writes from this process one after another), what this process last
// wrote to each key (so the next write needs no read), and the write itself: an unlocked
// guarded read and one conditional statement, or after OPTIMISTIC_ATTEMPTS lost races the
// locking transaction.
import type { Clock } from '../../core/clock';
import type { Storage, StorageGuard, StorageTx } from '../barrier/storage.types';
import { decodeMetadata, metaPath, type KeyMetadata, type KvConfig } from './kv-layout';
import { checkCas, planVersion, type VersionInfo, type VersionPlan } from './kv-versions';

/** Optimistic attempts of a KV v2 data write before it takes the row lock. */
export const OPTIMISTIC_ATTEMPTS = 3;

/** A KeyedQueue key's record: the promise its last call's settling resolves, while busy. */
interface QueueRecord {
  tail: Promise<void> | undefined;
}

/** Idle keys a KeyedQueue keeps (beyond as many as are busy) before it drops them. */
const IDLE_KEYS_KEPT = 1024;

/**
 * Runs calls with the same key one after another (FIFO, whatever each outcome), calls with
 * different keys concurrently; nothing of a call is kept once the key's last call settled.
 *
 * Each key has a record that stays while the key is in use and a while after: the calls'
 * promises live in the record's field, never as a Map value, so a key written over and
 * over adds and deletes nothing in the Map. (Adding and deleting Map entries per call got
 * every call's promise chain promoted by V8's scavenges: @selfstack/http-kit's slot-set.ts
 * says why.) Idle records are dropped together, by building a new Map, once there are
 * more than IDLE_KEYS_KEPT of them and more than busy ones.
 */
export class KeyedQueue {
  private records = new Map<string, QueueRecord>();
  private busy = 0;

  /** Keys with calls not yet settled. */
  get size(): number {
    return this.busy;
  }

  /** Keys with a record (busy or idle; for tests). */
  get retained(): number {
    return this.records.size;
  }

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const record = this.records.get(key) ?? this.addRecord(key);
    const previous = record.tail;
    const result = previous ? previous.then(fn) : fn();
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    if (!previous) this.busy++;
    record.tail = tail;
    void tail.then(() => {
      if (record.tail !== tail) return;
      record.tail = undefined;
      this.busy--;
      if (this.records.size - this.busy > Math.max(IDLE_KEYS_KEPT, this.busy)) this.dropIdle();
    });
    return result;
  }

  private addRecord(key: string): QueueRecord {
    const record: QueueRecord = { tail: undefined };
    this.records.set(key, record);
    return record;
  }

  private dropIdle(): void {
    const kept = new Map<string, QueueRecord>();
    for (const [key, record] of this.records) if (record.tail !== undefined) kept.set(key, record);
    this.records = kept;
  }
}

/** What this process last wrote to one key's metadata row. */
interface LastWrite {
  known: boolean;
  guard: StorageGuard | null;
  meta: KeyMetadata | null;
}

/**
 * The metadata this process last wrote to each key with a conditional write, and the guard
 * of that write: the key's next write starts from them without reading the row. A stale
 * record (another replica wrote since, or a transaction here) costs one failed conditional
 * write, never a wrong one: the guard no longer holds. The decoded metadata is never
 * mutated (a write builds the next one). One record per key, updated in place (Map entries
 * added and deleted per write got every write's objects promoted by V8's scavenges:
 * @selfstack/http-kit's slot-set.ts); bounded, the first remembered goes first.
 */
export class LastWrites {
  private readonly records = new Map<string, LastWrite>();

  constructor(private readonly max = 4096) {}

  /** Keys with a record (known or forgotten; for tests). */
  get size(): number {
    return this.records.size;
  }

  /** The last write's guard and metadata, if this process knows them. */
  get(path: string): { guard: StorageGuard; meta: KeyMetadata } | undefined {
    const r = this.records.get(path);
    return r?.known && r.guard !== null && r.meta !== null ? { guard: r.guard, meta: r.meta } : undefined;
  }

  remember(path: string, guard: StorageGuard, meta: KeyMetadata): void {
    const r = this.records.get(path);
    if (r !== undefined) {
      r.known = true;
      r.guard = guard;
      r.meta = meta;
      return;
    }
    this.records.set(path, { known: true, guard, meta });
    if (this.records.size > this.max) this.records.delete(this.records.keys().next().value as string);
  }

  forget(path: string): void {
    const r = this.records.get(path);
    if (r === undefined) return;
    r.known = false;
    r.guard = null;
    r.meta = null;
  }

  clear(): void {
    this.records.clear();
  }
}

const parseMeta = (raw: Buffer | null): KeyMetadata | null => (raw ? decodeMetadata(raw) : null);

/**
 * Saves a planned version inside a transaction that holds the key's metadata row
 * (`existed`: the row was there, locked FOR UPDATE).
 */
export async function saveVersion(tx: StorageTx, mp: string, plan: VersionPlan, existed: boolean): Promise<void> {
  if (existed) {
    // One round trip for prune + new version + metadata (the metadata row is locked).
    await tx.replace(plan.pruned, [plan.versionRow, { path: mp, value: plan.meta }]);
    return;
  }
  for (const p of plan.pruned) await tx.delete(p);
  await tx.put(plan.versionRow.path, plan.versionRow.value);
  await tx.insert(mp, plan.meta);
}

export interface VersionWriter {
  /** Adds a version of `key` holding `text` (canonical JSON) under the check-and-set rules. */
  write(prefix: string, key: string, config: KvConfig, text: string, cas: number | undefined): Promise<VersionInfo>;
  /**
   * Runs a transaction that changes a key's metadata row (`mp`) other than by `write` (a
   * patch, a version state change, a metadata write): the key's next write reads the row
   * again instead of starting from what this process last wrote.
   */
  changeMeta<T>(mp: string, fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  /** Seal: nothing decoded outlives the keys. */
  clear(): void;
}

/** `storage` must read the database itself: the write's guard is taken from what it reads. */
export function createVersionWriter(deps: { storage: Storage; clock: Clock; hash: (key: string) => string }): VersionWriter {
  const { storage, clock, hash } = deps;
  // Optimistic writes of one key from this process queue behind each other instead of
  // racing: each then starts from the state the previous one wrote (no read, no lost
  // attempt); only writers in other replicas can still make a guard fail.
  const queue = new KeyedQueue();
  const last = new LastWrites();

  async function writeVersion(prefix: string, key: string, mp: string, config: KvConfig, text: string, cas: number | undefined): Promise<VersionInfo> {
    // Optimistic: unlocked read, then one conditional statement that applies only if the
    // metadata row is unchanged (2 round trips). A lost race re-reads; after
    // OPTIMISTIC_ATTEMPTS lost races the locking transaction guarantees progress.
    // The first attempt may start from the state this process last wrote (no read at all);
    // a stale one fails its guard like a lost race, and a CAS error found on it is only
    // answered after a fresh read agrees.
    const keyHash = hash(key);
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const known = attempt === 0 ? last.get(mp) : undefined;
      let guard: StorageGuard;
      let meta: KeyMetadata | null;
      if (known !== undefined) {
        ({ guard, meta } = known);
        try {
          checkCas(meta, config, cas);
        } catch {
          const fresh = await storage.getGuarded(mp);
          guard = fresh.guard;
          meta = parseMeta(fresh.value);
        }
      } else {
        const seen = await storage.getGuarded(mp);
        guard = seen.guard;
        meta = parseMeta(seen.value);
      }
      checkCas(meta, config, cas);
      const plan = planVersion(prefix, keyHash, meta, config, text, clock.now());
      let next: StorageGuard | null = null;
      try {
        next = await storage.applyIf(mp, guard, plan.meta, plan.pruned, [plan.versionRow]);
      } finally {
        if (next !== null) last.remember(mp, next, plan.decoded);
        else last.forget(mp);
      }
      if (next !== null) return plan.info;
    }
    return storage.transaction(async (tx) => {
      const raw = await tx.get(mp, { forUpdate: true });
      const meta = parseMeta(raw);
      checkCas(meta, config, cas);
      const plan = planVersion(prefix, keyHash, meta, config, text, clock.now());
      await saveVersion(tx, mp, plan, raw !== null);
      return plan.info;
    });
  }

  return {
    write(prefix, key, config, text, cas) {
      const mp = metaPath(prefix, key);
      return queue.run(mp, () => writeVersion(prefix, key, mp, config, text, cas));
    },
    async changeMeta(mp, fn) {
      try {
        return await storage.transaction(fn);
      } finally {
        last.forget(mp);
      }
    },
    clear: () => last.clear(),
  };
}
