// The storage contract (test/storage-contract.ts) over real PostgreSQL: the entry store,
// the physical cache in front of it (its invalidations on the Redis bus), and the barrier
// over that cache as services.ts composes them (the production stack). The in-memory store
// runs the same suite in src/features/barrier/storage-contract.test.ts.
import type { Pool } from 'pg';
import { createRedisBus, type RedisBus } from '@selfstack/bus';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createTestDatabase, testRedisPrefix, testRedisUrl, type TestDatabase } from '@selfstack/testing';
import { createBarrier } from '../src/features/barrier/barrier.service';
import { createBarrierStore, createEntryPool, createEntryStore } from '../src/features/barrier/barrier.store';
import { createCachedStore } from '../src/features/barrier/entry-cache';
import { silentLogger } from './harness';
import { describeStorageContract } from './storage-contract';

let db: TestDatabase | undefined;
const pools: Pool[] = [];
const buses: RedisBus[] = [];
const prismas: PrismaClient[] = [];
const database = async (): Promise<TestDatabase> => (db ??= await createTestDatabase());
const pool = async (): Promise<Pool> => {
  const p = createEntryPool({ url: (await database()).url, max: 4 });
  pools.push(p);
  return p;
};
const bus = (): RedisBus => {
  const b = createRedisBus({ url: testRedisUrl(), prefix: testRedisPrefix(), logger: silentLogger });
  buses.push(b);
  return b;
};
const cacheOptions = { maxBytes: 1 << 20, ttlMs: 60_000, heartbeatMs: 0 };

afterAll(async () => {
  for (const b of buses) await b.close();
  for (const p of pools) await p.end();
  for (const p of prismas) await p.$disconnect();
  await db?.drop();
});

describeStorageContract('PostgreSQL entry store (barrier.store.ts)', async () => {
  // The other handle: a second pool, as another replica has.
  return { storage: createEntryStore({ pool: await pool() }), other: createEntryStore({ pool: await pool() }) };
});

describeStorageContract('physical cache over the PostgreSQL entry store', async () => {
  const cache = createCachedStore(createEntryStore({ pool: await pool() }), { bus: bus(), ...cacheOptions });
  await cache.start();
  return { storage: cache, other: cache.uncached, close: async () => cache.stop() };
});

describeStorageContract('barrier over the physical cache over PostgreSQL (the production stack)', async () => {
  const cache = createCachedStore(createEntryStore({ pool: await pool() }), { bus: bus(), ...cacheOptions });
  await cache.start();
  const prisma = createPrismaClient({ url: (await database()).url, poolSize: 2 });
  prismas.push(prisma);
  const barrier = createBarrier({ barrierStore: createBarrierStore({ prisma }), storage: cache.uncached });
  const { keys } = await barrier.initialize(1, 1, async () => undefined);
  await barrier.submitUnsealKey(keys[0] as Buffer);
  return { storage: barrier, other: barrier.cachedView(cache).storage, close: async () => cache.stop() };
});
