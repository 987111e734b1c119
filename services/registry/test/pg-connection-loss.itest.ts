// Reliability: Postgres ends the app's idle pooled connections (a restart, an operator's
// pg_terminate_backend). The process must not crash on the pool's 'error' event, the next
// read must return what was written before on a fresh connection, and the next write
// must commit.
import { Client } from 'pg';
import request from 'supertest';
import { ADMIN_TOKEN, bearer, createNamespace, startRegistry, type Registry } from './registry-harness';

let r: Registry;
let admin: Client;
beforeAll(async () => {
  r = await startRegistry();
  // Our own connection: the one backend of the test database that is not terminated.
  admin = new Client({ connectionString: r.db.url, application_name: 'pg-connection-loss-admin' });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await r.close();
});

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

async function otherBackends(): Promise<number> {
  const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [r.db.name]);
  return Number(rows[0]?.n);
}

async function terminateOthers(): Promise<void> {
  const { rows } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [r.db.name]);
  expect(rows.length).toBeGreaterThan(0);
  for (let i = 0; i < 100 && (await otherBackends()) > 0; i++) await sleep(20);
  expect(await otherBackends()).toBe(0);
  // Give the pooled clients a moment to read the server's FATAL message (the 'error' event).
  await sleep(100);
}

const namespaces = async () => {
  const res = await request(r.app).get('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN));
  return { status: res.status, names: JSON.stringify(res.body) };
};

describe('registry Postgres connection loss', () => {
  it('survives its idle connections being terminated and keeps the data', async () => {
    await createNamespace(r.app, 'pgl-before');
    // Concurrent reads so the pool holds several idle connections.
    const reads = await Promise.all(Array.from({ length: 4 }, namespaces));
    for (const x of reads) expect(x.status).toBe(200);

    await terminateOthers();

    const read = await namespaces();
    expect(read.status).toBe(200);
    expect(read.names).toContain('"pgl-before"');
    const write = await request(r.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: 'pgl-after', owner: '' });
    expect(write.status).toBe(201);
    expect((await namespaces()).names).toContain('"pgl-after"');
  });
});
