import { createMemoryBus } from '@selfstack/bus';
import { createMemoryStores } from '../../../test/memory-store';
import type { Storage } from '../barrier/storage.types';
import { createMountService, MOUNT_CHANNEL, MOUNTS_PATH } from './mounts.service';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('mount table reloads', () => {
  it('resolve() after another replica enabled a mount finds it, even when a bus-triggered reload overtakes its re-read', async () => {
    const mem = createMemoryStores();
    // Replica B's reads of the table can be held after they read (as a slow round trip).
    const held: (() => void)[] = [];
    let holding = false;
    const gated: Storage = {
      ...mem.entryStore,
      async get(path) {
        const value = await mem.entryStore.get(path);
        if (holding && path === MOUNTS_PATH) await new Promise<void>((r) => held.push(r));
        return value;
      },
    };
    const deps = { now: () => 0, hash: (v: string) => v };
    const a = createMountService({ storage: mem.entryStore, bus: createMemoryBus(), ...deps });
    const busB = createMemoryBus();
    const b = createMountService({ storage: gated, bus: busB, ...deps });
    await b.start();
    await b.load();
    // A enables kv1/; B has not heard (its bus is another one).
    await a.enable('kv1', { type: 'kv' });
    expect(b.match('kv1/k')).toBeUndefined();
    holding = true;
    const resolving = b.resolve('kv1/k');
    await settle();
    expect(held).toHaveLength(1);
    // A's message reaches B now: a reload starts while the request's re-read is in flight.
    await busB.publish(MOUNT_CHANNEL, 'changed');
    await settle();
    expect(held).toHaveLength(2);
    // The request's re-read returns first; the newer reload has not.
    held[0]!();
    await settle();
    held[1]!();
    holding = false;
    expect(await resolving).toMatchObject({ path: 'kv1/', options: { version: '1' } });
    expect(b.match('kv1/k')).toMatchObject({ path: 'kv1/' });
  });
});
