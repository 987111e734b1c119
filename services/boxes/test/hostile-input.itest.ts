// Hostile-input sweep: every route of the PathSpec tables buildApp mounts (the API table
// under /api/v1 and the root download table; recorded by mountPaths, enumerated by
// sweepRoutes), every method it accepts, with an admin token: malformed/wrong-typed/
// oversized bodies, tricky path parameters, wrong query types and bad tokens. Never a 5xx;
// errors always `{"errors":[...],"success":false}` (docs/boxes.md "Errors"); the service
// still answers its health route and a known box afterwards.
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { buildCases, checkJsonErrors, runSweep, sweepRoutes, type SweepCase, type SweepRoute } from '@selfstack/testing';
import { auth, createHarness, userWithToken, type Harness } from './harness';

const LIMIT = 16 * 1024;
const PLENTY = { limit: 1_000_000, windowMs: 60_000 };

let h: Harness;
let listener: Listener;
let admin = '';

beforeAll(async () => {
  h = await createHarness({ maxRequestBytes: LIMIT, rateLimits: { api: PLENTY, login: PLENTY, 'two-factor': PLENTY, upload: PLENTY } });
  admin = await userWithToken(h, 'sweeper', { admin: true });
  await request(h.app).post('/api/v1/boxes').set(auth(admin)).send({ box: { name: 'known', short_description: 'known-good', is_private: false } }).expect(201);
  listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await listener.close();
  await h.close();
});

const VALUES: Record<string, string> = { username: 'sweeper', name: 'sweep-box', box_version: '1.0.0', provider_name: 'virtualbox', file: 'virtualbox.box' };

// Writes on boxes need a token (docs/boxes.md "Errors": 401 when none or an unknown one
// was sent); reads of public boxes, login, two-factor and signed upload URLs do not.
const needsToken = (r: SweepRoute) => ['PUT', 'POST', 'PATCH', 'DELETE'].includes(r.method) && /^\/api\/v1\/(box|boxes)(\/|$)/.test(r.pattern);

describe('hostile input sweep', () => {
  it('never answers 5xx or outside the boxes error shape', async () => {
    const routes = sweepRoutes(h.app);
    expect(routes.length).toBeGreaterThan(20);
    const cases: SweepCase[] = routes.flatMap((route) =>
      buildCases(route, {
        paramValue: (_r, name) => VALUES[name] ?? 'sweep',
        auth: auth(admin),
        badAuth: {
          absent: {},
          wrong: { Authorization: 'Bearer not-a-real-token' },
          'malformed bearer': { Authorization: 'Bearer' },
          'malformed long': { Authorization: `Basic ${'%'.repeat(3000)}` },
        },
        requiresAuth: needsToken,
        oversizeBytes: LIMIT + 1024,
      }),
    );
    const result = await runSweep(cases, {
      baseUrl: listener.url,
      checkShape: (res) => checkJsonErrors(res, { success: false }),
      // DELETE /api/v1/authenticate revokes the token it is sent with: each such case gets a
      // disposable admin token.
      isolate: (c) => c.route.pattern === '/api/v1/authenticate' && c.method === 'DELETE',
      prepare: async (c) => {
        if (c.headers.Authorization !== `Bearer ${admin}`) return c;
        const token = (await h.composed.admin.createToken('sweeper', 'disposable')).token;
        return { ...c, headers: { ...c.headers, Authorization: `Bearer ${token}` } };
      },
    });
    console.log(`boxes sweep: ${routes.length} route-methods, ${result.requests} requests, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
    // Paths, queries, tokens and the property-based bodies: a few thousand requests, longer
    // than the default 60 s when the machine runs other suites beside it.
  }, 180_000);

  it('refuses a NUL in a path parameter with a 400 in the boxes shape', async () => {
    const res = await request(h.app).get('/api/v1/box/sweeper/a%00b').set(auth(admin));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['invalid path: contains a NUL character'], success: false });
  });

  it('still answers its health route and the known box afterwards', async () => {
    await request(h.app).get('/healthz').expect(200);
    await request(h.app).get('/api/v1/authenticate').set(auth(admin)).expect(200);
    const box = await request(h.app).get('/api/v1/box/sweeper/known').set(auth(admin));
    expect(box.status).toBe(200);
    expect(box.body).toMatchObject({ tag: 'sweeper/known', short_description: 'known-good' });
  });
});
