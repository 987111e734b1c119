// Hostile-input sweep: every route of the PathSpec table buildApp mounts under /v1
// (recorded by mountPaths, enumerated by sweepRoutes), every method it accepts, with ACLs
// enabled and a management token: malformed/wrong-typed/oversized bodies, tricky path
// parameters, wrong query types (`index=abc`, `wait=zzz`, `per_page=-1`) and bad tokens.
// Never a 5xx; errors are Nomad's plain-text bodies; the agent still answers afterwards.
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { buildCases, runSweep, sweepRoutes, type SweepCase, type SweepResponse, type SweepRoute } from '@selfstack/testing';
import { minimalJob, registerJob, startHarness, type Harness } from './harness';

const LIMIT = 16 * 1024;

let h: Harness;
let listener: Listener;
let management = '';

beforeAll(async () => {
  h = await startHarness({ aclEnabled: true, maxRequestBytes: LIMIT });
  const boot = await request(h.app).put('/v1/acl/bootstrap').expect(200);
  management = boot.body.SecretID as string;
  await registerJob(h.app, minimalJob('known-job'), { 'X-Scheduler-Token': management });
  listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await listener.close();
  await h.close();
});

/** Nomad's errors are plain text (reference workload-scheduler-nomad-api.md §0). */
function nomadShape(res: SweepResponse): string | undefined {
  const ct = String(res.headers['content-type'] ?? '');
  // An unknown path is a 404 with an empty body (reference §0): no Content-Type needed.
  if (res.text === '' && res.status === 404) return undefined;
  if (!ct.startsWith('text/plain')) return `content-type ${ct || '(none)'}`;
  if (res.text.trimStart().startsWith('{')) return 'JSON body';
  return undefined;
}

// Reference §5: these answer without a token even with ACLs on (Nomad's status and region
// endpoints carry no ACL check; bootstrap is how the first token is obtained; node
// registration is authenticated by the node secret, not an ACL token).
const ANONYMOUS = new Set(['/v1/status/leader', '/v1/status/peers', '/v1/regions', '/v1/acl/bootstrap', '/v1/internal/node/register']);

describe('hostile input sweep', () => {
  it('never answers 5xx or outside the Nomad error shape', async () => {
    const routes = sweepRoutes(h.app);
    expect(routes.length).toBeGreaterThan(50);
    const cases: SweepCase[] = routes.flatMap((route: SweepRoute) =>
      buildCases(route, {
        paramValue: (_r, _name, glob) => (glob ? 'sweep/a' : 'sweep'),
        auth: { 'X-Scheduler-Token': management },
        badAuth: {
          absent: {},
          wrong: { 'X-Scheduler-Token': '00000000-0000-0000-0000-000000000000' },
          'malformed bearer': { Authorization: 'Bearer' },
          'malformed long': { 'X-Nomad-Token': '%'.repeat(3000) },
        },
        // Without a token (or with an unparsable Bearer header) Nomad applies the anonymous
        // policy (reference §5), so lists answer filtered (200 []) and some handlers
        // validate before the ACL check; an unknown secret is always refused.
        requiresAuth: (r, authCase) => (authCase === 'wrong' || authCase === 'malformed long') && !ANONYMOUS.has(r.pattern),
        oversizeBytes: LIMIT + 1024,
      }),
    );
    const result = await runSweep(cases, { baseUrl: listener.url, checkShape: nomadShape });
    console.log(`scheduler sweep: ${routes.length} route-methods, ${result.requests} requests, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
    // Paths, queries, tokens and the property-based bodies: a few thousand requests, longer
    // than the default 60 s when the machine runs other suites beside it.
  }, 180_000);

  it('refuses NUL in a path or query value with a 400 and does not fail concurrent lookups', async () => {
    const auth = { 'X-Scheduler-Token': management };
    const [bad, good, query] = await Promise.all([
      request(h.app).get('/v1/job/a%00b').set(auth),
      request(h.app).get('/v1/job/known-job').set(auth),
      request(h.app).get('/v1/namespaces?prefix=%00').set(auth),
    ]);
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^text\/plain/);
    expect(good.status).toBe(200);
    expect(query.status).toBe(400);
  });

  it('still answers its health route and the known job afterwards', async () => {
    await request(h.app).get('/healthz').expect(200);
    await request(h.app).get('/v1/status/leader').expect(200);
    const job = await request(h.app).get('/v1/job/known-job').set('X-Scheduler-Token', management);
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({ ID: 'known-job', Status: expect.any(String) });
  });
});
