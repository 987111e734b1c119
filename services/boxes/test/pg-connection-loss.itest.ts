// Reliability: Postgres ends the app's idle pooled connections (a restart, an operator's
// pg_terminate_backend). The process must not crash on the pool's 'error' event, the next
// read must return what was written before on a fresh connection, and the next write
// must commit.
import request from 'supertest';
import { type BackendTerminator, openBackendTerminator, testAdminDatabaseUrl, withDatabase } from '@selfstack/testing';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let terminator: BackendTerminator;
let alice = '';
let dbName = '';
beforeAll(async () => {
  h = await createHarness();
  alice = await userWithToken(h, 'alice');
  // The harness keeps the database handle to itself; the app's pool knows the name.
  const rows = await h.prisma.$queryRawUnsafe<{ db: string }[]>('SELECT current_database() AS db');
  dbName = rows[0]!.db;
  // Our own connection: the one backend of the test database left alone.
  terminator = await openBackendTerminator(withDatabase(testAdminDatabaseUrl(), dbName));
});
afterAll(async () => {
  await terminator.close();
  await h.close();
});

describe('boxes Postgres connection loss', () => {
  it('survives its idle connections being terminated and keeps the data', async () => {
    const created = await request(h.app).post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'pgl', short_description: 'before' } });
    expect(created.status).toBe(201);
    // Concurrent reads so the pool holds several idle connections.
    const reads = await Promise.all(Array.from({ length: 4 }, () => request(h.app).get('/api/v1/box/alice/pgl').set(auth(alice))));
    for (const r of reads) expect(r.status).toBe(200);

    expect(await terminator.terminateOthers()).toBeGreaterThan(0);

    const read = await request(h.app).get('/api/v1/box/alice/pgl').set(auth(alice));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ tag: 'alice/pgl', short_description: 'before' });
    const write = await request(h.app).post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'pgl-after' } });
    expect(write.status).toBe(201);
    expect(write.body.tag).toBe('alice/pgl-after');
  });
});
