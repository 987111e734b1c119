import { createMemoryBus, type Bus } from '@selfstack/bus';
import { createMemoryStores } from '../../../test/memory-store';
import type { Storage, WithLast } from './storage.types';
import { createCachedStore, ENTRY_CHANNEL, type CachedStore } from './entry-cache';

const b = (s: string): Buffer => Buffer.from(s);
const text = (v: Buffer | null): string | null => (v === null ? null : v.toString());
/** Lets the bus deliver (the memory bus delivers on setImmediate; publications are coalesced per turn). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};

/** Counts what reaches the database and can hold reads at a gate. */
function counted(inner: Storage) {
  const calls = { get: 0, getWithLast: 0 };
  let gate: Promise<void> | null = null;
  const store: Storage = {
    ...inner,
    async get(path) {
      calls.get++;
      const value = await inner.get(path);
      if (gate) await gate;
      return value;
    },
    async getWithLast(path, prefix) {
      calls.getWithLast++;
      const r = await inner.getWithLast(path, prefix);
      if (gate) await gate;
      return r;
    },
  };
  return {
    store,
    calls,
    /** Reads that reach the database from now on wait (holding what they read) until the returned function runs. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      return () => {
        gate = null;
        open();
      };
    },
  };
}

const made: CachedStore[] = [];
afterEach(() => {
  for (const c of made.splice(0)) c.stop();
});

/** Caches without heartbeats, publishing at the end of each turn, unless a test asks otherwise. */
function setup(options: { maxBytes?: number; ttlMs?: number; bus?: Bus; now?: () => number; heartbeatMs?: number; publishDelayMs?: number } = {}) {
  const mem = createMemoryStores();
  const db = counted(mem.entryStore);
  const bus = options.bus ?? createMemoryBus();
  const make = (over: { bus?: Bus } = {}): CachedStore => {
    const cache = createCachedStore(db.store, {
      bus: over.bus ?? bus,
      maxBytes: options.maxBytes ?? 1 << 20,
      ttlMs: options.ttlMs ?? 60_000,
      heartbeatMs: options.heartbeatMs ?? 0,
      publishDelayMs: options.publishDelayMs ?? 0,
      ...(options.now ? { now: options.now } : {}),
    });
    made.push(cache);
    return cache;
  };
  return { mem, db, bus, make };
}


describe('physical cache (entry-cache.ts)', () => {
  it('serves its reads from memory; its uncached view leaves them to the database', async () => {
    const { db, make } = setup();
    const cache = make();
    await cache.put('logical/m/a', b('one'));
    expect(text(await cache.get('logical/m/a'))).toBe('one');
    expect(text(await cache.get('logical/m/a'))).toBe('one');
    expect(db.calls.get).toBe(1);
    expect(text(await cache.uncached.get('logical/m/a'))).toBe('one');
    expect(db.calls.get).toBe(2);
    // Absence is cached too (and forgotten by the insert that ends it).
    expect(await cache.get('logical/m/none')).toBeNull();
    expect(await cache.get('logical/m/none')).toBeNull();
    expect(db.calls.get).toBe(3);
    await cache.transaction((tx) => tx.insert('logical/m/none', b('now')));
    expect(text(await cache.get('logical/m/none'))).toBe('now');
    expect(cache.stats.hits).toBe(2);
  });

  it('every kind of write invalidates what it touched, in this process at once', async () => {
    const { make } = setup();
    const cache = make();
    const read = async () => text(await cache.get('p/x'));
    await cache.put('p/x', b('1'));
    expect(await read()).toBe('1');
    await cache.put('p/x', b('2'));
    expect(await read()).toBe('2');
    expect(await cache.applyIf('p/x', (await cache.getGuarded('p/x')).guard, b('3'), [], [])).not.toBeNull();
    expect(await read()).toBe('3');
    await cache.transaction(async (tx) => tx.replace([], [{ path: 'p/x', value: b('4') }]));
    expect(await read()).toBe('4');
    await cache.transaction(async (tx) => tx.put('p/x', b('5')));
    expect(await read()).toBe('5');
    await cache.delete('p/x');
    expect(await read()).toBeNull();
    await cache.put('p/x', b('6'));
    expect(await read()).toBe('6');
    await cache.deletePrefix('p/');
    expect(await read()).toBeNull();
  });

  it('a failed conditional write or transaction still drops the entry (the state is unknown)', async () => {
    const { mem, db, make } = setup();
    const cache = make();
    await cache.put('k', b('cached'));
    expect(text(await cache.get('k'))).toBe('cached');
    const seen = await cache.getGuarded('k');
    mem.entries.set('k', b('changed-elsewhere'));
    expect(await cache.applyIf('k', seen.guard, b('mine'), [], [])).toBeNull();
    expect(text(await cache.get('k'))).toBe('changed-elsewhere');
    const before = db.calls.get;
    await expect(
      cache.transaction(async (tx) => {
        await tx.put('k', b('rolled-back'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(text(await cache.get('k'))).toBe('changed-elsewhere');
    expect(db.calls.get).toBe(before + 1);
  });

  it('a read that raced with a write returns what it read but does not cache it', async () => {
    const { db, make } = setup();
    const cache = make();
    await cache.put('k', b('old'));
    const release = db.hold();
    const racing = cache.get('k');
    await settle();
    await cache.put('k', b('new'));
    release();
    expect(text(await racing)).toBe('old');
    expect(text(await cache.get('k'))).toBe('new');
  });

  it('concurrent misses of one path share one database read, unless a write came in between', async () => {
    const { db, make } = setup();
    const cache = make();
    await cache.put('k', b('old'));
    let release = db.hold();
    const first = Array.from({ length: 5 }, () => cache.get('k'));
    await settle();
    expect(db.calls.get).toBe(1);
    await cache.put('k', b('new'));
    // Arrived after the write: must not join the read that started before it.
    const later = cache.get('k');
    await settle();
    expect(db.calls.get).toBe(2);
    release();
    expect((await Promise.all(first)).map(text)).toEqual(['old', 'old', 'old', 'old', 'old']);
    expect(text(await later)).toBe('new');
    expect(text(await cache.get('k'))).toBe('new');
    expect(db.calls.get).toBe(2);
    // Same for ranges (getWithLast).
    await cache.put('r/meta', b('m'));
    release = db.hold();
    const ranges = Array.from({ length: 4 }, () => cache.getWithLast('r/meta', 'r/ver/'));
    await settle();
    release();
    await Promise.all(ranges);
    expect(db.calls.getWithLast).toBe(1);
  });

  it('getWithLast: a write under the prefix invalidates the item of its owner path', async () => {
    const { db, make } = setup();
    const cache = make();
    await cache.put('m/meta/k', b('meta-1'));
    await cache.put('m/ver/h/0001', b('v1'));
    const read = async () => {
      const r = await cache.getWithLast('m/meta/k', 'm/ver/h/');
      return `${text(r.entry)} ${r.last?.path} ${text(r.last?.value ?? null)}`;
    };
    expect(await read()).toBe('meta-1 m/ver/h/0001 v1');
    expect(await read()).toBe('meta-1 m/ver/h/0001 v1');
    expect(db.calls.getWithLast).toBe(1);
    // Only the version row changes (the owner path is not written): still invalidated.
    await cache.put('m/ver/h/0002', b('v2'));
    expect(await read()).toBe('meta-1 m/ver/h/0002 v2');
    // A write in flight to a path in the range while the range is being read.
    const release = db.hold();
    const racing = read();
    await settle();
    await cache.delete('m/ver/h/0002');
    release();
    expect(await racing).toBe('meta-1 m/ver/h/0002 v2');
    expect(await read()).toBe('meta-1 m/ver/h/0001 v1');
    // Unrelated paths do not invalidate it.
    const calls = db.calls.getWithLast;
    await cache.put('m/ver/other/0001', b('x'));
    await cache.put('m/meta/other', b('x'));
    expect(await read()).toBe('meta-1 m/ver/h/0001 v1');
    expect(db.calls.getWithLast).toBe(calls);
    // Deleting a prefix that holds the range or the owner drops it.
    await cache.deletePrefix('m/ver/');
    expect(await read()).toBe('meta-1 undefined null');
  });

  it('getWithLast: ranges at different depths are each invalidated by writes under them, also after others went', async () => {
    const { db, make } = setup();
    const cache = make();
    await cache.put('a/v/1', b('deep-1'));
    await cache.put('s/1', b('shallow-1'));
    const deep = async () => text((await cache.getWithLast('a/meta', 'a/v/')).last?.value ?? null);
    const shallow = async () => text((await cache.getWithLast('s-meta', 's/')).last?.value ?? null);
    expect([await deep(), await shallow()]).toEqual(['deep-1', 'shallow-1']);
    expect([await deep(), await shallow()]).toEqual(['deep-1', 'shallow-1']);
    expect(db.calls.getWithLast).toBe(2);
    // A write in the shallow range leaves the deep one cached, and the other way round.
    await cache.put('s/2', b('shallow-2'));
    expect([await deep(), await shallow()]).toEqual(['deep-1', 'shallow-2']);
    expect(db.calls.getWithLast).toBe(3);
    await cache.put('a/v/2', b('deep-2'));
    expect([await deep(), await shallow()]).toEqual(['deep-2', 'shallow-2']);
    expect(db.calls.getWithLast).toBe(4);
    // The shallow item gone (its owner path written), a write under the deep range still finds its item.
    await cache.put('s-meta', b('m'));
    await cache.put('a/v/3', b('deep-3'));
    expect(await deep()).toBe('deep-3');
    // And a shallow range cached again is found again.
    expect(await shallow()).toBe('shallow-2');
    await cache.put('s/3', b('shallow-3'));
    expect(await shallow()).toBe('shallow-3');
  });

  it('prefixes that do not end in "/" are not cached (their range could not be found from a path)', async () => {
    const { db, make } = setup();
    const cache = make();
    await cache.put('a/b1', b('x'));
    await cache.getWithLast('a/k', 'a/b');
    await cache.getWithLast('a/k', 'a/b');
    expect(db.calls.getWithLast).toBe(2);
  });

  it('other replicas drop what one replica wrote, through the bus; own messages are not re-applied', async () => {
    const { make, bus } = setup();
    const a = make();
    const b2 = make();
    await a.start();
    await b2.start();
    const seen: string[] = [];
    await bus.subscribe(ENTRY_CHANNEL, (m) => seen.push(m));
    await a.put('k', b('1'));
    await settle();
    expect(text(await b2.get('k'))).toBe('1');
    expect(text(await a.get('k'))).toBe('1');
    await a.put('k', b('2'));
    // Before delivery the other replica may still answer the old value...
    expect(text(await b2.get('k'))).toBe('1');
    await settle();
    // ...after it, never.
    expect(text(await b2.get('k'))).toBe('2');
    // The writer's own message comes back to it too and is skipped: what it cached right
    // after its write (before delivery) stays cached.
    await a.put('own', b('1'));
    expect(text(await a.get('own'))).toBe('1');
    const hits = a.stats.hits;
    await settle();
    expect(text(await a.get('own'))).toBe('1');
    expect(a.stats.hits).toBe(hits + 1);
    // Writes in one turn are published as one message.
    await Promise.all([a.put('x/1', b('1')), a.put('x/2', b('2'))]);
    await settle();
    const last = JSON.parse(seen[seen.length - 1] as string) as { paths: string[]; prefixes: string[] };
    expect(last.paths.sort()).toEqual(['x/1', 'x/2']);
    await a.deletePrefix('x/');
    await settle();
    expect((JSON.parse(seen[seen.length - 1] as string) as { prefixes: string[] }).prefixes).toEqual(['x/']);
  });

  it('gathers the invalidations of publishDelayMs into one message; other replicas drop the paths on its arrival', async () => {
    // Only the clock of setTimeout is faked: the memory bus still delivers on setImmediate.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'queueMicrotask', 'nextTick'] });
    try {
      const { make, bus } = setup({ publishDelayMs: 30 });
      const a = make();
      const b2 = make();
      await a.start();
      await b2.start();
      const seen: { paths: string[] }[] = [];
      await bus.subscribe(ENTRY_CHANNEL, (m) => seen.push(JSON.parse(m) as { paths: string[] }));
      await b2.put('k/1', b('old'));
      jest.advanceTimersByTime(30);
      await settle();
      await b2.get('k/1');
      seen.length = 0;
      await a.put('k/1', b('new'));
      await settle();
      jest.advanceTimersByTime(29);
      await settle();
      await a.put('k/2', b('x'));
      await settle();
      // The writer itself never serves the old value; the other replica may, until the message.
      expect(text(await a.get('k/1'))).toBe('new');
      expect(text(await b2.get('k/1'))).toBe('old');
      expect(seen).toEqual([]);
      jest.advanceTimersByTime(1);
      await settle();
      expect(seen).toHaveLength(1);
      expect(seen[0]?.paths.sort()).toEqual(['k/1', 'k/2']);
      expect(text(await b2.get('k/1'))).toBe('new');
    } finally {
      jest.useRealTimers();
    }
  });

  it('drops everything on a bus reconnect, on a message it cannot read, and on purge()', async () => {
    const inner = createMemoryBus();
    const reconnects: (() => void)[] = [];
    const bus: Bus = { ...inner, onReconnect: (l) => (reconnects.push(l), () => undefined) };
    const { db, make } = setup({ bus });
    const cache = make();
    await cache.start();
    await cache.put('k', b('1'));
    const warm = async () => {
      await cache.get('k');
      expect(cache.stats.size).toBe(1);
    };
    await warm();
    for (const l of reconnects) l();
    expect(cache.stats.size).toBe(0);
    await warm();
    await bus.publish(ENTRY_CHANNEL, 'not json');
    await settle();
    expect(cache.stats.size).toBe(0);
    await warm();
    // A purge while a read is in flight: that read is not cached.
    const release = db.hold();
    cache.purge();
    const racing = cache.get('k');
    await settle();
    cache.purge();
    release();
    await racing;
    expect(cache.stats.size).toBe(0);
  });

  it('numbers its messages; a number skipped by another replica (a lost message) drops the whole cache', async () => {
    const { make, bus } = setup();
    // Replica a publishes through a bus whose publications can be made to fail.
    let failing = false;
    const flaky: Bus = { ...bus, publish: (channel, message) => (failing ? Promise.reject(new Error('cut off')) : bus.publish(channel, message)) };
    const a = make({ bus: flaky });
    const b2 = make();
    await a.start();
    await b2.start();
    const seen: { seq: number; origin: string }[] = [];
    await bus.subscribe(ENTRY_CHANNEL, (m) => seen.push(JSON.parse(m) as { seq: number; origin: string }));
    await b2.put('other', b('1'));
    await a.put('k', b('1'));
    await settle();
    await a.put('k', b('2'));
    await settle();
    const fromA = seen.filter((m) => m.origin === seen[seen.length - 1]?.origin);
    expect(fromA.map((m) => m.seq)).toEqual([1, 2]);
    await b2.get('other');
    expect(b2.stats.size).toBe(1);
    // In order: only the paths written are dropped.
    expect(b2.stats.purges).toBe(0);
    // a's next invalidation never reaches b2 (a written row b2 knows nothing about)...
    failing = true;
    await a.put('unrelated', b('x'));
    await settle();
    failing = false;
    expect(b2.stats.size).toBe(1);
    // ...but a's next message carries number 4, not 3: b2 drops everything it holds.
    await a.put('k', b('3'));
    await settle();
    expect(b2.stats.purges).toBe(1);
    expect(b2.stats.size).toBe(0);
  });

  it('heartbeats: a quiet replica announces its number; a known replica silent for three heartbeats drops the cache', async () => {
    // Fake clock for the heartbeat interval and Date.now; the memory bus delivers on setImmediate.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'queueMicrotask', 'nextTick'] });
    /** Advances the clock one heartbeat at a time, letting the bus deliver after each. */
    const beats = async (n: number) => {
      for (let k = 0; k < n; k++) {
        jest.advanceTimersByTime(25);
        await settle();
      }
    };
    try {
      const { make, bus } = setup({ heartbeatMs: 25 });
      const seen: { origin: string; seq: number; paths: string[] }[] = [];
      await bus.subscribe(ENTRY_CHANNEL, (m) => seen.push(JSON.parse(m) as { origin: string; seq: number; paths: string[] }));
      const a = make();
      const b2 = make();
      await a.start();
      await b2.start();
      await b2.put('k', b('1'));
      await settle();
      await b2.get('k');
      await beats(6);
      // Empty, numbered in order, from both; nobody lost anything.
      const empty = seen.filter((m) => m.paths.length === 0);
      expect(new Set(empty.map((m) => m.origin)).size).toBe(2);
      for (const origin of new Set(seen.map((m) => m.origin))) {
        const seqs = seen.filter((m) => m.origin === origin).map((m) => m.seq);
        expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      }
      expect(b2.stats.purges).toBe(0);
      expect(b2.stats.size).toBe(1);
      // a goes quiet (as if cut off from the bus while it may still write): two silent
      // heartbeats are tolerated, the third drops what b2 cached.
      a.stop();
      await beats(2);
      expect(b2.stats.purges).toBe(0);
      await beats(2);
      expect(b2.stats.purges).toBe(1);
      expect(b2.stats.size).toBe(0);
      // ...once: a forgotten replica is not purged for again.
      await b2.get('k');
      await beats(6);
      expect(b2.stats.purges).toBe(1);
      expect(b2.stats.size).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('never serves an entry past its TTL, and spreads expiry between half the TTL and the TTL', async () => {
    let now = 1000;
    const { mem, make } = setup({ ttlMs: 4000, now: () => now });
    const cache = make();
    for (let i = 0; i < 40; i++) {
      await cache.put(`k/${i}`, b('old'));
      await cache.get(`k/${i}`);
      // As if another replica's invalidation were lost: only expiry can show this.
      mem.entries.set(`k/${i}`, b('new'));
    }
    // Before a quarter of the TTL nothing is refreshed or expired.
    now += 999;
    for (let i = 0; i < 40; i++) expect(text(await cache.get(`k/${i}`))).toBe('old');
    expect(cache.stats.refreshes).toBe(0);
    // At three quarters some have expired (a life under 3,000 ms) and some not.
    const probe = new Map<number, string | null>();
    now = 1000 + 3000;
    for (let i = 0; i < 40; i++) probe.set(i, text(await cache.get(`k/${i}`)));
    const expired = [...probe.values()].filter((v) => v === 'new').length;
    expect(expired).toBeGreaterThan(3);
    expect(expired).toBeLessThan(37);
    // At the TTL, every one is re-read (or was refreshed in the background on the probe).
    await settle();
    now = 1000 + 4000;
    for (let i = 0; i < 40; i++) expect(text(await cache.get(`k/${i}`))).toBe('new');
  });

  it('refreshes an entry in use in the background before it expires: its readers never wait for a miss', async () => {
    let now = 1000;
    const { db, mem, make } = setup({ ttlMs: 4000, now: () => now });
    const cache = make();
    await cache.put('hot', b('1'));
    expect(text(await cache.get('hot'))).toBe('1');
    expect(cache.stats.misses).toBe(1);
    let last = '1';
    for (let step = 1; step <= 300; step++) {
      now += 50;
      if (step === 100) mem.entries.set('hot', b('2'));
      const release = db.hold();
      // A background refresh started now must not hold this read up.
      last = text(await cache.get('hot')) as string;
      release();
      await settle();
    }
    // 15 s of reads every 50 ms with a 4 s TTL: served from memory throughout, renewed by refreshes...
    expect(cache.stats.misses).toBe(1);
    expect(cache.stats.refreshes).toBeGreaterThanOrEqual(4);
    expect(db.calls.get).toBe(1 + cache.stats.refreshes);
    // ...which also bring in what changed (here a change no invalidation announced).
    expect(last).toBe('2');
  });

  it('a refresh that finds the row unchanged keeps the cached objects; a changed row replaces them', async () => {
    let now = 1000;
    const { db, mem, bus } = setup();
    // As PostgreSQL: every read hands out new Buffers.
    const fresh: Storage = {
      ...db.store,
      get: async (path) => {
        const v = await db.store.get(path);
        return v && Buffer.from(v);
      },
      getWithLast: async (path, prefix) => {
        const { entry, last } = await db.store.getWithLast(path, prefix);
        return { entry: entry && Buffer.from(entry), last: last && { path: last.path, value: Buffer.from(last.value) } };
      },
    };
    const cache = createCachedStore(fresh, { bus, maxBytes: 1 << 20, ttlMs: 4000, now: () => now });
    await cache.put('k', b('v1'));
    await cache.put('d/meta', b('m1'));
    await cache.put('d/v/1', b('x1'));
    const first = await cache.get('k');
    const firstRange = await cache.getWithLast('d/meta', 'd/v/');
    // Past the TTL every read is a re-read; the rows did not change, so the objects stay.
    now += 5000;
    expect(await cache.get('k')).toBe(first);
    const again = await cache.getWithLast('d/meta', 'd/v/');
    expect(again.entry).toBe(firstRange.entry);
    expect(again.last).toBe(firstRange.last);
    expect(db.calls.get).toBe(2);
    expect(db.calls.getWithLast).toBe(2);
    // A row changed behind the cache's back (no invalidation): the next re-read brings new objects.
    mem.entries.set('k', b('v2'));
    mem.entries.set('d/v/1', b('x2'));
    now += 5000;
    const changed = await cache.get('k');
    expect(changed).not.toBe(first);
    expect(text(changed)).toBe('v2');
    const changedRange = await cache.getWithLast('d/meta', 'd/v/');
    expect(changedRange.entry).toBe(firstRange.entry);
    expect(changedRange.last).not.toBe(firstRange.last);
    expect(text(changedRange.last?.value ?? null)).toBe('x2');
  });

  it('peekWithLast answers a fresh cached pair at once (a hit) and nothing else', async () => {
    let t = 1_000;
    const { db, make } = setup({ ttlMs: 10_000, now: () => t });
    const cache = make();
    await cache.put('m/meta/k', b('meta'));
    await cache.put('m/ver/h/0000000000000001', b('v1'));
    // Not cached yet, a prefix without "/", a disabled cache: undefined, no database read.
    expect(cache.peekWithLast('m/meta/k', 'm/ver/h/')).toBeUndefined();
    expect(cache.peekWithLast('m/meta/k', 'm/ver/h')).toBeUndefined();
    expect(db.calls.getWithLast).toBe(0);
    await cache.getWithLast('m/meta/k', 'm/ver/h/');
    const hits = cache.stats.hits;
    const peeked = cache.peekWithLast('m/meta/k', 'm/ver/h/');
    expect(text(peeked?.entry ?? null)).toBe('meta');
    expect(peeked?.last?.path).toBe('m/ver/h/0000000000000001');
    expect(text(peeked?.last?.value ?? null)).toBe('v1');
    expect(cache.stats.hits).toBe(hits + 1);
    // Another prefix for the same path is not the cached pair.
    expect(cache.peekWithLast('m/meta/k', 'm/ver/other/')).toBeUndefined();
    // A write under the prefix invalidates it; so does age.
    await cache.put('m/ver/h/0000000000000002', b('v2'));
    expect(cache.peekWithLast('m/meta/k', 'm/ver/h/')).toBeUndefined();
    await cache.getWithLast('m/meta/k', 'm/ver/h/');
    expect(text(cache.peekWithLast('m/meta/k', 'm/ver/h/')?.last?.value ?? null)).toBe('v2');
    t += 10_001;
    expect(cache.peekWithLast('m/meta/k', 'm/ver/h/')).toBeUndefined();
    expect(db.calls.getWithLast).toBe(2);
    const off = setup({ maxBytes: 0 }).make();
    await off.getWithLast('m/meta/k', 'm/ver/h/');
    expect(off.peekWithLast('m/meta/k', 'm/ver/h/')).toBeUndefined();
  });

  it('peekWithLast past half an entry\'s life starts the same refresh-ahead as a hit', async () => {
    let t = 1_000;
    const { db, make } = setup({ ttlMs: 10_000, now: () => t });
    const cache = make();
    await cache.put('m/meta/k', b('meta'));
    await cache.getWithLast('m/meta/k', 'm/ver/h/');
    t += 5_001; // past refreshAt whatever the drawn life (5-10 s), before it expires
    expect(text(cache.peekWithLast('m/meta/k', 'm/ver/h/')?.entry ?? null)).toBe('meta');
    await settle();
    expect(cache.stats.refreshes).toBe(1);
    expect(db.calls.getWithLast).toBe(2);
  });

  it('stillCached: a peeked pair stays good (a hit) until its entry is invalidated, replaced, expired or purged', async () => {
    let t = 1_000;
    const { make } = setup({ ttlMs: 10_000, now: () => t });
    const cache = make();
    const peek = async (path: string) => {
      await cache.getWithLast(path, `${path}/v/`);
      return cache.peekWithLast(path, `${path}/v/`)!;
    };
    expect(cache.stillCached({} as WithLast)).toBe(false);
    await cache.put('a', b('1'));
    const a = await peek('a');
    expect(cache.peekWithLast('a', 'a/v/')).toBe(a);
    const hits = cache.stats.hits;
    expect(cache.stillCached(a)).toBe(true);
    expect(cache.stats.hits).toBe(hits + 1);
    // Invalidated by a write under its prefix.
    await cache.put('a/v/0000000000000001', b('x'));
    expect(cache.stillCached(a)).toBe(false);
    // Replaced by a newer load of the same path: the old pair is no longer the answer.
    const a2 = await peek('a');
    expect(a2).not.toBe(a);
    expect(cache.stillCached(a2)).toBe(true);
    // Past half its life it is still good and starts the refresh; past its TTL it is not.
    t += 5_001;
    expect(cache.stillCached(a2)).toBe(true);
    await settle();
    expect(cache.stats.refreshes).toBe(1);
    const a3 = cache.peekWithLast('a', 'a/v/')!;
    t += 10_001;
    expect(cache.stillCached(a3)).toBe(false);
    // Purged.
    await cache.put('c', b('3'));
    const c = await peek('c');
    cache.purge();
    expect(cache.stillCached(c)).toBe(false);
  });

  it('evicts the oldest entry not read since it was stored; a read one gets a second chance', async () => {
    const { db, make } = setup({ maxBytes: 8 * 1024 });
    const cache = make();
    for (let i = 0; i < 12; i++) await cache.put(`k/${i}`, Buffer.alloc(500, i));
    // k/0 .. k/11 cached in that order (each ~600 bytes with its bookkeeping: all fit).
    for (let i = 0; i < 12; i++) await cache.get(`k/${i}`);
    expect(cache.stats.size).toBe(12);
    // k/0 is read again (flagged), then new entries push the budget: k/1 goes first, not k/0.
    await cache.get('k/0');
    for (let i = 12; i < 16; i++) {
      await cache.put(`k/${i}`, Buffer.alloc(500, i));
      await cache.get(`k/${i}`);
    }
    expect(cache.stats.bytes).toBeLessThanOrEqual(8 * 1024);
    const calls = db.calls.get;
    await cache.get('k/0');
    expect(db.calls.get).toBe(calls);
    await cache.get('k/1');
    expect(db.calls.get).toBe(calls + 1);
  });

  it('stays within its byte budget (least recently used out first) and skips values too big for it', async () => {
    const { db, make } = setup({ maxBytes: 8 * 1024 });
    const cache = make();
    for (let i = 0; i < 40; i++) await cache.put(`k/${i}`, Buffer.alloc(500, i));
    for (let i = 0; i < 40; i++) {
      await cache.get(`k/${i}`);
      expect(cache.stats.bytes).toBeLessThanOrEqual(8 * 1024);
    }
    expect(cache.stats.size).toBeGreaterThan(5);
    expect(cache.stats.size).toBeLessThan(40);
    // The most recent ones are still there, the first ones went.
    const calls = db.calls.get;
    await cache.get('k/39');
    expect(db.calls.get).toBe(calls);
    await cache.get('k/0');
    expect(db.calls.get).toBe(calls + 1);
    // Larger than an eighth of the budget: read, never cached.
    await cache.put('big', Buffer.alloc(2000));
    await cache.get('big');
    await cache.get('big');
    expect(db.calls.get).toBe(calls + 3);
  });

  it('maxBytes 0 disables it: every read reaches the database, and its writes are still announced to replicas that cache', async () => {
    const { db, make, bus } = setup({ maxBytes: 0 });
    const seen: string[] = [];
    await bus.subscribe(ENTRY_CHANNEL, (m) => seen.push(m));
    const cache = make();
    await cache.start();
    await cache.put('k', b('1'));
    await cache.get('k');
    await cache.get('k');
    await cache.getWithLast('k', 'v/');
    await cache.getWithLast('k', 'v/');
    expect(db.calls).toEqual({ get: 2, getWithLast: 2 });
    expect(cache.stats.size).toBe(0);
    await settle();
    expect(seen.map((m) => (JSON.parse(m) as { paths: string[] }).paths)).toEqual([['k']]);
    // A transaction that wrote nothing announces nothing.
    await cache.transaction(async (tx) => tx.get('k'));
    await settle();
    expect(seen).toHaveLength(1);
  });
});
