// Reliability: Postgres ends the app's idle pooled connections (a restart, an operator's
// pg_terminate_backend). The process must not crash on the pool's 'error' event, the next
// read must return what was written before on a fresh connection, and the next write
// must commit.
import { Client } from 'pg';
import request from 'supertest';
import { testAdminDatabaseUrl, withDatabase } from '@selfstack/testing';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
let admin: Client;
let alice = '';
let dbName = '';
beforeAll(async () => {
  h = await createHarness();
  alice = await userWithToken(h, 'alice');
  // The harness keeps the database handle to itself; the app's pool knows the name.
  const rows = await h.prisma.$queryRawUnsafe<{ db: string }[]>('SELECT current_database() AS db');
  dbName = rows[0]!.db;
  // Our own connection: the one backend of the test database that is not terminated.
  admin = new Client({ connectionString: withDatabase(testAdminDatabaseUrl(), dbName), application_name: 'pg-connection-loss-admin' });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await h.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function otherBackends(): Promise<number> {
  const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
  return Number(rows[0]?.n);
}

async function terminateOthers(): Promise<void> {
  const { rows } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
  expect(rows.length).toBeGreaterThan(0);
  for (let i = 0; i < 100 && (await otherBackends()) > 0; i++) await sleep(20);
  expect(await otherBackends()).toBe(0);
  // Give the pooled clients a moment to read the server's FATAL message (the 'error' event).
  await sleep(100);
}

describe('boxes Postgres connection loss', () => {
  it('survives its idle connections being terminated and keeps the data', async () => {
    const created = await request(h.app).post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'pgl', short_description: 'before' } });
    expect(created.status).toBe(201);
    // Concurrent reads so the pool holds several idle connections.
    const reads = await Promise.all(Array.from({ length: 4 }, () => request(h.app).get('/api/v1/box/alice/pgl').set(auth(alice))));
    for (const r of reads) expect(r.status).toBe(200);

    await terminateOthers();

    const read = await request(h.app).get('/api/v1/box/alice/pgl').set(auth(alice));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ tag: 'alice/pgl', short_description: 'before' });
    const write = await request(h.app).post('/api/v1/boxes').set(auth(alice)).send({ box: { name: 'pgl-after' } });
    expect(write.status).toBe(201);
    expect(write.body.tag).toBe('alice/pgl-after');
  });
});
