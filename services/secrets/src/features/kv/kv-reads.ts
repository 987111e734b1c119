// KV v2 data reads (issue 3, item 6; reference §3) and how they use the physical cache
// (docs/secrets.md, "Physical cache" and "Eighth round"): a latest-version read is one
// `getWithLast` (metadata row and newest version row together), answered by the cache when
// it holds the pair; when it holds it now, the read finishes without waiting on a promise
// (`LatestPeek`), and each key's latest answer is kept with the very cached pair it was
// built from, served again only while the cache still holds that pair. This file is the
// only user of `LatestPeek`.
import { Reply } from '@selfstack/http-kit';
import { notFound } from '../../core/errors';
import type { Clock } from '../../core/clock';
import { RawJson } from '../../core/json';
import type { LatestPeek, Storage, WithLast } from '../barrier/storage.types';
import { decodeMetadata, findVersion, metaPath, versionDir, versionPath, type KeyMetadata, type VersionMeta } from './kv-layout';
import { isDeleted, subkeysOf, versionInfo, type VersionInfo } from './kv-versions';

export interface KvReads {
  /** Version `version` of `key` (0: the latest): its data and metadata, or Vault's 404 with a body when deleted. */
  read(prefix: string, key: string, version: number): Promise<{ data: RawJson; metadata: VersionInfo } | Reply>;
  subkeys(prefix: string, key: string, version: number, depth: number): Promise<Record<string, unknown> | Reply>;
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

interface Resolved {
  meta: KeyMetadata | null;
  version: number;
  data: Buffer | null;
}

/** No physical cache: nothing is ever held. */
const NO_PEEK: LatestPeek = { peekWithLast: () => undefined, stillCached: () => false };

/**
 * `storage` serves the reads (the physical cache's view when there is one: services.ts);
 * `peek` its synchronous fast path. Without a cache: any Storage and no peek.
 */
export function createKvReads(deps: { storage: Storage; peek?: LatestPeek; clock: Clock; hash: (key: string) => string }): KvReads {
  const { storage, clock, hash } = deps;
  const peek = deps.peek ?? NO_PEEK;

  // Latest-version reads may be answered by the physical cache, which hands out the same
  // plaintext Buffers for as long as it holds the entries (Barrier.cachedView): the
  // metadata decoded from such a Buffer and the answer built on it are kept with it
  // (WeakMaps: they go when the cache lets the entry go). Both are read-only.
  const parsedMeta = new WeakMap<Buffer, KeyMetadata>();
  const answers = new WeakMap<Buffer, { meta: KeyMetadata; version: number; answer: VersionAnswer }>();

  // The latest-version answer of each key read lately, tied to the cached pair it was built
  // from and served only while the cache says it still holds that very pair
  // (stillCached): exactly as coherent as the cache, without looking the pair up again.
  // Held weakly: a record lives as long as its pair (as the plaintexts it was built from).
  interface LatestAnswer {
    readonly pair: WithLast;
    readonly v: VersionMeta;
    readonly answer: VersionAnswer;
  }
  const LATEST_MAX = 8192;
  const latestAnswers = new Map<string, Map<string, WeakRef<LatestAnswer>>>();
  const latestByPair = new WeakMap<WithLast, LatestAnswer>();
  const rememberLatest = (prefix: string, key: string, pair: WithLast, v: VersionMeta, answer: VersionAnswer): void => {
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

  /**
   * The latest version from `getWithLast`'s pair (metadata, greatest version row). `data`
   * undefined: the current version exists but is not that row (it must be read by path).
   */
  function latestOf(prefix: string, keyHash: string, found: WithLast) {
    const meta = found.entry === null ? null : sharedMeta(found.entry);
    if (!meta) return { meta, version: 0, data: null };
    const current = meta.current_version;
    const { last } = found;
    if (last && last.path === versionPath(prefix, keyHash, current)) return { meta, version: current, data: last.value };
    const v = findVersion(meta, current);
    return { meta, version: current, data: v && !v.destroyed ? undefined : null };
  }

  /** The latest version when the cache holds all of it (synchronous), with the cached pair it came from; else undefined. */
  function peekLatest(prefix: string, key: string): (Resolved & { pair: WithLast }) | undefined {
    const keyHash = hash(key);
    const found = peek.peekWithLast(metaPath(prefix, key), versionDir(prefix, keyHash));
    if (found === undefined) return undefined;
    const r = latestOf(prefix, keyHash, found);
    return r.data === undefined ? undefined : { meta: r.meta, version: r.version, data: r.data, pair: found };
  }

  async function resolveVersion(prefix: string, key: string, version: number): Promise<Resolved> {
    const keyHash = hash(key);
    const mp = metaPath(prefix, key);
    if (version > 0) {
      const vp = versionPath(prefix, keyHash, version);
      const rows = await storage.getMany([mp, vp]);
      const raw = rows.get(mp);
      return { meta: raw === undefined ? null : decodeMetadata(raw), version, data: rows.get(vp) ?? null };
    }
    const r = latestOf(prefix, keyHash, await storage.getWithLast(mp, versionDir(prefix, keyHash)));
    const data = r.data === undefined ? await storage.get(versionPath(prefix, keyHash, r.version)) : r.data;
    return { meta: r.meta, version: r.version, data };
  }

  return {
    async read(prefix, key, requested) {
      if (requested === 0) {
        const latest = latestAnswers.get(prefix)?.get(key)?.deref();
        if (latest !== undefined && peek.stillCached(latest.pair) && !isDeleted(latest.v, clock.now())) return latest.answer;
      }
      // Served from the physical cache without waiting when it holds the whole answer.
      const peeked = requested === 0 ? peekLatest(prefix, key) : undefined;
      const { meta, version, data } = peeked ?? (await resolveVersion(prefix, key, requested));
      if (!meta) throw notFound();
      const v = findVersion(meta, version);
      if (!v) throw notFound();
      if (isDeleted(v, clock.now())) return new Reply(404, { data: { data: null, metadata: versionInfo(meta, version, v) } });
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
  };
}
