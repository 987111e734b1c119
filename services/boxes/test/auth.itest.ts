// Tokens, two-factor, rate limits, maintenance mode and billing (spec "Authentication",
// "Errors" 401/402/406/429/503; reference A.1, A.3, A.8).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createLogger } from '@selfstack/logger';
import { createWebhookSender } from '../src/features/auth/two-factor-sender';
import { auth, createHarness, userWithToken, type Harness } from './harness';

let h: Harness;
const api = () => request(h.app);

function expectBoxesError(res: request.Response, status: number, pattern: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.success).toBe(false);
  expect(res.body.errors.join(' ')).toMatch(pattern);
}

beforeAll(async () => {
  h = await createHarness({ rateLimits: { login: { limit: 1000, windowMs: 60_000 } } });
  await h.composed.admin.createUser({ username: 'dora', password: 'dora-password', email: 'Dora@Example.com' });
});
afterAll(async () => {
  await h.close();
});

describe('tokens', () => {
  it('logs in by username or e-mail and returns a token object; the token is stored hashed', async () => {
    const res = await api().post('/api/v1/authenticate').send({ user: { login: 'dora', password: 'dora-password' }, token: { description: 'Login from cURL' }, two_factor: { code: null } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ description: 'Login from cURL', token: expect.stringMatching(/^\w{14}\.atlasv1\.[\w-]+$/), token_hash: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: expect.stringMatching(/Z$/) });
    const rows = await h.prisma.boxToken.findMany({ where: { description: 'Login from cURL' } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(res.body.token_hash);
    expect(JSON.stringify(rows)).not.toContain(res.body.token);
    const byEmail = await api().post('/api/v1/authenticate').send({ user: { login: 'dora@example.com', password: 'dora-password' } });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.description).toBe('');
  });

  it('refuses wrong passwords, unknown users and missing credentials', async () => {
    expectBoxesError(await api().post('/api/v1/authenticate').send({ user: { login: 'dora', password: 'wrong' } }), 401, /Invalid login or password/);
    expectBoxesError(await api().post('/api/v1/authenticate').send({ user: { login: 'nobody', password: 'x' } }), 401, /Invalid login or password/);
    expectBoxesError(await api().post('/api/v1/authenticate').send({}), 403, /user\.login and user\.password are required/);
    expectBoxesError(await api().post('/api/v1/authenticate').send({ user: { login: 'dora' } }), 403, /password/);
  });

  it('validates tokens from Bearer, X-Atlas-Token, X-Legacy-Token and access_token; 401 otherwise', async () => {
    const token = (await api().post('/api/v1/authenticate').send({ user: { login: 'dora', password: 'dora-password' } })).body.token as string;
    for (const req of [
      api().get('/api/v1/authenticate').set(auth(token)),
      api().get('/api/v1/authenticate').set('X-Atlas-Token', token),
      api().get('/api/v1/authenticate').set('X-Legacy-Token', token),
      api().get(`/api/v1/authenticate?access_token=${encodeURIComponent(token)}`),
    ]) {
      const res = await req;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ user: { username: 'dora', email: 'dora@example.com', is_admin: false } });
    }
    expectBoxesError(await api().get('/api/v1/authenticate'), 401, /Authentication required/);
    expectBoxesError(await api().get('/api/v1/authenticate').set(auth('bogus')), 401, /Invalid token/);
    expectBoxesError(await api().get('/api/v1/authenticate').set('Authorization', 'Basic Zm9vOmJhcg=='), 401, /Authentication required/);
  });

  it('DELETE revokes the token in use (204), then it is refused', async () => {
    const token = (await api().post('/api/v1/authenticate').send({ user: { login: 'dora', password: 'dora-password' } })).body.token as string;
    const del = await api().delete('/api/v1/authenticate').set(auth(token));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectBoxesError(await api().get('/api/v1/authenticate').set(auth(token)), 401, /Invalid token/);
    expectBoxesError(await api().delete('/api/v1/authenticate').set(auth(token)), 401, /Invalid token/);
  });

  it('an invalid token does not block public reads', async () => {
    expect((await api().get('/api/v1/search').set(auth('stale-token'))).status).toBe(200);
  });
});

describe('two-factor', () => {
  beforeAll(async () => {
    await h.composed.admin.createUser({ username: 'tfa', password: 'tfa-password', phone: '+1 555 123 7890' });
  });

  it('login without or with a wrong code answers 406 with the delivery methods', async () => {
    const res = await api().post('/api/v1/authenticate').send({ user: { login: 'tfa', password: 'tfa-password' }, two_factor: { code: null } });
    expect(res.status).toBe(406);
    expect(res.body).toEqual({
      two_factor: { default_delivery_method: 'sms', delivery_methods: ['sms'] },
      errors: ['Two factor authentication is enabled; a two_factor code is required'],
      success: false,
    });
    const wrong = await api().post('/api/v1/authenticate').send({ user: { login: 'tfa', password: 'tfa-password' }, two_factor: { code: '000000' } });
    expect(wrong.status).toBe(406);
    expect(wrong.body.errors).toEqual(['Invalid two factor code']);
  });

  it('sends a code through the outbox; it works once and expires', async () => {
    const res = await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'sms' }, user: { login: 'tfa', password: 'tfa-password' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ two_factor: { obfuscated_destination: 'SMS number ending in 7890' } });
    const outbox = await h.composed.admin.outbox('tfa');
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ deliveryMethod: 'sms', destination: '+1 555 123 7890' });
    const code = /(\d{6})/.exec(outbox[0]!.message)?.[1] as string;
    const ok = await api().post('/api/v1/authenticate').send({ user: { login: 'tfa', password: 'tfa-password' }, two_factor: { code } });
    expect(ok.status).toBe(200);
    expect(ok.body.token).toMatch(/atlasv1/);
    // Single use.
    expect((await api().post('/api/v1/authenticate').send({ user: { login: 'tfa', password: 'tfa-password' }, two_factor: { code } })).status).toBe(406);

    await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'sms' }, user: { login: 'tfa', password: 'tfa-password' } }).expect(200);
    const late = /(\d{6})/.exec((await h.composed.admin.outbox('tfa'))[1]!.message)?.[1] as string;
    h.clock.now = new Date(h.clock.now.getTime() + 6 * 60_000);
    try {
      expect((await api().post('/api/v1/authenticate').send({ user: { login: 'tfa', password: 'tfa-password' }, two_factor: { code: late } })).status).toBe(406);
    } finally {
      h.clock.now = new Date();
    }
  });

  it('refuses bad requests and rate-limits code requests per account (429)', async () => {
    expectBoxesError(await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'carrier-pigeon' }, user: { login: 'tfa', password: 'tfa-password' } }), 403, /only "sms"/);
    expectBoxesError(await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'sms' }, user: { login: 'tfa', password: 'nope' } }), 401, /Invalid login/);
    expectBoxesError(await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'sms' }, user: { login: 'dora', password: 'dora-password' } }), 403, /not enabled/);
    // Two requests already made above; the third is allowed, the fourth refused (3 per 10 min).
    await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'sms' }, user: { login: 'tfa', password: 'tfa-password' } }).expect(200);
    const limited = await api().post('/api/v1/two-factor/request-code').send({ two_factor: { delivery_method: 'sms' }, user: { login: 'tfa', password: 'tfa-password' } });
    expectBoxesError(limited, 429, /Rate limit exceeded/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the webhook sender POSTs the message and maps failures to 503', async () => {
    const received: unknown[] = [];
    let answer = 204;
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ auth: req.headers.authorization, body: JSON.parse(body) as unknown });
        res.statusCode = answer;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const sender = createWebhookSender({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`, bearerToken: 'hook-secret', logger: createLogger({ service: 't', silent: true }) });
      const expiresAt = new Date('2030-01-01T00:00:00.000Z');
      await sender.send({ accountId: 'a', username: 'u', deliveryMethod: 'sms', destination: '+15550001111', code: '123456', message: 'code 123456', expiresAt });
      expect(received).toEqual([{ auth: 'Bearer hook-secret', body: { delivery_method: 'sms', destination: '+15550001111', message: 'code 123456', code: '123456', username: 'u', expires_at: '2030-01-01T00:00:00.000Z' } }]);
      answer = 500;
      await expect(sender.send({ accountId: 'a', username: 'u', deliveryMethod: 'sms', destination: '1', code: '1', message: 'm', expiresAt })).rejects.toMatchObject({ status: 503 });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('rate limits, maintenance and billing', () => {
  it('limits login attempts per login name with 429 and Retry-After (Redis-backed)', async () => {
    const strict = await createHarness({ rateLimits: { login: { limit: 2, windowMs: 60_000 } } });
    try {
      await strict.composed.admin.createUser({ username: 'eve', password: 'eve-password' });
      for (let i = 0; i < 2; i++) expect((await request(strict.app).post('/api/v1/authenticate').send({ user: { login: 'eve', password: 'x' } })).status).toBe(401);
      const res = await request(strict.app).post('/api/v1/authenticate').send({ user: { login: 'eve', password: 'eve-password' } });
      expectBoxesError(res, 429, /Rate limit exceeded/);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      const keys = await strict.redis.keys(`${strict.redisPrefix}rl:login:*`);
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      await strict.close();
    }
  });

  it('limits all API requests per client', async () => {
    const strict = await createHarness({ rateLimits: { api: { limit: 3, windowMs: 60_000 } } });
    try {
      for (let i = 0; i < 3; i++) expect((await request(strict.app).get('/api/v1/search')).status).toBe(200);
      expectBoxesError(await request(strict.app).get('/api/v1/search'), 429, /Rate limit/);
      expectBoxesError(await request(strict.app).get('/someone/box'), 429, /Rate limit/);
      // Health checks are not rate limited.
      expect((await request(strict.app).get('/healthz')).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('answers 503 everywhere in maintenance mode, except health checks', async () => {
    await h.composed.admin.setMaintenance(true, 'Upgrading storage');
    try {
      const res = await api().get('/api/v1/search');
      expectBoxesError(res, 503, /Upgrading storage/);
      expect(res.headers['retry-after']).toBe('60');
      expectBoxesError(await api().get('/dora/box'), 503, /Upgrading/);
      expectBoxesError(await api().put('/api/v1/uploads/x').send('x'), 503, /Upgrading/);
      expect((await api().get('/healthz')).status).toBe(200);
    } finally {
      await h.composed.admin.setMaintenance(false);
    }
    expect((await api().get('/api/v1/search')).status).toBe(200);
  });

  it('answers 402 for writes and private reads of a delinquent account, public reads continue', async () => {
    const owner = await userWithToken(h, 'payer');
    await api().post('/api/v1/boxes').set(auth(owner)).send({ box: { name: 'public', is_private: false } }).expect(201);
    await api().post('/api/v1/boxes').set(auth(owner)).send({ box: { name: 'private' } }).expect(201);
    await h.composed.admin.setBilling('payer', 'delinquent');
    expectBoxesError(await api().post('/api/v1/boxes').set(auth(owner)).send({ box: { name: 'more' } }), 402, /delinquent on billing/);
    expectBoxesError(await api().put('/api/v1/box/payer/public').set(auth(owner)).send({ short_description: 'x' }), 402, /delinquent/);
    expectBoxesError(await api().get('/api/v1/box/payer/private').set(auth(owner)), 402, /delinquent/);
    expect((await api().get('/api/v1/box/payer/public')).status).toBe(200);
    await h.composed.admin.setBilling('payer', 'ok');
    expect((await api().get('/api/v1/box/payer/private').set(auth(owner))).status).toBe(200);
  });
});
