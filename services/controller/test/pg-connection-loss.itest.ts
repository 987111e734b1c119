// Reliability: Postgres ends the controller's idle pooled connections (a restart, an
// operator's pg_terminate_backend). The process must not crash on the pool's 'error'
// event, the next API read must return what was written before on a fresh connection,
// and the next write must commit. Runs the real server (controller and worker in one
// process, api + cluster + ops listeners) in this jest process so an unhandled 'error'
// event fails the test.
import { createMemoryBus } from '@selfstack/bus';
import { createPrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { type BackendTerminator, createTestDatabase, openBackendTerminator, type TestDatabase } from '@selfstack/testing';
import { parseServerConfig } from '../src/config/controller-config';
import { runServer, type RunningServer } from '../src/server';
import { freePort, request, waitFor } from './process-harness';

let db: TestDatabase;
let terminator: BackendTerminator;
let server: RunningServer;
let api = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  const cluster = await freePort();
  const hcl = `controller {\n  name = "c1"\n}\nworker {\n  name = "w1"\n}\n` +
    ['api:0', `cluster:${cluster}`, 'ops:0'].map((l) => {
      const [purpose, port] = l.split(':');
      return `listener "tcp" {\n  purpose = "${purpose}"\n  address = "127.0.0.1:${port}"\n}`;
    }).join('\n');
  const config = await parseServerConfig(hcl, 'pg-connection-loss.hcl', { DATABASE_URL: db.url });
  const logger = createLogger({ service: 'controller-test', silent: true });
  server = await runServer({ config, logger, bus: createMemoryBus(), prisma: createPrismaClient({ url: db.url, poolSize: 5 }) });
  api = server.ports.api!;
  // Our own connection: the one backend of the test database left alone.
  terminator = await openBackendTerminator(db.url);
});
afterAll(async () => {
  await server?.shutdown('test done');
  await terminator?.close();
  await db?.drop();
});

const json = { 'content-type': 'application/json' };

describe('controller Postgres connection loss', () => {
  it('survives its idle connections being terminated and keeps the data', async () => {
    await waitFor('worker connected', async () => {
      const res = await request(api, '/v1/workers');
      return res.status === 200 && (JSON.parse(res.body) as { items: { connected: boolean }[] }).items.some((w) => w.connected) ? true : undefined;
    }, 10_000, 50);
    const created = await request(api, '/v1/sessions', { method: 'POST', body: JSON.stringify({ target_id: 'before' }), headers: json });
    expect(created.status).toBe(200);
    const id = (JSON.parse(created.body) as { id: string }).id;
    // Concurrent reads so the pool holds several idle connections.
    const reads = await Promise.all(Array.from({ length: 4 }, () => request(api, `/v1/sessions/${id}`)));
    for (const r of reads) expect(r.status).toBe(200);

    expect(await terminator.terminateOthers()).toBeGreaterThan(0);

    const read = await request(api, `/v1/sessions/${id}`);
    expect(read.status).toBe(200);
    expect(JSON.parse(read.body)).toMatchObject({ id, target_id: 'before', worker_name: 'w1' });
    const write = await request(api, '/v1/sessions', { method: 'POST', body: JSON.stringify({ target_id: 'after' }), headers: json });
    expect(write.status).toBe(200);
    const after = JSON.parse(write.body) as { id: string };
    const list = await request(api, '/v1/sessions');
    expect(list.status).toBe(200);
    expect((JSON.parse(list.body) as { items: { id: string }[] }).items.map((s) => s.id).sort()).toEqual([id, after.id].sort());
  });
});
