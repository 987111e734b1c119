// Who may call what on the controller's listeners (issue 33, item 2), on real servers
// (controller and worker in one process: api + cluster + ops listeners) in this jest
// process: one with `api_token` set, one without.
// - api listener: every route x method of the table buildApp mounts (sweepRoutes) has a row;
//   with api_token set every route needs `Authorization: Bearer <api_token>` (401 in the
//   `{"errors":[...]}` shape otherwise); without it the API is open (docs/controller.md
//   "Sessions API": a deployment choice, meant for a private network).
// - ops listener: no route table, so its documented routes are declared here; it reads no
//   credentials at all (spec "Gateway GET /health": no other input; load balancers call it),
//   and answers the same to everyone: 200 for GET/HEAD /health and /metrics, 501 for other
//   methods on /health, empty bodies.
// - cluster listener: gRPC for workers, not HTTP; not part of this matrix.
import { createMemoryBus } from '@selfstack/bus';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { checkJsonErrors, createTestDatabase, declaredRoutes, matrixProblems, runAccessMatrix, sweepRoutes, type AccessMatrix, type AccessRow, type TestDatabase } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { parseServerConfig } from '../src/config/controller-config';
import { createSessionService } from '../src/features/sessions/sessions.service';
import { createSessionStore } from '../src/features/sessions/sessions.store';
import { runServer, type RunningServer } from '../src/server';
import { freePort, request, waitFor } from './process-harness';

const TOKEN = 'controller-api-token-for-the-matrix';
const logger = createLogger({ service: 'controller-test', silent: true });
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

const CALLERS = [
  'none', // no Authorization header
  'malformed', // `Authorization: Basic ...`
  'wrong', // a bearer token that is not the api_token
  'token', // the api_token
  'open', // no header, on the controller without api_token
] as const;
type Caller = (typeof CALLERS)[number];

interface Controller {
  db: TestDatabase;
  prisma: PrismaClient;
  server: RunningServer;
  api: number;
  ops: number;
}
let guarded: Controller;
let open: Controller;

async function startController(apiToken: string | undefined): Promise<Controller> {
  const db = await createTestDatabase();
  const cluster = await freePort();
  const hcl = [
    `controller {\n  name = "c1"\n${apiToken ? `  api_token = "${apiToken}"\n` : ''}}`,
    'worker {\n  name = "w1"\n}',
    ...[`api:0`, `cluster:${cluster}`, 'ops:0'].map((l) => {
      const [purpose, port] = l.split(':');
      return `listener "tcp" {\n  purpose = "${purpose}"\n  address = "127.0.0.1:${port}"\n}`;
    }),
  ].join('\n');
  const config = await parseServerConfig(hcl, 'access-matrix.hcl', { DATABASE_URL: db.url });
  const prisma = createPrismaClient({ url: db.url, poolSize: 5 });
  const server = await runServer({ config, logger, bus: createMemoryBus(), prisma });
  const api = server.ports.api!;
  await waitFor('worker connected', async () => {
    const res = await request(api, '/v1/workers', { headers: apiToken ? bearer(apiToken) : {} });
    return res.status === 200 && (JSON.parse(res.body) as { items: { connected: boolean }[] }).items.some((w) => w.connected) ? true : undefined;
  }, 10_000, 50);
  return { db, prisma, server, api, ops: server.ports.ops! };
}

/** A session on the controller the caller talks to (POST /v1/sessions as the token holder). */
async function newSession(c: Controller, headers: Record<string, string>): Promise<string> {
  const res = await request(c.api, '/v1/sessions', { method: 'POST', body: '{"target_id":"t"}', headers: { ...headers, 'content-type': 'application/json' } });
  if (res.status !== 200) throw new Error(`session: ${res.status} ${res.body}`);
  return (JSON.parse(res.body) as { id: string }).id;
}
const known: Record<'guarded' | 'open', string> = { guarded: '', open: '' };

beforeAll(async () => {
  guarded = await startController(TOKEN);
  open = await startController(undefined);
  known.guarded = await newSession(guarded, bearer(TOKEN));
  known.open = await newSession(open, {});
});
afterAll(async () => {
  for (const c of [guarded, open]) {
    await c?.server.shutdown('test done');
    await c?.prisma.$disconnect();
    await c?.db.drop();
  }
});

const controllerOf = (caller: Caller) => (caller === 'open' ? open : guarded);
function headersOf(caller: Caller): Record<string, string> {
  if (caller === 'malformed') return { Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` };
  if (caller === 'wrong') return bearer('not-the-api-token');
  if (caller === 'token') return bearer(TOKEN);
  return {};
}
const knownOf = (caller: Caller) => known[caller === 'open' ? 'open' : 'guarded'];

const API = { token: 200, open: 200, other: 401 } as const;
const API_ROWS: AccessRow<Caller>[] = [
  { route: 'GET,HEAD /v1/sessions', expect: API },
  { route: 'PUT,POST /v1/sessions', body: { target_id: 'matrix' }, expect: API },
  { route: 'GET,HEAD /v1/sessions/:id', path: ({ caller }) => `/v1/sessions/${knownOf(caller)}`, expect: API },
  {
    route: 'PUT,POST /v1/sessions/:id',
    path: ({ caller }) => `/v1/sessions/${knownOf(caller)}:cancel`,
    setup: async ({ caller, expected }) => (expected < 300 ? { path: `/v1/sessions/${await newSession(controllerOf(caller), headersOf(caller))}:cancel` } : undefined),
    expect: API,
    note: 'the :cancel action, on a session of its own',
  },
  { route: 'GET,HEAD /v1/workers', expect: API },
];

const OPS_ROUTES = declaredRoutes('ops', ['GET,HEAD /health', 'POST,PUT,PATCH,DELETE /health', 'GET,HEAD /metrics']);
const OPS_ROWS: AccessRow<Caller>[] = [
  { route: 'GET,HEAD /health', expect: { other: 200 } },
  { route: 'GET,HEAD /health', path: '/health?worker_info=1', expect: { other: 200 } },
  { route: 'POST,PUT,PATCH,DELETE /health', expect: { other: 501 } },
  { route: 'GET,HEAD /metrics', expect: { other: 200 } },
];

describe('controller access matrix', () => {
  // The table runServer mounts on the api listener (buildApp with the same deps).
  const apiMatrix = (): AccessMatrix<Caller> => ({
    routes: sweepRoutes(buildApp({ sessions: createSessionService({ store: createSessionStore({ prisma: guarded.prisma }), notifyWorker: async () => undefined }), logger, apiToken: TOKEN })),
    callers: CALLERS,
    rows: API_ROWS,
  });
  const opsMatrix = (): AccessMatrix<Caller> => ({ routes: OPS_ROUTES, callers: CALLERS, rows: OPS_ROWS });

  it('has a row for every route and method of both listeners, and an expectation for every caller', () => {
    expect(matrixProblems(apiMatrix())).toEqual([]);
    expect(matrixProblems(opsMatrix())).toEqual([]);
  });

  it('api listener: answers every caller as the table says', async () => {
    const result = await runAccessMatrix(apiMatrix(), {
      baseUrl: (caller) => `http://127.0.0.1:${controllerOf(caller).api}`,
      auth: headersOf,
      denialShape: (res) => checkJsonErrors(res),
    });
    console.log(`controller api access matrix: ${result.cells} cells, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });

  it('ops listener: answers everyone the same, with empty bodies', async () => {
    const result = await runAccessMatrix(opsMatrix(), {
      baseUrl: (caller) => `http://127.0.0.1:${controllerOf(caller).ops}`,
      auth: headersOf,
      // docs/controller.md "GET /health": every answer but worker_info and /metrics is empty.
      denialShape: (res) => (res.text === '' ? undefined : 'a body'),
      // `GET /health` answers an empty body; only `?worker_info=1` adds the worker's JSON.
      check: (cell, res) => (cell.pattern === '/health' && cell.row.path === undefined && res.text !== '' ? `a body: ${res.text}` : undefined),
    });
    console.log(`controller ops access matrix: ${result.cells} cells, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });
});
