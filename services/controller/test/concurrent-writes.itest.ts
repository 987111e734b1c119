// Concurrent writers against the controller's write routes, on the real server (controller
// and worker in one process: api + cluster + ops listeners, in this jest process). Never a
// 5xx; the statuses docs/controller.md "Sessions API" gives; every session exists once and
// holds its own body; the worker's session count (GET /v1/workers, /health?worker_info=1)
// matches the sessions it was handed.
//
// Write routes (docs/controller.md; the anchor, Boundary, is only specified for /health,
// so the statuses are the ones our docs promise):
//   POST /v1/sessions                  creates a session with a server-chosen id: all 200, 8 distinct sessions
//                                      (identical and different bodies; no name to collide on, so no 409)
//   POST /v1/sessions/:id:cancel       update: all 200, status canceling (or terminated once the worker dropped it)
//   create+cancel ("create+delete"):  sessions are never deleted; cancel is their removal. Creates and
//                                      cancels interleaved: every read route agrees, the worker ends with 0.
//   worker registration                not an HTTP route (gRPC hello on the cluster listener -> upsertWorker):
//                                      exercised at the store, 8 concurrent upserts of one name, one row.
import { createMemoryBus } from '@selfstack/bus';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { parseServerConfig } from '../src/config/controller-config';
import { createSessionStore } from '../src/features/sessions/sessions.store';
import { runServer, type RunningServer } from '../src/server';
import { freePort, request, waitFor, type HttpResult } from './process-harness';

const N = 8;
const logger = createLogger({ service: 'controller-test', silent: true });
const times = <T>(fn: (i: number) => T): T[] => Array.from({ length: N }, (_, i) => fn(i));
const json = { 'content-type': 'application/json' };

let db: TestDatabase;
let prisma: PrismaClient;
let server: RunningServer;
let api = 0;
let ops = 0;

interface Session {
  id: string;
  status: string;
  worker_name: string;
  target_id: string;
}

function no5xx(rs: HttpResult[]): void {
  for (const r of rs) if (r.status >= 500) throw new Error(`5xx: ${r.status} ${r.body}`);
}
const post = (path: string, body?: unknown) => request(api, path, { method: 'POST', body: body === undefined ? '' : JSON.stringify(body), headers: json });
const parse = <T>(r: HttpResult): T => JSON.parse(r.body) as T;
async function sessions(query = ''): Promise<Session[]> {
  return parse<{ items: Session[] }>(await request(api, `/v1/sessions${query}`)).items;
}
async function worker(): Promise<{ name: string; connected: boolean; active_session_count: number }> {
  const items = parse<{ items: { name: string; connected: boolean; active_session_count: number }[] }>(await request(api, '/v1/workers')).items;
  return items.find((w) => w.name === 'w1') as { name: string; connected: boolean; active_session_count: number };
}
async function healthCount(): Promise<number> {
  const r = await request(ops, '/health?worker_info=1');
  return (JSON.parse(r.body) as { worker_process_info: { active_session_count: number } }).worker_process_info.active_session_count;
}
/** Waits until the worker's report has been applied: DB count, API and /health agree on `n`. */
async function settle(n: number): Promise<void> {
  await waitFor(`worker holds ${n}`, async () => ((await worker()).active_session_count === n && (await healthCount()) === n ? true : undefined), 10_000, 50);
}

beforeAll(async () => {
  db = await createTestDatabase();
  const cluster = await freePort();
  const hcl = `controller {\n  name = "c1"\n}\nworker {\n  name = "w1"\n}\n` +
    ['api', 'cluster', 'ops'].map((p) => `listener "tcp" {\n  purpose = "${p}"\n  address = "127.0.0.1:${p === 'cluster' ? cluster : 0}"\n}`).join('\n');
  const config = await parseServerConfig(hcl, 'concurrent-writes.hcl', { DATABASE_URL: db.url });
  prisma = createPrismaClient({ url: db.url, poolSize: 5 });
  server = await runServer({ config, logger, bus: createMemoryBus(), prisma });
  api = server.ports.api!;
  ops = server.ports.ops!;
  await waitFor('worker connected', async () => ((await worker())?.connected ? true : undefined), 10_000, 50);
});
afterAll(async () => {
  await server?.shutdown('test done');
  await prisma?.$disconnect();
  await db?.drop();
});

describe('sessions', () => {
  it('8 identical and 8 different creates on one worker: all 200, 16 distinct sessions, worker count 16', async () => {
    const same = await Promise.all(times(() => post('/v1/sessions', { worker_name: 'w1', target_id: 'same' })));
    const diff = await Promise.all(times((i) => post('/v1/sessions', { worker_name: 'w1', target_id: `t${i}`, expiration_seconds: 3600 + i })));
    no5xx([...same, ...diff]);
    expect([...same, ...diff].map((r) => r.status)).toEqual(times(() => 200).concat(times(() => 200)));
    const created = [...same, ...diff].map((r) => parse<Session>(r));
    expect(new Set(created.map((s) => s.id)).size).toBe(2 * N);
    for (const [i, s] of created.slice(N).entries()) {
      const got = parse<Session>(await request(api, `/v1/sessions/${s.id}`));
      expect(got).toMatchObject({ id: s.id, target_id: `t${i}`, worker_name: 'w1' });
    }
    const listed = await sessions('?worker_name=w1');
    expect(listed.filter((s) => created.some((c) => c.id === s.id))).toHaveLength(2 * N);
    expect(await prisma.controllerSession.count()).toBe(2 * N);
    await settle(2 * N);
    expect((await sessions('?status=active')).map((s) => s.id).sort()).toEqual(created.map((s) => s.id).sort());
  });

  it('8 concurrent cancels of one session: all 200, canceling then terminated everywhere', async () => {
    const [victim] = await sessions('?status=active');
    const rs = await Promise.all(times(() => post(`/v1/sessions/${victim?.id}:cancel`)));
    no5xx(rs);
    expect(rs.map((r) => r.status)).toEqual(times(() => 200));
    for (const r of rs) expect(['canceling', 'terminated']).toContain(parse<Session>(r).status);
    await settle(2 * N - 1);
    await waitFor('terminated', async () => (parse<Session>(await request(api, `/v1/sessions/${victim?.id}`)).status === 'terminated' ? true : undefined), 10_000, 50);
    expect((await sessions('?status=terminated')).map((s) => s.id)).toEqual([victim?.id]);
    expect((await sessions('?status=canceling')).length).toBe(0);
  });

  it('creates and cancels interleaved (every session canceled 8 times as it appears): no 5xx, all terminated, worker at 0', async () => {
    // Cancel what exists first, so the worker starts from 0.
    await Promise.all((await sessions('?status=active')).map((s) => post(`/v1/sessions/${s.id}:cancel`)));
    await settle(0);
    const rs = await Promise.all(
      times(async (i) => {
        const created = await post('/v1/sessions', { worker_name: 'w1', target_id: `flap${i}` });
        if (created.status !== 200) return [created];
        const id = parse<Session>(created).id;
        return [created, ...(await Promise.all(times(() => post(`/v1/sessions/${id}:cancel`))))];
      }),
    );
    const all = rs.flat();
    no5xx(all);
    expect(all.map((r) => r.status)).toEqual(all.map(() => 200));
    await settle(0);
    const flaps = (await sessions()).filter((s) => s.target_id.startsWith('flap'));
    expect(flaps).toHaveLength(N);
    await waitFor('all terminated', async () => ((await sessions('?status=terminated')).filter((s) => s.target_id.startsWith('flap')).length === N ? true : undefined), 10_000, 50);
    for (const status of ['pending', 'active', 'canceling']) expect(await sessions(`?status=${status}`)).toEqual([]);
  });

  it('creates for an unknown worker: all 409, nothing stored', async () => {
    const before = await prisma.controllerSession.count();
    const rs = await Promise.all(times(() => post('/v1/sessions', { worker_name: 'nobody' })));
    no5xx(rs);
    expect(rs.map((r) => r.status)).toEqual(times(() => 409));
    for (const r of rs) expect(parse(r)).toEqual({ errors: ['worker "nobody" is not connected'] });
    expect(await prisma.controllerSession.count()).toBe(before);
  });
});

describe('worker registration (store)', () => {
  it('8 concurrent upserts of one worker name: no unique violation, one row holding one of the bodies', async () => {
    const store = createSessionStore({ prisma });
    const results = await Promise.allSettled(
      times((i) => store.upsertWorker({ name: 'w-race', description: `d${i}`, controllerName: 'c1', connected: i % 2 === 0 })),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await prisma.controllerWorker.count({ where: { name: 'w-race' } })).toBe(1);
    const items = parse<{ items: { name: string; description: string }[] }>(await request(api, '/v1/workers')).items.filter((w) => w.name === 'w-race');
    expect(items).toHaveLength(1);
    expect(times((i) => `d${i}`)).toContain(items[0]?.description);
  });
});
