// Reliability: Postgres ends the app's idle pooled connections (a restart, an operator's
// pg_terminate_backend). The process must not crash on the pool's 'error' event, the next
// read must return what was written before on a fresh connection, and the next write
// must commit.
import request from 'supertest';
import { openBackendTerminator, type BackendTerminator } from '@selfstack/testing';
import { ADMIN_TOKEN, bearer, createNamespace, startRegistry, type Registry } from './registry-harness';

let r: Registry;
let terminator: BackendTerminator;
beforeAll(async () => {
  r = await startRegistry();
  // Our own connection: the one backend of the test database left alone.
  terminator = await openBackendTerminator(r.db.url);
});
afterAll(async () => {
  await terminator.close();
  await r.close();
});

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

    expect(await terminator.terminateOthers()).toBeGreaterThan(0);

    const read = await namespaces();
    expect(read.status).toBe(200);
    expect(read.names).toContain('"pgl-before"');
    const write = await request(r.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: 'pgl-after', owner: '' });
    expect(write.status).toBe(201);
    expect((await namespaces()).names).toContain('"pgl-after"');
  });
});
