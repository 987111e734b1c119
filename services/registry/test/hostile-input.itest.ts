// Hostile-input sweep: every route of every PathSpec table buildApp mounts (discovery,
// admin, modules v1, downloads summary v2; recorded by mountPaths, enumerated by
// sweepRoutes), every method it accepts, with the admin token: malformed/wrong-typed/
// oversized bodies, tricky path parameters, wrong query types and bad tokens. Never a 5xx;
// errors always `{"errors":[...]}` (docs/registry.md "Errors"); the registry still
// answers its health route and a known namespace afterwards.
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { buildCases, checkJsonErrors, runSweep, sweepRoutes, type SweepCase, type SweepRoute } from '@selfstack/testing';
import { ADMIN_TOKEN, bearer, createNamespace, startRegistry, type Registry } from './registry-harness';

// buildApp's default JSON body limit (compose passes none).
const LIMIT = 1024 * 1024;

let r: Registry;
let listener: Listener;

beforeAll(async () => {
  // Maintenance read on every request: switching it off at the end takes effect at once.
  r = await startRegistry({ maintenanceCheckMs: 0 });
  await createNamespace(r.app, 'known-ns');
  listener = await createListener(r.app, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await listener.close();
  await r.close();
});

const VALUES: Record<string, string> = { namespace: 'sweep-ns', name: 'sweep', provider: 'aws', version: '1.0.0' };

// docs/registry.md "Errors": 401 without a valid token where one is needed (the admin API,
// publishing and deleting); reads are public with the default settings (publicReads).
const needsToken = (route: SweepRoute) =>
  route.pattern.startsWith('/v1/admin') || (route.pattern.startsWith('/v1/modules') && ['PUT', 'POST', 'PATCH', 'DELETE'].includes(route.method));

describe('hostile input sweep', () => {
  it('never answers 5xx or outside the registry error shape', async () => {
    const routes = sweepRoutes(r.app);
    expect(routes.length).toBeGreaterThan(15);
    // A well-formed switch of maintenance mode turns every later non-admin answer into a
    // (correct) 503: that route is swept on its own after the others, then switched off.
    const isSwitch = (route: SweepRoute) => route.pattern === '/v1/admin/maintenance' && route.method !== 'GET' && route.method !== 'HEAD';
    const casesOf = (list: SweepRoute[]): SweepCase[] =>
      list.flatMap((route) =>
        buildCases(route, {
          paramValue: (_r, name) => VALUES[name] ?? 'sweep',
          auth: bearer(ADMIN_TOKEN),
          badAuth: {
            absent: {},
            wrong: bearer('not-a-real-token'),
            'malformed bearer': { Authorization: 'Bearer' },
            'malformed long': { Authorization: `Basic ${'%'.repeat(3000)}` },
          },
          requiresAuth: needsToken,
          oversizeBytes: LIMIT + 1024,
        }),
      );
    const switches = routes.filter(isSwitch);
    expect(switches.length).toBeGreaterThan(0);
    const sweep = (list: SweepRoute[]) => runSweep(casesOf(list), { baseUrl: listener.url, checkShape: (res) => checkJsonErrors(res) });
    const result = await sweep(routes.filter((route) => !isSwitch(route)));
    const last = await sweep(switches);
    console.log(`registry sweep: ${routes.length} route-methods, ${result.requests + last.requests} requests, statuses ${JSON.stringify(result.statuses)} then ${JSON.stringify(last.statuses)}`);
    expect([...result.failures, ...last.failures]).toEqual([]);
    const off = await request(r.app).put('/v1/admin/maintenance').set(bearer(ADMIN_TOKEN)).send({ enabled: false });
    expect(off.status).toBe(200);
  });

  it('still answers its health route and the known namespace afterwards', async () => {
    await request(r.app).get('/healthz').expect(200);
    await request(r.app).get('/.well-known/terraform.json').expect(200);
    const ns = await request(r.app).get('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN));
    expect(ns.status).toBe(200);
    expect(JSON.stringify(ns.body)).toContain('"known-ns"');
    await request(r.app).get('/v1/modules/known-ns').expect(200);
  });
});
