// Hostile-input sweep of the controller's two HTTP surfaces, on the real server (controller
// and worker in one process, api + cluster + ops listeners, an api_token) in this jest
// process, so a thrown handler fails the test instead of killing a child quietly:
// - the api listener: every route of the PathSpec table buildApp mounts (recorded by
//   mountPaths, enumerated by sweepRoutes), every method it accepts: malformed/wrong-typed/
//   oversized bodies, tricky path parameters, wrong query types and bad tokens. Never a
//   5xx; errors are `{"errors":[...]}` (docs/controller.md "Sessions API").
// - the ops listener (a plain node:http handler, not a kit app): odd methods, paths,
//   request targets and queries. Only the documented statuses (docs/controller.md
//   "GET /health"): 200 empty (or the worker_info JSON), 501 with `Allow: GET, HEAD` for
//   other methods, 404 empty elsewhere; never another 5xx.
import http from 'node:http';
import { createMemoryBus } from '@selfstack/bus';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { buildCases, checkJsonErrors, rawRequest, runSweep, sweepRoutes, createTestDatabase, type SweepCase, type SweepResponse, type TestDatabase } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { parseServerConfig } from '../src/config/controller-config';
import { createSessionService } from '../src/features/sessions/sessions.service';
import { createSessionStore } from '../src/features/sessions/sessions.store';
import { runServer, type RunningServer } from '../src/server';
import { freePort, request, waitFor } from './process-harness';

const TOKEN = 'controller-api-token-for-tests';
const LIMIT = 16 * 1024;
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const logger = createLogger({ service: 'controller-test', silent: true });

let db: TestDatabase;
let prisma: PrismaClient;
let server: RunningServer;
let api = 0;
let ops = 0;
let known = '';

beforeAll(async () => {
  db = await createTestDatabase();
  const cluster = await freePort();
  const hcl = `controller {\n  name = "c1"\n  api_token = "${TOKEN}"\n}\nworker {\n  name = "w1"\n}\n` +
    [`api:0:${LIMIT}`, `cluster:${cluster}:0`, 'ops:0:0'].map((l) => {
      const [purpose, port, max] = l.split(':');
      return `listener "tcp" {\n  purpose = "${purpose}"\n  address = "127.0.0.1:${port}"\n${max !== '0' ? `  max_request_size = ${max}\n` : ''}}`;
    }).join('\n');
  const config = await parseServerConfig(hcl, 'hostile-input.hcl', { DATABASE_URL: db.url });
  prisma = createPrismaClient({ url: db.url, poolSize: 5 });
  server = await runServer({ config, logger, bus: createMemoryBus(), prisma });
  api = server.ports.api!;
  ops = server.ports.ops!;
  await waitFor('worker connected', async () => {
    const res = await request(api, '/v1/workers', { headers: bearer(TOKEN) });
    return res.status === 200 && (JSON.parse(res.body) as { items: { connected: boolean }[] }).items.some((w) => w.connected) ? true : undefined;
  }, 10_000, 50);
  const created = await request(api, '/v1/sessions', { method: 'POST', body: '{"target_id":"known"}', headers: { ...bearer(TOKEN), 'content-type': 'application/json' } });
  expect(created.status).toBe(200);
  known = (JSON.parse(created.body) as { id: string }).id;
});
afterAll(async () => {
  await server?.shutdown('test done');
  await db?.drop();
});

describe('api listener hostile input sweep', () => {
  it('never answers 5xx or outside the `{"errors":[...]}` shape', async () => {
    // The same table runServer mounts on the api listener (buildApp with the same deps).
    const app = buildApp({ sessions: createSessionService({ store: createSessionStore({ prisma }), notifyWorker: async () => undefined }), logger, apiToken: TOKEN, maxRequestBytes: LIMIT });
    const routes = sweepRoutes(app);
    expect(routes.length).toBeGreaterThanOrEqual(6);
    const cases: SweepCase[] = routes.flatMap((route) =>
      buildCases(route, {
        // Reads hit a real session; writes on /v1/sessions/:id are the `:cancel` action.
        paramValue: (r) => (r.method === 'GET' || r.method === 'HEAD' ? known : `${known}:cancel`),
        auth: bearer(TOKEN),
        badAuth: {
          absent: {},
          wrong: bearer('not-the-token'),
          'malformed bearer': { Authorization: 'Bearer' },
          'malformed long': { Authorization: `Basic ${'%'.repeat(3000)}` },
        },
        // api_token is set: every API route needs it (docs/controller.md "Sessions API").
        requiresAuth: () => true,
        oversizeBytes: LIMIT + 1024,
      }),
    );
    const result = await runSweep(cases, { baseUrl: `http://127.0.0.1:${api}`, checkShape: (res) => checkJsonErrors(res) });
    console.log(`controller api sweep: ${routes.length} route-methods, ${result.requests} requests, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });
});

/** docs/controller.md "GET /health": the documented answers of the ops listener. */
function opsProblem(method: string, target: string, res: SweepResponse): string | undefined {
  if (res.status >= 500) {
    // The only 5xx a healthy, running controller documents: 501 for methods other than GET/HEAD.
    if (res.status !== 501) return `status ${res.status}`;
    if (method === 'GET' || method === 'HEAD') return `501 for ${method}`;
    if (res.headers['allow'] !== 'GET, HEAD') return `501 without Allow: GET, HEAD (${String(res.headers['allow'])})`;
  }
  if (res.text === '') return undefined;
  if (res.status !== 200) return `${res.status} with a body`;
  const ct = String(res.headers['content-type'] ?? '');
  if (ct.startsWith('application/json')) {
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return 'JSON body does not parse';
    }
    const info = (body as { worker_process_info?: Record<string, unknown> }).worker_process_info;
    if (!info || Object.keys(body as object).length !== 1) return 'JSON body is not {"worker_process_info":{...}}';
    if (typeof info['state'] !== 'string' || typeof info['active_session_count'] !== 'number' || typeof info['upstream_connection_state'] !== 'string') return 'worker_process_info fields';
    return undefined;
  }
  // /metrics answers the Prometheus text format.
  if (ct.startsWith('text/plain') && /^\/metrics(\?|$)/.test(target)) return undefined;
  return `unexpected ${ct || 'untyped'} body`;
}

describe('ops listener hostile input sweep', () => {
  it('answers only the documented statuses and bodies, and keeps serving', async () => {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'LIST'];
    const queries = ['', '?worker_info=1', '?worker_info=T', '?worker_info=0', '?worker_info=', '?worker_info=%00', '?worker_info=1&worker_info=0', '?worker_info[]=1',
      '?worker_info=%zz', `?${'x'.repeat(5000)}=1`, '?index=abc&wait=zzz', '?help=1', '?%'];
    const targets = [
      ...queries.map((q) => `/health${q}`),
      '/health/', '/HEALTH', '/health%00', '/%2e%2e/health', '/health/..', '/health;x', '/health#x',
      // Request targets a URL parser may refuse or read as an authority.
      '//[', 'http://[', '//x:99999/health', '//evil.example/health', 'http://evil.example/health', '//%', '*',
      '/metrics', '/metrics?x=1', '/', `/${'x'.repeat(5000)}`, '/%zz', '/a%2Fb',
    ];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    const jobs = methods.flatMap((method) => targets.map((target) => ({ method, target })));
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < jobs.length) {
        const { method, target } = jobs[next++]!;
        const body = ['POST', 'PUT', 'PATCH'].includes(method) ? '{"a":' : undefined;
        try {
          const res = await rawRequest(`http://127.0.0.1:${ops}`, agent, { method, path: target, headers: body ? { 'Content-Type': 'application/json' } : {}, ...(body ? { body } : {}) });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          const problem = opsProblem(method, target, res);
          if (problem) failures.push(`${method} ${target.slice(0, 60)}: ${problem}: ${JSON.stringify(res.text.slice(0, 120))}`);
        } catch (err) {
          // Node itself refuses a method or target it cannot parse (400, connection closed).
          statuses['reset'] = (statuses['reset'] ?? 0) + 1;
          if (!/ECONNRESET|socket hang up|EPIPE/.test(String(err))) failures.push(`${method} ${target.slice(0, 60)}: transport error ${String(err)}`);
        }
      }
    }));
    agent.destroy();
    console.log(`controller ops sweep: ${jobs.length} requests, statuses ${JSON.stringify(statuses)}`);
    expect(failures).toEqual([]);

    // Still serving, with the documented answers.
    const health = await request(ops, '/health');
    expect(health.status).toBe(200);
    expect(health.body).toBe('');
    const info = await request(ops, '/health?worker_info=1');
    expect(info.status).toBe(200);
    expect(JSON.parse(info.body)).toEqual({ worker_process_info: { state: 'active', active_session_count: expect.any(Number), upstream_connection_state: 'READY' } });
    const session = await request(api, `/v1/sessions/${known}`, { headers: bearer(TOKEN) });
    expect(session.status).toBe(200);
    expect(JSON.parse(session.body)).toMatchObject({ id: known, target_id: 'known' });
  });
});
