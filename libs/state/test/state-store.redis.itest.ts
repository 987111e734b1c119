import { type RedisBus, createRedisBus, killRedisClientsByName } from '@selfstack/bus';
import { createPrismaClient } from '@selfstack/db';
import { createTestDatabase, testRedisPrefix, testRedisUrl } from '@selfstack/testing';
import { createStateStore } from '../src';
import { describeStateStoreContract, setupStateTest, silentLogger, sleep, waitFor } from './state-contract';

const REDIS_URL = testRedisUrl();
// Every test gets a fresh bus; one prefix per file keeps other files' messages out.
const prefix = testRedisPrefix();
const makeBus = (): RedisBus => createRedisBus({ url: REDIS_URL, prefix, logger: silentLogger });

describeStateStoreContract('redis', makeBus);

describe('state store over Redis: subscriber connection killed', () => {
  jest.setTimeout(30_000);
  const ctx = setupStateTest(makeBus);
  const subscriberName = (): string => (ctx.bus as RedisBus).subscriberConnectionName;
  const job = (key: string) => ({ topic: 'Job', type: 'JobRegistered', key, namespace: 'default', payload: { ID: key } });

  it('an event tail loses and repeats nothing when the subscriber dies in a write burst', async () => {
    const { store } = ctx;
    let reconnects = 0;
    ctx.bus.onReconnect(() => {
      reconnects++;
    });
    const tail = store.createEventTail({ fromIndex: 0 });
    const received: number[] = [];
    let done = false;
    const consumer = (async () => {
      while (!done) {
        const next = await tail.next();
        if (next.done) return;
        received.push(next.value.index);
      }
    })();

    const written: number[] = [];
    const write = (key: string) =>
      store.withWrite(['jobs'], async ({ emit }) => emit(job(key))).then((w) => {
        written.push(w.index);
        return w;
      });
    // A burst of concurrent writes; the subscriber dies once a third of them committed.
    const burst = Promise.all(Array.from({ length: 60 }, (_, i) => write(`b${i}`)));
    await waitFor(() => written.length >= 20, 5000, 'first part of the burst');
    expect(await killRedisClientsByName(REDIS_URL, subscriberName())).toBe(1);
    await burst;
    await waitFor(() => reconnects >= 1, 5000, 'first reconnect');
    // Kill again and write at once: this write's wake-up is published while nobody listens
    // (ioredis waits 50 ms before reconnecting), so only the onReconnect resync can bring
    // it to the tail — no later write will.
    expect(await killRedisClientsByName(REDIS_URL, subscriberName())).toBe(1);
    await write('during-outage');
    await waitFor(() => reconnects >= 2, 5000, 'second reconnect');
    await waitFor(() => received.length >= 61, 5000, 'all 61 frames');
    await sleep(100);
    written.sort((a, b) => a - b);
    expect(received).toEqual(written);
    // Live again after the reconnect: a later write arrives through a wake-up.
    const later = await store.withWrite(['jobs'], async ({ emit }) => emit(job('later')));
    await waitFor(() => received.length === 62, 2000, 'frame after reconnect');
    expect(received[61]).toBe(later.index);
    done = true;
    tail.close();
    await consumer;
  });

  it('wakes every blocked reader on reconnect so it re-reads Postgres', async () => {
    const { store } = ctx;
    let runs = 0;
    const read = store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'] }, async () => {
      runs++;
      return { index: await store.currentIndex(['jobs']), value: null };
    });
    await waitFor(() => runs === 1 && store.waiterCount() === 1);
    await killRedisClientsByName(REDIS_URL, subscriberName());
    // The write's wake-up may be lost while the subscriber is away; the reconnect resync
    // must still release the reader long before its 10 s wait.
    const { index } = await store.withWrite(['jobs'], async () => undefined);
    const started = Date.now();
    const result = await read;
    expect(result.index).toBe(index);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(store.waiterCount()).toBe(0);
  });

  it('blocked readers with no change re-read once on reconnect and keep waiting', async () => {
    const { store } = ctx;
    let runs = 0;
    const controller = new AbortController();
    const read = store.blockingQuery({ minIndex: 1, waitMs: 10_000, tables: ['jobs'], signal: controller.signal }, async () => {
      runs++;
      return { index: await store.currentIndex(['jobs']), value: null };
    });
    read.catch(() => undefined);
    await waitFor(() => runs === 1);
    await killRedisClientsByName(REDIS_URL, subscriberName());
    await waitFor(() => runs === 2, 5000, 're-read after reconnect');
    expect(store.waiterCount()).toBe(1);
    controller.abort();
    await expect(read).rejects.toThrow();
    expect(store.waiterCount()).toBe(0);
  });
});

describe('state store over an unreachable Redis', () => {
  it('answers blocking reads at their timeout instead of hanging, and closes', async () => {
    const bus = createRedisBus({ url: 'redis://127.0.0.1:1', prefix, logger: silentLogger });
    const db = await createTestDatabase();
    const prisma = createPrismaClient({ url: db.url, poolSize: 2 });
    try {
      const store = createStateStore({ prisma, bus, logger: silentLogger });
      const started = Date.now();
      const result = await store.blockingQuery({ minIndex: 1, waitMs: 300, tables: ['jobs'] }, async () => ({
        index: await store.currentIndex(['jobs']),
        value: null,
      }));
      expect(result.index).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(store.waiterCount()).toBe(0);
      await store.close();
    } finally {
      await bus.close();
      await prisma.$disconnect();
      await db.drop();
    }
  });
});

describe('state store over Redis: stores of different databases on one Redis', () => {
  jest.setTimeout(30_000);

  it('never wake each other (a wake-up carries an index only true of its own database); stores of one database do', async () => {
    const dbs = [await createTestDatabase(), await createTestDatabase()];
    const prismas = dbs.map((db) => createPrismaClient({ url: db.url, poolSize: 3 }));
    const buses = [makeBus(), makeBus(), makeBus()];
    // Two processes of database A, one of database B, all on one Redis and one prefix.
    const a1 = createStateStore({ prisma: prismas[0]!, bus: buses[0]!, logger: silentLogger });
    const a2 = createStateStore({ prisma: prismas[0]!, bus: buses[1]!, logger: silentLogger });
    const b = createStateStore({ prisma: prismas[1]!, bus: buses[2]!, logger: silentLogger });
    try {
      await Promise.all([a1.ready(), a2.ready(), b.ready()]);
      expect(await a1.wakeChannel()).toBe(await a2.wakeChannel());
      expect(await a1.wakeChannel()).not.toBe(await b.wakeChannel());
      const read = (store: typeof a1) => async () => ({ index: await store.currentIndex(['jobs']), value: null });
      const startA = await a2.currentIndex(['jobs']);
      const startB = await b.currentIndex(['jobs']);
      const waitA = a2.blockingQuery({ minIndex: startA, waitMs: 5_000, tables: ['jobs'] }, read(a2));
      const waitB = b.blockingQuery({ minIndex: startB, waitMs: 1_500, tables: ['jobs'] }, read(b));
      await sleep(100);
      const written = await a1.withWrite(['jobs'], async () => undefined);
      // A's other process wakes with A's write ...
      expect((await waitA).index).toBe(written.index);
      // ... B's reader times out with B's own index, never A's.
      expect((await waitB).index).toBe(startB);
    } finally {
      for (const s of [a1, a2, b]) await s.close();
      for (const bus of buses) await bus.close();
      for (const p of prismas) await p.$disconnect();
      for (const db of dbs) await db.drop();
    }
  });
});

