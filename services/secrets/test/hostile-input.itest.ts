// Hostile-input sweep: every route of every PathSpec table the /v1 handler dispatches to
// (recorded on the app by buildApp, enumerated by sweepRoutes), every method it accepts,
// malformed/wrong-typed/oversized bodies, tricky path parameters, wrong query types and
// bad tokens. Never a 5xx; errors always Vault's `{"errors":[...]}`; the service still
// answers its health route and a known secret afterwards.
import request from 'supertest';
import { createListener, mountedPathTables, type Listener } from '@selfstack/http-kit';
import { buildCases, checkJsonErrors, runSweep, sweepRoutes, type SweepCase, type SweepResponse, type SweepRoute } from '@selfstack/testing';
import { INVALID_V2_PATH, ROOT_V2_PATH } from '../src/features/kv/kv.paths';
import { initAndUnseal, startHarness, type Harness } from './harness';

const LIMIT = 16 * 1024;
const SWEEP_TOKEN = 'hostile-sweep-token';

let h: Harness;
let root = '';
let unsealKey = '';
let listener: Listener;

beforeAll(async () => {
  h = await startHarness({ maxRequestBytes: LIMIT });
  const init = await initAndUnseal(h.app);
  root = init.rootToken;
  unsealKey = init.keys[0] as string;
  listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
  await request(h.app).post('/v1/sys/mounts/kv1').set('X-Vault-Token', root).send({ type: 'kv', options: { version: '1' } }).expect(204);
  await request(h.app).post('/v1/sys/auth/userpass').set('X-Vault-Token', root).send({ type: 'userpass' }).expect(204);
  await request(h.app).post('/v1/sys/auth/approle').set('X-Vault-Token', root).send({ type: 'approle' }).expect(204);
  await request(h.app).post('/v1/secret/data/known').set('X-Vault-Token', root).send({ data: { v: 'known-good' } }).expect(200);
  await ensureSweepToken();
});
afterAll(async () => {
  await listener.close();
  await h.close();
});

/** A root-policy token with a fixed id, recreated when a case revoked it (revoke-self). */
async function ensureSweepToken(): Promise<void> {
  const self = await request(h.app).get('/v1/auth/token/lookup-self').set('X-Vault-Token', SWEEP_TOKEN);
  if (self.status === 200) return;
  await request(h.app).post('/v1/auth/token/create').set('X-Vault-Token', root).send({ id: SWEEP_TOKEN, policies: ['root'] }).expect(200);
}

async function heal(): Promise<void> {
  if (h.services.barrier.isSealed()) await request(h.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
  await ensureSweepToken();
}

const MOUNT_OF_TABLE: Record<string, string> = { 'kv-v1': 'kv1', 'kv-v2': 'secret', 'auth-userpass': 'userpass', 'auth-approle': 'approle' };

function paramValue(route: SweepRoute, name: string, glob: boolean): string {
  if (name === 'mount') return MOUNT_OF_TABLE[route.label] ?? 'secret';
  if (route.pattern === '/v1/sys/mounts/:path/tune') return 'secret';
  if (route.pattern === '/v1/sys/auth/:path/tune') return 'userpass';
  return glob ? 'sweep/a' : 'sweep';
}

// Sealing and revoking the caller's own token change what every later request sees: those
// routes run one case at a time, followed by an unseal / a new sweep token.
const DISRUPTIVE = new Set(['/v1/sys/seal', '/v1/auth/token/revoke-self']);

/**
 * Vault's `{"errors":[...]}`. One documented exception: a non-KV-v2 path on a v2 mount (and
 * a non-listing operation on its root) answers 404 with a logical response carrying
 * `warnings` and no `errors` (reference secrets-service-vault-api.md §3.5, last bullets).
 */
function vaultShape(res: SweepResponse): string | undefined {
  const problem = checkJsonErrors(res);
  if (!problem || res.status !== 404) return problem;
  const body = JSON.parse(res.text) as { warnings?: unknown; data?: unknown };
  const warnings = body.warnings;
  const kvWarning = Array.isArray(warnings) && warnings.length === 1 && (warnings[0] === INVALID_V2_PATH || warnings[0] === ROOT_V2_PATH);
  return kvWarning && body.data === null ? undefined : problem;
}

describe('hostile input sweep', () => {
  it('enumerates the routes of every table the /v1 handler dispatches to', () => {
    const labels = mountedPathTables(h.app).map((t) => t.label);
    expect(labels).toEqual(['sys-raw', 'sys', 'token', 'kv-v1', 'kv-v2', 'auth-userpass', 'auth-approle']);
    const patterns = new Set(sweepRoutes(h.app).map((r) => r.pattern));
    for (const p of ['/v1/sys/init', '/v1/sys/mounts/*path', '/v1/auth/token/create', '/v1/:mount/data/*path', '/v1/:mount/*path', '/v1/auth/:mount/login/:username', '/v1/auth/:mount/login', '/v1/sys/auth/*path']) expect(patterns.has(p)).toBe(true);
  });

  it('never answers 5xx or outside the Vault error shape', async () => {
    const routes = sweepRoutes(h.app);
    const cases: SweepCase[] = routes.flatMap((route) =>
      buildCases(route, {
        paramValue,
        auth: { 'X-Vault-Token': SWEEP_TOKEN },
        badAuth: {
          absent: {},
          wrong: { 'X-Vault-Token': 'hvs.not-a-real-token' },
          'malformed bearer': { Authorization: 'Bearer' },
          'malformed long': { Authorization: `Basic ${'%'.repeat(3000)}` },
        },
        // Raw sys routes (init, unseal, seal-status, health, leader) work without a token.
        requiresAuth: (r) => r.label !== 'sys-raw' && !r.unauthenticated,
        oversizeBytes: LIMIT + 1024,
      }),
    );
    const result = await runSweep(cases, {
      baseUrl: listener.url,
      checkShape: vaultShape,
      isolate: (c) => DISRUPTIVE.has(c.route.pattern),
      heal,
    });
    console.log(`secrets sweep: ${routes.length} route-methods, ${result.requests} requests, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
    expect(result.requests).toBeGreaterThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Paths, queries, tokens and the property-based bodies (argon2 logins among them): a few
    // thousand requests, minutes when the machine runs other suites beside it.
  }, 240_000);

  it('still answers its health route and the known secret afterwards', async () => {
    await heal();
    const health = await request(h.app).get('/v1/sys/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ initialized: true, sealed: false });
    await request(h.app).get('/healthz').expect(200);
    const known = await request(h.app).get('/v1/secret/data/known').set('X-Vault-Token', root);
    expect(known.status).toBe(200);
    expect(known.body.data.data).toEqual({ v: 'known-good' });
  });
});
