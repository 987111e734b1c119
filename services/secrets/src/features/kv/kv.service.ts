// KV v1 and v2 engines (issue 3, item 6; reference §2, §3). Pure service logic over the
// barrier's Storage: it returns data (or throws SecretsError / returns Reply for
// Vault's "404 with a body" answers); the paths layer turns that into HTTP.
import type { Bus } from '@selfstack/bus';
import { Reply } from '@selfstack/http-kit';
import { badRequest, notFound } from '../../core/errors';
import type { Clock } from '../../core/clock';
import { goDuration, rfc3339 } from '../../core/duration';
import { isPlainObject, RawJson } from '../../core/json';
import type { Storage, StorageTx } from '../barrier/barrier.types';
import {
  canonicalJson,
  configPath,
  decodeMetadata,
  DEFAULT_KV_CONFIG,
  DEFAULT_MAX_VERSIONS,
  encodeMetadata,
  findVersion,
  metaDir,
  metaPath,
  sortKeys,
  v1Dir,
  v1Path,
  versionDir,
  versionPath,
  type KeyMetadata,
  type KvConfig,
  type VersionMeta,
} from './kv-layout';

export const KV_CONFIG_CHANNEL = 'secrets.kvconfig';
/** Optimistic attempts of a KV v2 data write before it takes the row lock. */
export const OPTIMISTIC_ATTEMPTS = 3;

export interface VersionInfo {
  created_time: string;
  custom_metadata: Record<string, string> | null;
  deletion_time: string;
  destroyed: boolean;
  version: number;
}

export interface MetadataInput {
  max_versions?: number;
  cas_required?: boolean;
  delete_version_after?: number;
  custom_metadata?: Record<string, unknown> | null;
}

/** Runs first inside a write's transaction; throws to abort it. */
export type TxCheck = (tx: StorageTx) => Promise<void>;

export interface KvService {
  // v1
  v1Read(prefix: string, key: string): Promise<RawJson | null>;
  /** `check` runs first in the write's transaction (the mount's StaleMountError guard). */
  v1Write(prefix: string, key: string, data: Record<string, unknown>, check: TxCheck): Promise<void>;
  v1Delete(prefix: string, key: string, check: TxCheck): Promise<void>;
  v1Exists(prefix: string, key: string): Promise<boolean>;
  v1List(prefix: string, dir: string): Promise<string[]>;
  // v2
  readConfig(prefix: string): Promise<KvConfig>;
  writeConfig(prefix: string, input: Partial<KvConfig>): Promise<void>;
  exists(prefix: string, key: string): Promise<boolean>;
  read(prefix: string, key: string, version: number): Promise<{ data: RawJson; metadata: VersionInfo } | Reply>;
  write(prefix: string, key: string, data: Record<string, unknown>, cas: number | undefined): Promise<VersionInfo>;
  patch(prefix: string, key: string, patch: Record<string, unknown>, cas: number | undefined): Promise<VersionInfo | Reply>;
  deleteLatest(prefix: string, key: string): Promise<void>;
  deleteVersions(prefix: string, key: string, versions: number[]): Promise<void>;
  undeleteVersions(prefix: string, key: string, versions: number[]): Promise<void>;
  destroyVersions(prefix: string, key: string, versions: number[]): Promise<void>;
  readMetadata(prefix: string, key: string): Promise<Record<string, unknown> | null>;
  writeMetadata(prefix: string, key: string, input: MetadataInput, patch: boolean): Promise<void>;
  deleteMetadata(prefix: string, key: string): Promise<void>;
  list(prefix: string, dir: string): Promise<string[]>;
  subkeys(prefix: string, key: string, version: number, depth: number): Promise<Record<string, unknown> | Reply>;
  start(): Promise<void>;
  clearCache(): void;
}

/** RFC 7396 JSON merge patch: null deletes, objects merge recursively, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const base: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete base[k];
    else base[k] = mergePatch(base[k], v);
  }
  return base;
}

/** Direct children of `dir` among full paths under `base + dir`: `a`, `folder/`, sorted, unique. */
export function childrenOf(paths: readonly string[], base: string): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const rest = p.slice(base.length);
    if (rest === '') continue;
    const slash = rest.indexOf('/');
    out.add(slash === -1 ? rest : rest.slice(0, slash + 1));
  }
  return [...out].sort();
}

export function subkeysOf(value: unknown, depth: number, level = 1): unknown {
  if (!isPlainObject(value)) return null;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = value[k];
    out[k] = isPlainObject(v) && (depth === 0 || level < depth) ? subkeysOf(v, depth, level + 1) : null;
  }
  return out;
}

export function validateCustomMetadata(input: Record<string, unknown>): Record<string, string> {
  const problems: string[] = [];
  const keys = Object.keys(input);
  if (keys.length > 64) problems.push(`payload must contain at most 64 keys, provided ${keys.length}`);
  const out: Record<string, string> = {};
  const printable = /^[\x20-\x7e\u00a0-\uffff]*$/u;
  for (const k of keys) {
    const v = input[k];
    if (k.length === 0 || k.length > 128) problems.push(`length of key ${JSON.stringify(k)} is ${k.length} but must be 0 < len(key) <= 128`);
    if (!printable.test(k)) problems.push(`key ${JSON.stringify(k)} contains unprintable characters`);
    if (typeof v !== 'string') {
      problems.push(`value for key ${JSON.stringify(k)} must be a string`);
      continue;
    }
    if (v.length > 512) problems.push(`length of value for key ${JSON.stringify(k)} is ${v.length} but must be 0 < len(value) <= 512`);
    if (!printable.test(v)) problems.push(`value for key ${JSON.stringify(k)} contains unprintable characters`);
    out[k] = v;
  }
  if (problems.length > 0) {
    const text = problems.length === 1 ? problems[0] : `${problems.length} errors occurred:\n${problems.map((p) => `\t* ${p}`).join('\n')}\n\n`;
    throw badRequest(`custom_metadata validation failed: ${text}`);
  }
  return out;
}

function newMetadata(now: number): KeyMetadata {
  return {
    created_ms: now,
    updated_ms: now,
    current_version: 0,
    oldest_version: 0,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
    versions: [],
  };
}

/**
 * A read's `data` member: the secret (stored JSON text) and its version's metadata, with
 * the JSON text of both made once (a cached answer is written as it stands).
 */
class VersionAnswer extends RawJson {
  constructor(
    readonly data: RawJson,
    readonly metadata: VersionInfo,
  ) {
    super(`{"data":${data.text},"metadata":${JSON.stringify(metadata)}}`);
  }
}

function versionInfo(meta: KeyMetadata, version: number, v: VersionMeta): VersionInfo {
  return {
    created_time: rfc3339(v.created_ms),
    custom_metadata: meta.custom_metadata,
    deletion_time: v.deletion_ms === null ? '' : rfc3339(v.deletion_ms),
    destroyed: v.destroyed,
    version,
  };
}

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

/**
 * The metadata this process last wrote to each key with an optimistic write, with the very
 * Buffer it wrote. The barrier's guard cache hands that Buffer back to the key's next
 * write, which then takes the decoded metadata as it stands instead of parsing it again
 * (it is never mutated: a write builds the next one). Any other Buffer (read back from the
 * database, another replica's write) is decoded. One record per key, updated in place
 * (Map entries added and deleted per write got every write's objects promoted by V8's
 * scavenges: @selfstack/http-kit's slot-set.ts); bounded, the first remembered goes first.
 */
export class WrittenMetadata {
  private readonly records = new Map<string, { value: Buffer; meta: KeyMetadata }>();

  constructor(private readonly max = 4096) {}

  /** Keys remembered (for tests). */
  get size(): number {
    return this.records.size;
  }

  /** The metadata in `value` (stored at `path`), without parsing it when this process wrote it. */
  decode(path: string, value: Buffer | null): KeyMetadata | null {
    if (value === null) return null;
    const r = this.records.get(path);
    return r !== undefined && r.value === value ? r.meta : decodeMetadata(value);
  }

  remember(path: string, value: Buffer, meta: KeyMetadata): void {
    const r = this.records.get(path);
    if (r !== undefined) {
      r.value = value;
      r.meta = meta;
      return;
    }
    this.records.set(path, { value, meta });
    if (this.records.size > this.max) this.records.delete(this.records.keys().next().value as string);
  }

  clear(): void {
    this.records.clear();
  }
}

export function createKvService(deps: { storage: Storage; clock: Clock; bus: Bus; hash: (key: string) => string }): KvService {
  const { storage, clock, bus, hash } = deps;
  // Optimistic writes of one key from this process queue behind each other instead of
  // racing: each then starts from the state the previous one wrote (no read, no lost
  // attempt); only writers in other replicas can still make a guard fail.
  const keyWrites = new KeyedQueue();
  const configs = new Map<string, KvConfig>();
  let generation = 0;
  const drop = (prefix: string | null): void => {
    generation++;
    if (prefix === null) configs.clear();
    else configs.delete(prefix);
  };

  const parseMeta = (raw: Buffer | null): KeyMetadata | null => (raw ? decodeMetadata(raw) : null);
  const written = new WrittenMetadata();
  const encode = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
  const isDeleted = (v: VersionMeta, now: number): boolean => v.destroyed || (v.deletion_ms !== null && v.deletion_ms <= now);

  async function readConfig(prefix: string): Promise<KvConfig> {
    const hit = configs.get(prefix);
    if (hit) return hit;
    const started = generation;
    const raw = await storage.get(configPath(prefix));
    const config = raw ? { ...DEFAULT_KV_CONFIG, ...(JSON.parse(raw.toString('utf8')) as KvConfig) } : DEFAULT_KV_CONFIG;
    if (generation === started) configs.set(prefix, config);
    return config;
  }

  function effectiveMax(meta: KeyMetadata, config: KvConfig): number {
    const m = Math.max(meta.max_versions, config.max_versions);
    return m > 0 ? m : DEFAULT_MAX_VERSIONS;
  }

  function effectiveDeleteAfter(meta: KeyMetadata, config: KvConfig): number {
    const candidates = [meta.delete_version_after, config.delete_version_after].filter((d) => d > 0);
    return candidates.length > 0 ? Math.min(...candidates) : 0;
  }

  function checkCas(meta: KeyMetadata | null, config: KvConfig, cas: number | undefined): void {
    if (cas === undefined) {
      if (config.cas_required || meta?.cas_required) throw badRequest('check-and-set parameter required for this call');
      return;
    }
    if ((meta?.current_version ?? 0) !== cas) throw badRequest('check-and-set parameter did not match the current version');
  }

  /**
   * Drops the oldest versions of `meta` (its own array, not shared) beyond `max` and
   * returns their numbers; oldest_version becomes the oldest kept once any was dropped.
   */
  function pruneTo(meta: KeyMetadata, max: number): number[] {
    const excess = meta.versions.length - max;
    if (excess <= 0) return [];
    const dropped = meta.versions.splice(0, excess).map((v) => v.n);
    meta.oldest_version = meta.versions[0]?.n ?? 0;
    return dropped;
  }

  /**
   * Plans the next version of `key` on top of `existing` (left unchanged: it may be shared):
   * the new metadata, the version row and the version rows to prune at max_versions.
   */
  function planVersion(prefix: string, key: string, existing: KeyMetadata | null, config: KvConfig, dataText: string) {
    const now = clock.now();
    const base = existing ?? newMetadata(now);
    const keyHash = hash(key);
    const version = base.current_version + 1;
    const dva = effectiveDeleteAfter(base, config);
    const vmeta: VersionMeta = { n: version, created_ms: now, deletion_ms: dva > 0 ? now + dva * 1000 : null, destroyed: false };
    // Every recorded version is at most current_version: the new one goes last.
    const meta: KeyMetadata = { ...base, current_version: version, updated_ms: now, versions: [...base.versions, vmeta] };
    const pruned = pruneTo(meta, effectiveMax(meta, config)).map((n) => versionPath(prefix, keyHash, n));
    return {
      meta: encodeMetadata(meta),
      decoded: meta,
      versionRow: { path: versionPath(prefix, keyHash, version), value: Buffer.from(dataText) },
      pruned,
      info: versionInfo(meta, version, vmeta),
    };
  }

  /** Adds a version (inside a transaction holding the metadata row), prunes, saves metadata. */
  async function addVersion(
    tx: StorageTx,
    prefix: string,
    key: string,
    existing: KeyMetadata | null,
    config: KvConfig,
    dataText: string,
  ): Promise<VersionInfo> {
    const plan = planVersion(prefix, key, existing, config, dataText);
    if (existing) {
      // One round trip for prune + new version + metadata (the metadata row is locked).
      await tx.replace(plan.pruned, [plan.versionRow, { path: metaPath(prefix, key), value: plan.meta }]);
    } else {
      for (const p of plan.pruned) await tx.delete(p);
      await tx.put(plan.versionRow.path, plan.versionRow.value);
      await tx.insert(metaPath(prefix, key), plan.meta);
    }
    return plan.info;
  }

  async function updateVersions(
    prefix: string,
    key: string,
    versions: number[],
    apply: (v: VersionMeta, n: number, tx: StorageTx, keyHash: string) => Promise<boolean> | boolean,
  ): Promise<void> {
    await storage.transaction(async (tx) => {
      const meta = parseMeta(await tx.get(metaPath(prefix, key), { forUpdate: true }));
      if (!meta) return;
      const keyHash = hash(key);
      let changed = false;
      for (const n of versions) {
        const v = findVersion(meta, n);
        if (v && (await apply(v, n, tx, keyHash))) changed = true;
      }
      if (changed) {
        meta.updated_ms = clock.now();
        await tx.put(metaPath(prefix, key), encodeMetadata(meta));
      }
    });
  }

  function deletedBody(meta: KeyMetadata, version: number, v: VersionMeta): Reply {
    return new Reply(404, { data: { data: null, metadata: versionInfo(meta, version, v) } });
  }

  // Latest-version reads may be answered by the physical cache, which hands out the same
  // plaintext Buffers for as long as it holds the entries (Barrier.getWithLast): the
  // metadata decoded from such a Buffer and the answer built on it are kept with it
  // (WeakMaps: they go when the cache lets the entry go). Both are read-only.
  const parsedMeta = new WeakMap<Buffer, KeyMetadata>();
  const answers = new WeakMap<Buffer, { meta: KeyMetadata; version: number; answer: VersionAnswer }>();

  // The latest-version answer of each key read lately, tied to the cached pair it was built
  // from and served only while the storage says the physical cache still holds that very
  // pair (stillCached): exactly as coherent as the cache, without looking the pair up again.
  // Held weakly: a record lives as long as its pair (as the plaintexts it was built from).
  interface LatestAnswer {
    readonly pair: object;
    readonly v: VersionMeta;
    readonly answer: VersionAnswer;
  }
  const LATEST_MAX = 8192;
  const latestAnswers = new Map<string, Map<string, WeakRef<LatestAnswer>>>();
  const latestByPair = new WeakMap<object, LatestAnswer>();
  const rememberLatest = (prefix: string, key: string, pair: object, v: VersionMeta, answer: VersionAnswer): void => {
    // One pair always resolves to the same version and answer (both derived from its bytes).
    let record = latestByPair.get(pair);
    if (record === undefined) latestByPair.set(pair, (record = { pair, v, answer }));
    let byKey = latestAnswers.get(prefix);
    if (byKey === undefined) latestAnswers.set(prefix, (byKey = new Map()));
    else if (byKey.size >= LATEST_MAX) byKey.clear();
    byKey.set(key, new WeakRef(record));
  };
  const sharedMeta = (raw: Buffer): KeyMetadata => {
    let meta = parsedMeta.get(raw);
    if (meta === undefined) parsedMeta.set(raw, (meta = decodeMetadata(raw)));
    return meta;
  };

  interface Resolved {
    meta: KeyMetadata | null;
    version: number;
    data: Buffer | null;
  }

  /**
   * The latest version from `getWithLast`'s pair (metadata, greatest version row). `data`
   * undefined: the current version exists but is not that row (it must be read by path).
   */
  function latestOf(prefix: string, keyHash: string, found: { entry: Buffer | null; last: { path: string; value: Buffer } | null }) {
    const meta = found.entry === null ? null : sharedMeta(found.entry);
    if (!meta) return { meta, version: 0, data: null };
    const current = meta.current_version;
    const { last } = found;
    if (last && last.path === versionPath(prefix, keyHash, current)) return { meta, version: current, data: last.value };
    const v = findVersion(meta, current);
    return { meta, version: current, data: v && !v.destroyed ? undefined : null };
  }

  /**
   * The latest version when the physical cache holds all of it (synchronous), with the
   * cached pair it came from; else undefined.
   */
  function peekLatest(prefix: string, key: string): (Resolved & { pair: object }) | undefined {
    const keyHash = hash(key);
    const found = storage.peekWithLast(metaPath(prefix, key), versionDir(prefix, keyHash));
    if (found === undefined) return undefined;
    const r = latestOf(prefix, keyHash, found);
    return r.data === undefined ? undefined : { meta: r.meta, version: r.version, data: r.data, pair: found };
  }

  async function resolveVersion(prefix: string, key: string, version: number): Promise<Resolved> {
    const keyHash = hash(key);
    const mp = metaPath(prefix, key);
    if (version > 0) {
      const rows = await storage.getMany([mp, versionPath(prefix, keyHash, version)]);
      const meta = parseMeta(rows.get(mp) ?? null);
      return { meta, version, data: rows.get(versionPath(prefix, keyHash, version)) ?? null };
    }
    const r = latestOf(prefix, keyHash, await storage.getWithLast(mp, versionDir(prefix, keyHash)));
    const data = r.data === undefined ? await storage.get(versionPath(prefix, keyHash, r.version), { cached: true }) : r.data;
    return { meta: r.meta, version: r.version, data };
  }

  async function writeVersion(prefix: string, key: string, mp: string, config: KvConfig, text: string, cas: number | undefined): Promise<VersionInfo> {
    // Optimistic: unlocked read, then one conditional statement that applies only if the
    // metadata row is unchanged (2 round trips). A lost race re-reads; after
    // OPTIMISTIC_ATTEMPTS lost races the locking transaction guarantees progress.
    // The first attempt may start from the state this process last saw (no read at all);
    // a stale one fails its guard like a lost race, and a CAS error found on it is only
    // answered after a fresh read agrees.
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const seen = await storage.getGuarded(mp, { cached: attempt === 0 });
      let { guard } = seen;
      let meta = written.decode(mp, seen.value);
      if (seen.cached) {
        try {
          checkCas(meta, config, cas);
        } catch {
          const fresh = await storage.getGuarded(mp);
          guard = fresh.guard;
          meta = parseMeta(fresh.value);
        }
      }
      checkCas(meta, config, cas);
      const plan = planVersion(prefix, key, meta, config, text);
      if (await storage.applyIf(mp, guard, plan.meta, plan.pruned, [plan.versionRow])) {
        written.remember(mp, plan.meta, plan.decoded);
        return plan.info;
      }
    }
    return storage.transaction(async (tx) => {
      const meta = parseMeta(await tx.get(metaPath(prefix, key), { forUpdate: true }));
      checkCas(meta, config, cas);
      return addVersion(tx, prefix, key, meta, config, text);
    });
  }

  return {
    async v1Read(prefix, key) {
      const raw = await storage.get(v1Path(prefix, key), { cached: true });
      return raw ? new RawJson(raw.toString('utf8')) : null;
    },
    async v1Write(prefix, key, data, check) {
      const value = Buffer.from(canonicalJson(data));
      await storage.transaction(async (tx) => {
        await check(tx);
        await tx.put(v1Path(prefix, key), value);
      });
    },
    async v1Delete(prefix, key, check) {
      await storage.transaction(async (tx) => {
        await check(tx);
        await tx.delete(v1Path(prefix, key));
      });
    },
    async v1Exists(prefix, key) {
      return (await storage.get(v1Path(prefix, key))) !== null;
    },
    async v1List(prefix, dir) {
      const base = v1Dir(prefix) + dir;
      return childrenOf(await storage.listPaths(base), base);
    },

    readConfig,
    async writeConfig(prefix, input) {
      const current = await readConfig(prefix);
      const next: KvConfig = { ...current, ...input };
      await storage.put(configPath(prefix), encode(next));
      drop(prefix);
      void bus.publish(KV_CONFIG_CHANNEL, prefix).catch(() => undefined);
    },

    async exists(prefix, key) {
      return (await storage.get(metaPath(prefix, key))) !== null;
    },

    async read(prefix, key, requested) {
      if (requested === 0) {
        const latest = latestAnswers.get(prefix)?.get(key)?.deref();
        if (latest !== undefined && storage.stillCached(latest.pair) && !isDeleted(latest.v, clock.now())) return latest.answer;
      }
      // Served from the physical cache without waiting when it holds the whole answer.
      const peeked = requested === 0 ? peekLatest(prefix, key) : undefined;
      const { meta, version, data } = peeked ?? (await resolveVersion(prefix, key, requested));
      if (!meta) throw notFound();
      const v = findVersion(meta, version);
      if (!v) throw notFound();
      if (isDeleted(v, clock.now())) return deletedBody(meta, version, v);
      if (data === null) throw notFound();
      const known = answers.get(data);
      let answer: VersionAnswer;
      if (known !== undefined && known.meta === meta && known.version === version) answer = known.answer;
      else {
        answer = new VersionAnswer(new RawJson(data.toString('utf8')), versionInfo(meta, version, v));
        answers.set(data, { meta, version, answer });
      }
      if (peeked) rememberLatest(prefix, key, peeked.pair, v, answer);
      return answer;
    },

    async write(prefix, key, data, cas) {
      const config = await readConfig(prefix);
      const text = canonicalJson(data);
      const mp = metaPath(prefix, key);
      return keyWrites.run(mp, () => writeVersion(prefix, key, mp, config, text, cas));
    },

    async patch(prefix, key, patch, cas) {
      const config = await readConfig(prefix);
      return storage.transaction(async (tx) => {
        const meta = parseMeta(await tx.get(metaPath(prefix, key), { forUpdate: true }));
        if (!meta) return new Reply(404);
        const current = findVersion(meta, meta.current_version);
        if (!current) return new Reply(404);
        if (isDeleted(current, clock.now())) {
          return new Reply(404, { data: versionInfo(meta, meta.current_version, current) });
        }
        checkCas(meta, config, cas);
        const raw = await tx.get(versionPath(prefix, hash(key), meta.current_version));
        if (!raw) return new Reply(404);
        const merged = mergePatch(JSON.parse(raw.toString('utf8')), patch);
        return addVersion(tx, prefix, key, meta, config, canonicalJson(merged));
      });
    },

    async deleteLatest(prefix, key) {
      await storage.transaction(async (tx) => {
        const meta = parseMeta(await tx.get(metaPath(prefix, key), { forUpdate: true }));
        if (!meta) return;
        const v = findVersion(meta, meta.current_version);
        const now = clock.now();
        if (!v || isDeleted(v, now)) return;
        v.deletion_ms = now;
        meta.updated_ms = now;
        await tx.put(metaPath(prefix, key), encodeMetadata(meta));
      });
    },
    async deleteVersions(prefix, key, versions) {
      if (versions.length === 0) throw badRequest('No version number provided');
      const now = clock.now();
      await updateVersions(prefix, key, versions, (v) => {
        if (isDeleted(v, now)) return false;
        v.deletion_ms = now;
        return true;
      });
    },
    async undeleteVersions(prefix, key, versions) {
      if (versions.length === 0) throw badRequest('No version number provided');
      await updateVersions(prefix, key, versions, (v) => {
        if (v.destroyed || v.deletion_ms === null) return false;
        v.deletion_ms = null;
        return true;
      });
    },
    async destroyVersions(prefix, key, versions) {
      if (versions.length === 0) throw badRequest('no version number provided');
      await updateVersions(prefix, key, versions, async (v, n, tx, keyHash) => {
        if (v.destroyed) return false;
        v.destroyed = true;
        await tx.delete(versionPath(prefix, keyHash, n));
        return true;
      });
    },

    async readMetadata(prefix, key) {
      const meta = parseMeta(await storage.get(metaPath(prefix, key)));
      if (!meta) return null;
      const versions: Record<string, unknown> = {};
      for (const v of meta.versions) {
        versions[String(v.n)] = {
          created_time: rfc3339(v.created_ms),
          deletion_time: v.deletion_ms === null ? '' : rfc3339(v.deletion_ms),
          destroyed: v.destroyed,
        };
      }
      return {
        cas_required: meta.cas_required,
        created_time: rfc3339(meta.created_ms),
        current_version: meta.current_version,
        custom_metadata: meta.custom_metadata,
        delete_version_after: goDuration(meta.delete_version_after),
        max_versions: meta.max_versions,
        oldest_version: meta.oldest_version,
        updated_time: rfc3339(meta.updated_ms),
        versions,
      };
    },

    async writeMetadata(prefix, key, input, patch) {
      let custom: Record<string, unknown> | null | undefined = input.custom_metadata;
      if (input.max_versions !== undefined && input.max_versions < 0) throw badRequest('max_versions must be greater than or equal to 0');
      await storage.transaction(async (tx) => {
        const existing = parseMeta(await tx.get(metaPath(prefix, key), { forUpdate: true }));
        if (patch && !existing) throw notFound();
        const now = clock.now();
        const meta = existing ?? newMetadata(now);
        if (input.max_versions !== undefined) meta.max_versions = input.max_versions;
        if (input.cas_required !== undefined) meta.cas_required = input.cas_required;
        if (input.delete_version_after !== undefined) meta.delete_version_after = input.delete_version_after;
        if (custom !== undefined) {
          if (patch && custom !== null) custom = mergePatch(meta.custom_metadata ?? {}, custom) as Record<string, unknown>;
          const validated = custom === null ? {} : validateCustomMetadata(custom);
          meta.custom_metadata = Object.keys(validated).length > 0 ? (sortKeys(validated) as Record<string, string>) : null;
        }
        meta.updated_ms = now;
        // Prune immediately when max_versions shrinks below the stored count.
        const config = await readConfig(prefix);
        const max = effectiveMax(meta, config);
        const keyHash = hash(key);
        for (const oldest of pruneTo(meta, max)) await tx.delete(versionPath(prefix, keyHash, oldest));
        if (existing) await tx.put(metaPath(prefix, key), encodeMetadata(meta));
        else await tx.insert(metaPath(prefix, key), encodeMetadata(meta));
      });
    },

    async deleteMetadata(prefix, key) {
      await storage.transaction(async (tx) => {
        await tx.get(metaPath(prefix, key), { forUpdate: true });
        await tx.delete(metaPath(prefix, key));
        await tx.deletePrefix(versionDir(prefix, hash(key)));
      });
    },

    async list(prefix, dir) {
      const base = metaDir(prefix) + dir;
      return childrenOf(await storage.listPaths(base), base);
    },

    async subkeys(prefix, key, requested, depth) {
      // Served from the physical cache without waiting when it holds the whole answer.
      const { meta, version, data } = (requested === 0 ? peekLatest(prefix, key) : undefined) ?? (await resolveVersion(prefix, key, requested));
      if (!meta) throw notFound();
      const v = findVersion(meta, version);
      if (!v) throw notFound();
      if (isDeleted(v, clock.now())) {
        return new Reply(404, { data: { subkeys: null, metadata: versionInfo(meta, version, v) } });
      }
      if (data === null) throw notFound();
      return { subkeys: subkeysOf(JSON.parse(data.toString('utf8')), depth), metadata: versionInfo(meta, version, v) };
    },

    async start() {
      await bus.subscribe(KV_CONFIG_CHANNEL, (prefix) => drop(prefix));
      bus.onReconnect(() => drop(null));
    },
    clearCache: () => {
      // (Sealing: the decoded metadata goes with the keys.)
      written.clear();
      drop(null);
    },
  };
}
