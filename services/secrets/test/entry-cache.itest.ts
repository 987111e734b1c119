// The physical cache (features/barrier/entry-cache.ts) across two replicas on one
// PostgreSQL database and one Redis: a replica serves repeated KV reads from memory, and
// every write made by the other replica reaches it through the bus.
import type { Express } from 'express';
import request from 'supertest';
import type { SecretsServices } from '../src/services';
import { initAndUnseal, startHarness, type Harness } from './harness';

describe('physical cache across replicas', () => {
  let h: Harness;
  let b: { services: SecretsServices; app: Express };
  let root = '';
  let unsealKey = '';
  const as = () => ({ 'X-Vault-Token': root });

  /** Polls `read` until it answers `expected` (the bus delivers in milliseconds; the give-up point, 2 s, is far under the TTL (60 s), so only the bus can make it pass). */
  async function eventually(read: () => Promise<unknown>, expected: unknown): Promise<void> {
    const deadline = Date.now() + 2000;
    for (;;) {
      const got = await read();
      if (JSON.stringify(got) === JSON.stringify(expected) || Date.now() > deadline) {
        expect(got).toEqual(expected);
        return;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  beforeAll(async () => {
    h = await startHarness();
    const init = await initAndUnseal(h.app);
    root = init.rootToken;
    unsealKey = init.keys[0] as string;
    b = await h.replica();
    await request(b.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
    await request(h.app).post('/v1/sys/mounts/kv1').set(as()).send({ type: 'kv', options: { version: '1' } }).expect(204);
  });
  afterAll(async () => {
    await h.close();
  });

  const readV2 = (app: Express, key: string) => async () => {
    const r = await request(app).get(`/v1/secret/data/${key}`).set(as());
    return r.status === 200 ? r.body.data.data : r.status;
  };

  it('a replica answers repeated reads from memory and follows the other replica\'s writes', async () => {
    await request(h.app).post('/v1/secret/data/shared').set(as()).send({ data: { v: 1 } }).expect(200);
    const stats = b.services.physicalCache.stats;
    await eventually(readV2(b.app, 'shared'), { v: 1 });
    // The writer announces its writes a few milliseconds later (gathered per message): the
    // message may still drop what b cached before it arrived. After that, b caches again
    // and answers the next read from memory.
    const deadline = Date.now() + 2000;
    let hit = false;
    while (!hit && Date.now() < deadline) {
      await readV2(b.app, 'shared')();
      const hits = stats.hits;
      const r = await request(b.app).get('/v1/secret/data/shared').set(as()).expect(200);
      expect(r.body.data.data).toEqual({ v: 1 });
      expect(r.body.data.metadata.version).toBe(1);
      hit = stats.hits === hits + 1;
    }
    expect(hit).toBe(true);
    for (let v = 2; v <= 4; v++) {
      await request(h.app).post('/v1/secret/data/shared').set(as()).send({ data: { v } }).expect(200);
      await eventually(readV2(b.app, 'shared'), { v });
    }
    // Soft delete, undelete, destroy and metadata delete are writes like any other.
    await request(h.app).delete('/v1/secret/data/shared').set(as()).expect(204);
    await eventually(readV2(b.app, 'shared'), 404);
    await request(h.app).post('/v1/secret/undelete/shared').set(as()).send({ versions: [4] }).expect(204);
    await eventually(readV2(b.app, 'shared'), { v: 4 });
    await request(h.app).delete('/v1/secret/metadata/shared').set(as()).expect(204);
    await eventually(readV2(b.app, 'shared'), 404);
  });

  it('KV v1 reads follow writes and deletes made elsewhere', async () => {
    const read = async () => {
      const r = await request(b.app).get('/v1/kv1/k').set(as());
      return r.status === 200 ? r.body.data : r.status;
    };
    await request(h.app).put('/v1/kv1/k').set(as()).send({ a: '1' }).expect(204);
    await eventually(read, { a: '1' });
    await request(h.app).put('/v1/kv1/k').set(as()).send({ a: '2' }).expect(204);
    await eventually(read, { a: '2' });
    await request(h.app).delete('/v1/kv1/k').set(as()).expect(204);
    await eventually(read, 404);
  });

  it('while both replicas write one key and read it, every replica ends on the last version', async () => {
    await request(h.app).post('/v1/secret/data/busy').set(as()).send({ data: { n: 0 } }).expect(200);
    const apps = [h.app, b.app];
    let stop = false;
    const readers = apps.map(async (app) => {
      while (!stop) await request(app).get('/v1/secret/data/busy').set(as());
    });
    for (let i = 1; i <= 20; i++) {
      await Promise.all(apps.map((app, j) => request(app).post('/v1/secret/data/busy').set(as()).send({ data: { n: i, by: j } }).expect(200)));
    }
    stop = true;
    await Promise.all(readers);
    const meta = await request(h.app).get('/v1/secret/metadata/busy').set(as()).expect(200);
    expect(meta.body.data.current_version).toBe(41);
    const latest = await request(h.app).get('/v1/secret/data/busy?version=41').set(as()).expect(200);
    for (const app of apps) {
      await eventually(async () => {
        const r = await request(app).get('/v1/secret/data/busy').set(as());
        return [r.body.data.metadata.version, r.body.data.data];
      }, [41, latest.body.data.data]);
    }
  });

  it('sealing drops the cache; after unsealing, reads go to the database again', async () => {
    await request(h.app).post('/v1/secret/data/sealed').set(as()).send({ data: { s: 1 } }).expect(200);
    await eventually(readV2(b.app, 'sealed'), { s: 1 });
    // (Read again until the writer's gathered message has passed and b holds the entry.)
    await eventually(async () => {
      await readV2(b.app, 'sealed')();
      return b.services.physicalCache.stats.size > 0;
    }, true);
    await request(b.app).put('/v1/sys/seal').set(as()).expect(204);
    expect(b.services.physicalCache.stats.size).toBe(0);
    await request(b.app).get('/v1/secret/data/sealed').set(as()).expect(503);
    await request(b.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
    const misses = b.services.physicalCache.stats.misses;
    await eventually(readV2(b.app, 'sealed'), { s: 1 });
    expect(b.services.physicalCache.stats.misses).toBe(misses + 1);
  });
});
