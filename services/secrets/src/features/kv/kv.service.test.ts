import { join } from 'node:path';
import { createMemoryBus } from '@selfstack/bus';
import { runPromotionFixture } from '@selfstack/testing';
import { Reply } from '@selfstack/http-kit';
import { goDuration, rfc3339 } from '../../core/duration';
import { RawJson, stringifyWithRaw } from '../../core/json';
import { createMemoryStores } from '../../../test/memory-store';
import { createBarrier, type Barrier } from '../barrier/barrier.service';
import type { Storage } from '../barrier/storage.types';
import { createCachedStore, type CachedStore } from '../barrier/entry-cache';
import { hmacHex } from '../barrier/salt';
import { decodeMetadata, metaPath, type KeyMetadata } from './kv-layout';
import { childrenOf, mergePatch, subkeysOf, validateCustomMetadata } from './kv-versions';
import { KeyedQueue, LastWrites, OPTIMISTIC_ATTEMPTS } from './kv-writes';
import { createKvService } from './kv.service';

describe('KV helpers', () => {
  it('mergePatch follows RFC 7396', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: null, b: { c: null, x: 1 }, e: [2], f: 'n' })).toEqual({ b: { d: 3, x: 1 }, e: [2], f: 'n' });
    expect(mergePatch({ a: 1 }, 'scalar')).toBe('scalar');
    expect(mergePatch('scalar', { a: 1 })).toEqual({ a: 1 });
  });
  it('childrenOf lists direct children, folders with a slash, sorted', () => {
    expect(childrenOf(['p/a', 'p/b/c', 'p/b/d', 'p/b', 'p/z/y/x'], 'p/')).toEqual(['a', 'b', 'b/', 'z/']);
    expect(childrenOf([], 'p/')).toEqual([]);
  });
  it('subkeysOf replaces leaves with null and honours depth', () => {
    const v = { a: 1, b: { c: { d: 1 } }, e: [1, 2] };
    expect(subkeysOf(v, 0)).toEqual({ a: null, b: { c: { d: null } }, e: null });
    expect(subkeysOf(v, 2)).toEqual({ a: null, b: { c: null }, e: null });
  });
  it('validates custom metadata', () => {
    expect(validateCustomMetadata({ a: 'b' })).toEqual({ a: 'b' });
    expect(() => validateCustomMetadata({ ['k'.repeat(129)]: 'v' })).toThrow(/length of key/);
    expect(() => validateCustomMetadata({ k: 'v'.repeat(513) })).toThrow(/length of value/);
    expect(() => validateCustomMetadata({ k: 1 as unknown as string })).toThrow(/must be a string/);
    expect(() => validateCustomMetadata({ k: 'a\u0000b' })).toThrow(/unprintable/);
  });
  it('formats durations and times as Go does', () => {
    expect(goDuration(0)).toBe('0s');
    expect(goDuration(45)).toBe('45s');
    expect(goDuration(60)).toBe('1m0s');
    expect(goDuration(12319)).toBe('3h25m19s');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 120))).toBe('2026-01-02T03:04:05.12Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 0))).toBe('2026-01-02T03:04:05Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 7))).toBe('2026-01-02T03:04:05.007Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 70))).toBe('2026-01-02T03:04:05.07Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 999))).toBe('2026-01-02T03:04:05.999Z');
  });
  it("formats every millisecond as Go's RFC3339Nano does, within a second and across seconds", () => {
    // Go trims trailing zeros of the fraction and drops a zero fraction.
    const go = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z').replace(/\.Z$/, 'Z');
    const start = Date.UTC(2026, 10, 25, 23, 59, 58, 0);
    for (let ms = start - 1500; ms < start + 2500; ms++) expect(rfc3339(ms)).toBe(go(ms));
    // Out of the cached second and back; before 1970; years past 9999 (toISOString's own form).
    for (const ms of [0, -1, -1000, -999, 1, start, Date.UTC(1969, 11, 31, 23, 59, 59, 500), start + 0.5, Date.UTC(10000, 0, 1, 0, 0, 0, 250)]) {
      expect(rfc3339(ms)).toBe(go(ms));
    }
  });
  it('splices raw JSON verbatim', () => {
    expect(stringifyWithRaw({ a: new RawJson('{"z":1,"a":2}'), b: [new RawJson('3')] })).toBe('{"a":{"z":1,"a":2},"b":[3]}');
    expect(JSON.stringify({ a: new RawJson('{"x":1}') })).toBe('{"a":{"x":1}}');
    expect(stringifyWithRaw({ data: { data: new RawJson('{"k":"v"}'), metadata: { version: 2, destroyed: false } }, warnings: null })).toBe(
      '{"data":{"data":{"k":"v"},"metadata":{"version":2,"destroyed":false}},"warnings":null}',
    );
    expect(stringifyWithRaw(new RawJson('[1]'))).toBe('[1]');
  });
  it('writes everything without raw parts exactly as JSON.stringify does', () => {
    const date = new Date(Date.UTC(2026, 0, 2));
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { z: 1, a: [2] });
    const values: unknown[] = [
      null,
      undefined,
      0,
      -1.5,
      Number.NaN,
      Infinity,
      'quote " backslash \\ newline \n \u2028 \ud800',
      true,
      [],
      {},
      [1, 'two', null, undefined, () => 1, { a: undefined }],
      { b: 1, a: { c: [1, { d: 'x' }] }, skipped: undefined, fn: () => 1, sym: Symbol('s'), n: null, '': 'empty key', 'k"q': 1 },
      { date, nested: { toJSON: () => 'custom' }, arr: [date] },
      { 2: 'two', 1: 'one', b: 'b', a: 'a' },
      nullProto,
      { deep: { deeper: { deepest: {} } } },
    ];
    for (const v of values) expect(stringifyWithRaw(v)).toBe(JSON.stringify(v) ?? 'null');
  });
});

describe('KeyedQueue', () => {
  it('runs calls of one key in order, other keys alongside, and forgets settled keys', async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const gates: Record<string, () => void> = {};
    const step = (name: string) => () =>
      new Promise<string>((resolve) => {
        log.push(`start ${name}`);
        gates[name] = () => {
          log.push(`end ${name}`);
          resolve(name);
        };
      });
    const a1 = q.run('a', step('a1'));
    const a2 = q.run('a', step('a2'));
    const b1 = q.run('b', step('b1'));
    await new Promise((r) => setImmediate(r));
    // a2 waits for a1; b1 runs at once.
    expect(log).toEqual(['start a1', 'start b1']);
    gates.b1!();
    gates.a1!();
    await expect(a1).resolves.toBe('a1');
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start a1', 'start b1', 'end b1', 'end a1', 'start a2']);
    gates.a2!();
    await expect(Promise.all([a2, b1])).resolves.toEqual(['a2', 'b1']);
    await new Promise((r) => setImmediate(r));
    expect(q.size).toBe(0);
  });

  it('keeps idle keys for reuse, up to a bound, and drops them together past it', async () => {
    const q = new KeyedQueue();
    // One key written over and over keeps one record (no Map entry added or deleted per call).
    for (let i = 0; i < 50; i++) await q.run('hot', async () => i);
    await new Promise((r) => setImmediate(r));
    expect(q.size).toBe(0);
    expect(q.retained).toBe(1);
    // Many distinct keys: idle records are dropped once they outnumber the bound and the busy ones.
    const held: (() => void)[] = [];
    const busy = q.run('busy', () => new Promise<void>((resolve) => held.push(resolve)));
    for (let i = 0; i < 3000; i++) await q.run(`k${i}`, async () => i);
    await new Promise((r) => setImmediate(r));
    expect(q.size).toBe(1);
    expect(q.retained).toBeLessThanOrEqual(1026);
    // The busy key's order survives the drops.
    const order: string[] = [];
    const after = q.run('busy', async () => void order.push('second'));
    held[0]!();
    await busy;
    order.push('first settled');
    await after;
    expect(order).toEqual(['first settled', 'second']);
    await new Promise((r) => setImmediate(r));
    expect(q.size).toBe(0);
  });

  it("keeps a write's promises and Buffers from being promoted by V8's scavenges (child process)", async () => {
    // ~515 bytes of old generation per write when KeyedQueue and the guard cache added and
    // deleted a Map entry per write; ~190 now (the in-memory store's own maps). See
    // test/fixtures/write-promotion.ts and @selfstack/http-kit's slot-set.ts.
    const root = join(__dirname, '..', '..', '..');
    const { writes, perWrite } = await runPromotionFixture(join(root, 'test', 'fixtures', 'write-promotion.ts'), [], root);
    expect(writes).toBe(4000);
    expect(perWrite).toBeLessThan(350);
  }, 60_000);

  it('a failed call does not block the next one of its key', async () => {
    const q = new KeyedQueue();
    const failed = q.run('k', async () => {
      throw new Error('boom');
    });
    const next = q.run('k', async () => 'ok');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
  });
});

describe('LastWrites', () => {
  const meta = (current: number): KeyMetadata => ({
    created_ms: 1,
    updated_ms: 2,
    current_version: current,
    oldest_version: 0,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
    versions: [{ n: current, created_ms: 2, deletion_ms: null, destroyed: false }],
  });
  // Guards are opaque to KV: any distinct objects stand in for them here.
  const guard = (name: string) => ({ name }) as unknown as Parameters<LastWrites['remember']>[1];

  it('answers the last write of a key (its guard and metadata, the very objects) until forgotten', () => {
    const w = new LastWrites();
    expect(w.get('p/meta/k')).toBeUndefined();
    const g1 = guard('1');
    const m1 = meta(1);
    w.remember('p/meta/k', g1, m1);
    expect(w.get('p/meta/k')).toEqual({ guard: g1, meta: m1 });
    expect(w.get('p/meta/k')?.meta).toBe(m1);
    const m2 = meta(2);
    w.remember('p/meta/k', guard('2'), m2);
    expect(w.get('p/meta/k')?.meta).toBe(m2);
    w.forget('p/meta/k');
    expect(w.get('p/meta/k')).toBeUndefined();
    // The record stays (updated in place when the key is written again).
    expect(w.size).toBe(1);
    w.remember('p/meta/k', g1, m1);
    expect(w.get('p/meta/k')?.meta).toBe(m1);
    expect(w.get('p/meta/other')).toBeUndefined();
  });

  it('keeps one record per key up to a bound (the first remembered goes first); clear forgets everything', () => {
    const w = new LastWrites(3);
    for (const k of ['k0', 'k1', 'k2']) w.remember(k, guard(k), meta(1));
    w.remember('k0', guard('again'), meta(2));
    expect(w.size).toBe(3);
    w.remember('k3', guard('k3'), meta(1));
    expect(w.size).toBe(3);
    expect(w.get('k0')).toBeUndefined();
    expect(w.get('k3')?.meta.current_version).toBe(1);
    w.clear();
    expect(w.size).toBe(0);
    expect(w.get('k3')).toBeUndefined();
  });
});

describe('KV v2 service over the barrier (in-memory store)', () => {
  /**
   * KV over the barrier over the in-memory store, as services.ts composes them. `wrap`
   * wraps the store (a race, a counter); `cache` puts the physical cache in front of it
   * (KV data reads then go through its cached view).
   */
  interface Layers {
    wrap?: (store: Storage) => Storage;
    cache?: (store: Storage) => CachedStore;
  }
  async function setup(layers: Layers = {}) {
    const stores = createMemoryStores();
    const salt = Buffer.alloc(32, 7);
    let now = 1_000_000;
    const compose = (l: Layers) => {
      const wrapped = (l.wrap ?? ((store: Storage) => store))(stores.entryStore);
      const cache = l.cache?.(wrapped);
      const barrier = createBarrier({ barrierStore: stores.barrierStore, storage: cache ? cache.uncached : wrapped });
      const kv = createKvService({
        storage: barrier,
        ...(cache ? { dataReads: barrier.cachedView(cache) } : {}),
        clock: { now: () => now },
        bus: createMemoryBus(),
        hash: (v) => hmacHex(salt, v),
      });
      return { barrier, kv };
    };
    const { barrier, kv } = compose(layers);
    const { keys } = await barrier.initialize(1, 1, async (tx) => tx.put('core/salt', salt));
    await barrier.submitUnsealKey(keys[0] as Buffer);
    // Another replica over the same storage (its own barrier, unsealed with the same key).
    const replica = async (other: Layers = {}) => {
      const r = compose(other);
      await r.barrier.submitUnsealKey(keys[0] as Buffer);
      return r;
    };
    return { kv, stores, advance: (ms: number) => (now += ms), barrier, replica };
  }

  it('over the physical cache: repeated latest reads share one answer, and every change is seen', async () => {
    const { kv, advance } = await setup({ cache: (store) => createCachedStore(store, { bus: createMemoryBus(), maxBytes: 1 << 20, ttlMs: 60_000 }) });
    const data = (r: unknown) => (r instanceof Reply ? `status ${r.status}` : JSON.parse((r as { data: RawJson }).data.text));
    await kv.write('m/', 'k', { a: 1 }, undefined);
    const first = await kv.read('m/', 'k', 0);
    expect(data(first)).toEqual({ a: 1 });
    // Served from the same cached plaintext: the same (read-only) answer object.
    expect(await kv.read('m/', 'k', 0)).toBe(first);
    await kv.write('m/', 'k', { a: 2 }, undefined);
    expect(data(await kv.read('m/', 'k', 0))).toEqual({ a: 2 });
    await kv.deleteLatest('m/', 'k');
    expect(data(await kv.read('m/', 'k', 0))).toBe('status 404');
    await kv.undeleteVersions('m/', 'k', [2]);
    expect(data(await kv.read('m/', 'k', 0))).toEqual({ a: 2 });
    // A deletion time passing changes no row: the cached metadata is judged at read time.
    await kv.writeMetadata('m/', 'k', { delete_version_after: 60 }, false);
    await kv.write('m/', 'k', { a: 3 }, undefined);
    const fresh = await kv.read('m/', 'k', 0);
    expect(data(fresh)).toEqual({ a: 3 });
    expect(await kv.read('m/', 'k', 0)).toBe(fresh);
    advance(61_000);
    expect(data(await kv.read('m/', 'k', 0))).toBe('status 404');
    await kv.destroyVersions('m/', 'k', [2]);
    expect(data(await kv.read('m/', 'k', 2))).toBe('status 404');
    await kv.deleteMetadata('m/', 'k');
    await expect(kv.read('m/', 'k', 0)).rejects.toMatchObject({ status: 404 });
  });

  it('over the physical cache: a remembered answer goes with its cache entry (another replica\'s write, a purge, a seal)', async () => {
    const bus = createMemoryBus();
    const caches: CachedStore[] = [];
    const cached = (store: Storage): CachedStore => {
      const cache = createCachedStore(store, { bus, maxBytes: 1 << 20, ttlMs: 60_000, heartbeatMs: 0, publishDelayMs: 0 });
      caches.push(cache);
      return cache;
    };
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    };
    const { kv, barrier, replica } = await setup({ cache: cached });
    const other = await replica({ cache: cached });
    for (const cache of caches) await cache.start();
    const data = (r: unknown) => JSON.parse((r as { data: RawJson }).data.text) as unknown;
    await kv.write('m/', 'k', { a: 1 }, undefined);
    const first = await kv.read('m/', 'k', 0);
    const hits = caches[0]!.stats.hits;
    expect(await kv.read('m/', 'k', 0)).toBe(first);
    // Answered from the remembered answer, still counted as a cache hit.
    expect(caches[0]!.stats.hits).toBe(hits + 1);
    // Another replica writes; once its invalidation arrives this one reads the new version.
    await other.kv.write('m/', 'k', { a: 2 }, undefined);
    await settle();
    expect(data(await kv.read('m/', 'k', 0))).toEqual({ a: 2 });
    const second = await kv.read('m/', 'k', 0);
    expect(await kv.read('m/', 'k', 0)).toBe(second);
    // A purge (lost message, bus reconnect) drops it too: the next read loads the pair again.
    const misses = caches[0]!.stats.misses;
    caches[0]!.purge();
    expect(data(await kv.read('m/', 'k', 0))).toEqual({ a: 2 });
    expect(caches[0]!.stats.misses).toBe(misses + 1);
    // Sealed: refused, not answered from memory.
    barrier.seal();
    await expect(kv.read('m/', 'k', 0)).rejects.toMatchObject({ status: 503 });
    for (const cache of caches) cache.stop();
  });

  it('writes versions, prunes at max_versions, reads old versions', async () => {
    const { kv } = await setup();
    await kv.writeMetadata('m/', 'k', { max_versions: 2 }, false);
    for (let i = 1; i <= 3; i++) expect((await kv.write('m/', 'k', { i }, undefined)).version).toBe(i);
    expect(await kv.read('m/', 'k', 1).catch((e: { status: number }) => e.status)).toBe(404);
    const v2 = await kv.read('m/', 'k', 2);
    expect(v2).not.toBeInstanceOf(Reply);
    if (!(v2 instanceof Reply)) expect(JSON.parse(v2.data.text)).toEqual({ i: 2 });
    const meta = await kv.readMetadata('m/', 'k');
    expect(meta).toMatchObject({ current_version: 3, oldest_version: 2 });
  });

  it('a metadata row in the earlier encoding (a JSON object) reads as before and is rewritten compact by the next write', async () => {
    const { kv, barrier } = await setup();
    await kv.writeMetadata('m/', 'k', { max_versions: 3, custom_metadata: { team: 'a' } }, false);
    for (let i = 1; i <= 3; i++) await kv.write('m/', 'k', { i }, undefined);
    await kv.deleteVersions('m/', 'k', [2]);
    const before = await kv.readMetadata('m/', 'k');
    const mp = metaPath('m/', 'k');
    const stored = (await barrier.get(mp)) as Buffer;
    expect(stored.toString('utf8').startsWith('[')).toBe(true);
    // As a release before the compact encoding wrote it.
    await barrier.put(mp, Buffer.from(JSON.stringify(decodeMetadata(stored))));
    expect((await barrier.get(mp))?.toString('utf8').startsWith('{"created_ms"')).toBe(true);
    expect(await kv.readMetadata('m/', 'k')).toEqual(before);
    const latest = await kv.read('m/', 'k', 0);
    expect(latest instanceof Reply ? latest.status : JSON.parse(latest.data.text)).toEqual({ i: 3 });
    expect(((await kv.read('m/', 'k', 2)) as Reply).status).toBe(404);
    expect((await kv.write('m/', 'k', { i: 4 }, 3)).version).toBe(4);
    expect((await barrier.get(mp))?.toString('utf8').startsWith('[1,')).toBe(true);
    const after = await kv.readMetadata('m/', 'k');
    expect(after).toMatchObject({ current_version: 4, oldest_version: 2, max_versions: 3, custom_metadata: { team: 'a' } });
    expect(Object.keys(after?.['versions'] as object)).toEqual(['2', '3', '4']);
    expect((after?.['versions'] as Record<string, unknown>)['2']).toEqual((before?.['versions'] as Record<string, unknown>)['2']);
  });

  it('delete_version_after: a future deletion time still reads; a past one is deleted', async () => {
    const { kv, advance } = await setup();
    await kv.writeMetadata('m/', 'k', { delete_version_after: 60 }, false);
    const info = await kv.write('m/', 'k', { a: 1 }, undefined);
    expect(info.deletion_time).not.toBe('');
    expect(await kv.read('m/', 'k', 0)).not.toBeInstanceOf(Reply);
    advance(61_000);
    const after = await kv.read('m/', 'k', 0);
    expect(after).toBeInstanceOf(Reply);
    expect((after as Reply).status).toBe(404);
  });

  it('stores only ciphertext, with the key name hashed in version paths', async () => {
    const { kv, stores } = await setup();
    await kv.write('m/', 'secret-name', { password: 'hunter2' }, undefined);
    for (const [path, value] of stores.entries) {
      expect(value.includes(Buffer.from('hunter2'))).toBe(false);
      if (path.startsWith('m/ver/')) expect(path.includes('secret-name')).toBe(false);
    }
  });

  it('sealing drops access to storage', async () => {
    const { kv, barrier } = await setup();
    await kv.write('m/', 'k', { a: 1 }, undefined);
    barrier.seal();
    await expect(kv.read('m/', 'k', 0)).rejects.toMatchObject({ status: 503 });
  });

  /**
   * Wraps the entry store so that before each of the first `lose` conditional writes another
   * writer rewrites the metadata row (`interfere`), making the guard fail; counts calls.
   */
  function racing(lose: number, interfere: (barrier: Barrier) => Promise<void>) {
    let barrier: Barrier | null = null;
    const calls = { applyIf: 0, applied: 0, transaction: 0 };
    const wrap = (store: Storage): Storage => ({
      ...store,
      applyIf: async (...args) => {
        calls.applyIf++;
        if (calls.applyIf <= lose && barrier) await interfere(barrier);
        const ok = await store.applyIf(...args);
        if (ok) calls.applied++;
        return ok;
      },
      transaction: (fn) => {
        calls.transaction++;
        return store.transaction(fn);
      },
    });
    return { calls, wrap, attach: (b: Barrier) => void (barrier = b) };
  }
  // Re-encrypts the same metadata: the plaintext is unchanged but the stored bytes are not.
  const rewriteMeta = async (b: Barrier) => {
    const mp = metaPath('m/', 'k');
    const v = await b.get(mp);
    if (v) await b.put(mp, v);
  };

  it('without a race a write applies on its first conditional write, with no transaction', async () => {
    const race = racing(0, rewriteMeta);
    const { kv, barrier } = await setup({ wrap: race.wrap });
    race.attach(barrier);
    expect((await kv.write('m/', 'k', { a: 1 }, undefined)).version).toBe(1);
    expect((await kv.write('m/', 'k', { a: 2 }, 1)).version).toBe(2);
    expect(race.calls).toEqual({ applyIf: 2, applied: 2, transaction: 0 });
  });

  it('a lost race re-reads and retries without the lock', async () => {
    const race = racing(OPTIMISTIC_ATTEMPTS - 1, rewriteMeta);
    const { kv, barrier } = await setup({ wrap: race.wrap });
    await kv.write('m/', 'k', { a: 1 }, undefined);
    race.attach(barrier);
    race.calls.applyIf = 0;
    race.calls.applied = 0;
    expect((await kv.write('m/', 'k', { a: 2 }, 1)).version).toBe(2);
    expect(race.calls).toEqual({ applyIf: OPTIMISTIC_ATTEMPTS, applied: 1, transaction: 0 });
  });

  it(`after ${OPTIMISTIC_ATTEMPTS} lost races the write goes through the locking transaction`, async () => {
    const race = racing(OPTIMISTIC_ATTEMPTS, rewriteMeta);
    const { kv, barrier } = await setup({ wrap: race.wrap });
    await kv.write('m/', 'k', { a: 1 }, undefined);
    race.attach(barrier);
    race.calls.applyIf = 0;
    race.calls.applied = 0;
    const info = await kv.write('m/', 'k', { a: 2 }, 1);
    expect(info.version).toBe(2);
    expect(race.calls).toEqual({ applyIf: OPTIMISTIC_ATTEMPTS, applied: 0, transaction: 1 });
    const r = await kv.read('m/', 'k', 0);
    expect(r).not.toBeInstanceOf(Reply);
    if (!(r instanceof Reply)) expect(JSON.parse(r.data.text)).toEqual({ a: 2 });
    expect(await kv.readMetadata('m/', 'k')).toMatchObject({ current_version: 2 });
  });

  it('a cas write that lost to another version answers the cas error after re-reading', async () => {
    let kvRef: ReturnType<typeof createKvService> | null = null;
    let inside = false;
    const race = racing(1, async () => {
      if (inside || !kvRef) return;
      inside = true;
      await kvRef.write('m/', 'k', { other: true }, undefined);
      inside = false;
    });
    const { kv, barrier, replica } = await setup({ wrap: race.wrap });
    await kv.write('m/', 'k', { a: 1 }, undefined);
    race.attach(barrier);
    race.calls.applyIf = 0;
    // The other writer is another replica (writes of one key from this process queue).
    kvRef = (await replica()).kv;
    await expect(kv.write('m/', 'k', { a: 2 }, 1)).rejects.toMatchObject({
      status: 400,
      messages: ['check-and-set parameter did not match the current version'],
    });
    expect(race.calls.transaction).toBe(0);
    expect(await kv.readMetadata('m/', 'k')).toMatchObject({ current_version: 2 });
  });

  it('16 concurrent writes get versions 1..16 with their own data', async () => {
    const { kv } = await setup();
    await kv.writeMetadata('m/', 'k', { max_versions: 20 }, false);
    const infos = await Promise.all(Array.from({ length: 16 }, (_, i) => kv.write('m/', 'k', { i }, undefined)));
    expect(infos.map((x) => x.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    for (let i = 0; i < 16; i++) {
      const r = await kv.read('m/', 'k', infos[i]?.version ?? 0);
      if (r instanceof Reply) throw new Error('unexpected status');
      expect(JSON.parse(r.data.text)).toEqual({ i });
    }
    expect(await kv.readMetadata('m/', 'k')).toMatchObject({ current_version: 16 });
  });

  it('a write starts from what this process last wrote (no read); a stale start costs one failed guard, never a wrong write', async () => {
    const calls = { getGuarded: 0, applyIf: 0, applied: 0 };
    const wrap = (store: Storage): Storage => ({
      ...store,
      getGuarded: (path) => {
        calls.getGuarded++;
        return store.getGuarded(path);
      },
      applyIf: async (...args) => {
        calls.applyIf++;
        const next = await store.applyIf(...args);
        if (next) calls.applied++;
        return next;
      },
    });
    const { kv, replica } = await setup({ wrap });
    const seen = () => ({ ...calls });
    await kv.write('m/', 'k', { n: 1 }, undefined);
    expect(seen()).toEqual({ getGuarded: 1, applyIf: 1, applied: 1 });
    await kv.write('m/', 'k', { n: 2 }, 1);
    expect(seen()).toEqual({ getGuarded: 1, applyIf: 2, applied: 2 });
    // Another replica writes: the remembered state fails its guard once, then a fresh read applies.
    await (await replica()).kv.write('m/', 'k', { n: 3 }, undefined);
    expect((await kv.write('m/', 'k', { n: 4 }, undefined)).version).toBe(4);
    expect(seen()).toEqual({ getGuarded: 2, applyIf: 4, applied: 3 });
    // A transaction here (a version state change, a patch, metadata) forgets it: read first.
    await kv.deleteVersions('m/', 'k', [1]);
    expect((await kv.write('m/', 'k', { n: 5 }, undefined)).version).toBe(5);
    expect(seen()).toEqual({ getGuarded: 3, applyIf: 5, applied: 4 });
    await kv.writeMetadata('m/', 'k', { max_versions: 4 }, false);
    await kv.write('m/', 'k', { n: 6 }, undefined);
    expect(seen()).toEqual({ getGuarded: 4, applyIf: 6, applied: 5 });
    // So does sealing (clearCache).
    kv.clearCache();
    await kv.write('m/', 'k', { n: 7 }, undefined);
    expect(seen()).toEqual({ getGuarded: 5, applyIf: 7, applied: 6 });
    expect(await kv.readMetadata('m/', 'k')).toMatchObject({ current_version: 7, oldest_version: 4 });
  });

  it('a KV write never answers from a stale remembered state: CAS is checked against storage', async () => {
    const { kv, replica } = await setup();
    await kv.write('m/', 'k', { n: 1 }, undefined);
    const other = await replica();
    await other.kv.write('m/', 'k', { n: 2 }, undefined);
    // This process remembers version 1; the key is at 2. cas=2 is right and must apply.
    await expect(kv.write('m/', 'k', { n: 3 }, 2)).resolves.toMatchObject({ version: 3 });
    await other.kv.write('m/', 'k', { n: 4 }, 3);
    // Remembered 3, actual 4: cas=3 is wrong (the error comes from a fresh read), cas=4 right.
    await expect(kv.write('m/', 'k', { n: 5 }, 3)).rejects.toThrow(/check-and-set parameter did not match/);
    await expect(kv.write('m/', 'k', { n: 5 }, 4)).resolves.toMatchObject({ version: 5 });
    const r = await other.kv.read('m/', 'k', 0);
    if (r instanceof Reply) throw new Error('unexpected status');
    expect(JSON.parse(r.data.text)).toEqual({ n: 5 });
    expect(r.metadata).toMatchObject({ version: 5 });
  });

  it('getGuarded/applyIf: byte-exact guard, no ABA, all or nothing', async () => {
    const { barrier, stores } = await setup();
    // The barrier's ciphertexts never repeat, so its guards see every write (test/storage-contract.ts has the rest).
    await barrier.put('a/g', Buffer.from('meta'));
    await barrier.put('a/old', Buffer.from('o'));
    const first = await barrier.getGuarded('a/g');
    expect(first.value).toEqual(Buffer.from('meta'));
    // Same plaintext written again: different ciphertext, so the guard no longer holds.
    await barrier.put('a/g', Buffer.from('meta'));
    expect(await barrier.applyIf('a/g', first.guard, Buffer.from('m2'), ['a/old'], [{ path: 'a/new', value: Buffer.from('n') }])).toBeNull();
    expect(stores.entries.has('a/new')).toBe(false);
    expect(stores.entries.has('a/old')).toBe(true);
    const second = await barrier.getGuarded('a/g');
    expect(await barrier.applyIf('a/g', second.guard, Buffer.from('m2'), ['a/old'], [{ path: 'a/new', value: Buffer.from('n') }])).not.toBeNull();
    expect(await barrier.get('a/g')).toEqual(Buffer.from('m2'));
    expect(await barrier.get('a/new')).toEqual(Buffer.from('n'));
    expect(stores.entries.has('a/old')).toBe(false);
    // A used guard is stale.
    expect(await barrier.applyIf('a/g', second.guard, Buffer.from('m3'), [], [])).toBeNull();
    // Absent guard: exactly one creator.
    const absent1 = await barrier.getGuarded('a/fresh');
    const absent2 = await barrier.getGuarded('a/fresh');
    expect(absent1.value).toBeNull();
    expect(await barrier.applyIf('a/fresh', absent1.guard, Buffer.from('f1'), [], [])).not.toBeNull();
    expect(await barrier.applyIf('a/fresh', absent2.guard, Buffer.from('f2'), [], [])).toBeNull();
    expect(await barrier.get('a/fresh')).toEqual(Buffer.from('f1'));
    await expect(barrier.applyIf('a/other', absent1.guard, Buffer.from('x'), [], [])).rejects.toThrow(/guard of a\/fresh/);
    const g = await barrier.getGuarded('a/g');
    await expect(barrier.applyIf('a/g', g.guard, Buffer.from('x'), ['a/g'], [])).rejects.toThrow(/more than once/);
  });
});
