// The storage contract (test/storage-contract.ts) over the in-memory store, the physical
// cache in front of it, and the barrier over that cache as services.ts composes them. The
// PostgreSQL store runs the same suite in test/storage-contract.itest.ts.
import { createMemoryBus } from '@selfstack/bus';
import { createMemoryStores } from '../../../test/memory-store';
import { describeStorageContract } from '../../../test/storage-contract';
import { createBarrier } from './barrier.service';
import { createCachedStore } from './entry-cache';

const cacheOptions = { maxBytes: 1 << 20, ttlMs: 60_000, heartbeatMs: 0, publishDelayMs: 0 };

describeStorageContract('in-memory store (test/memory-store.ts)', async () => {
  const mem = createMemoryStores();
  // A second handle: the same store through a wrapper of no behaviour of its own.
  return { storage: mem.entryStore, other: { ...mem.entryStore } };
});

describeStorageContract('physical cache over the in-memory store', async () => {
  const cache = createCachedStore(createMemoryStores().entryStore, { bus: createMemoryBus(), ...cacheOptions });
  return { storage: cache, other: cache.uncached, close: async () => cache.stop() };
});

describeStorageContract('barrier over the physical cache over the in-memory store', async () => {
  const mem = createMemoryStores();
  const cache = createCachedStore(mem.entryStore, { bus: createMemoryBus(), ...cacheOptions });
  const barrier = createBarrier({ barrierStore: mem.barrierStore, storage: cache.uncached });
  const { keys } = await barrier.initialize(1, 1, async () => undefined);
  await barrier.submitUnsealKey(keys[0] as Buffer);
  return { storage: barrier, other: barrier.cachedView(cache).storage, close: async () => cache.stop() };
});
