import { TooManyRequestsError, ServiceUnavailableError } from '@selfstack/errors';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { errorMiddleware } from '@selfstack/errors';
import { createLogger } from '@selfstack/logger';
import {
  createLoadShedder,
  createMaintenanceGate,
  createMemoryRateLimiter,
  createRedisRateLimiter,
  enforceRateLimit,
  guardMiddleware,
  parseMaintenance,
  serializeMaintenance,
} from '../src/guards';

describe('memory rate limiter', () => {
  it('allows `limit` hits per window, then 429 with Retry-After, then resets', async () => {
    let t = 1_000_000;
    const limiter = createMemoryRateLimiter({ rules: { login: { limit: 2, windowMs: 10_000 } }, now: () => t });
    await enforceRateLimit(limiter, 'login', 'alice');
    await enforceRateLimit(limiter, 'login', 'alice');
    await enforceRateLimit(limiter, 'login', 'bob');
    t += 2500;
    const err = await enforceRateLimit(limiter, 'login', 'alice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooManyRequestsError);
    expect((err as TooManyRequestsError).headers).toEqual({ 'Retry-After': '8', 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0' });
    t += 7500;
    await expect(enforceRateLimit(limiter, 'login', 'alice')).resolves.toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('maintenance gate', () => {
  it('parses the stored flag', () => {
    expect(parseMaintenance(null)).toEqual({ enabled: false, message: '' });
    expect(parseMaintenance('{"message":"upgrading"}')).toEqual({ enabled: true, message: 'upgrading' });
    expect(parseMaintenance('garbage')).toEqual({ enabled: true, message: '' });
    expect(parseMaintenance(serializeMaintenance(true, 'x'))).toEqual({ enabled: true, message: 'x' });
    expect(serializeMaintenance(false, 'x')).toBeNull();
  });

  it('caches reads for cacheMs and throws 503 while enabled', async () => {
    let t = 0;
    let value: string | null = null;
    let reads = 0;
    const gate = createMaintenanceGate({ read: async () => { reads++; return value; }, cacheMs: 1000, now: () => t });
    await gate.check();
    value = '{"message":"back soon"}';
    await gate.check();
    expect(reads).toBe(1);
    t = 1000;
    const err = await gate.check().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).messages).toEqual(['back soon']);
    expect(reads).toBe(2);
  });
});

describe('redis rate limiter', () => {
  it('uses the counts Redis returns', async () => {
    const calls: string[][] = [];
    const limiter = createRedisRateLimiter({
      redis: { eval: async (_script, _n, ...args) => { calls.push(args); return [3, 4200]; } },
      prefix: 'registry:',
      rules: { api: { limit: 2, windowMs: 60_000 } },
    });
    const err = await enforceRateLimit(limiter, 'api', '10.0.0.1').catch((e: unknown) => e);
    expect(calls).toEqual([['registry:rl:api:10.0.0.1', '60000']]);
    expect((err as TooManyRequestsError).status).toBe(429);
    expect((err as TooManyRequestsError).headers).toEqual({ 'Retry-After': '5', 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0' });
  });

  it('counts in memory while Redis fails or does not answer, and returns to Redis after', async () => {
    let mode: 'down' | 'hang' | 'up' = 'down';
    const limiter = createRedisRateLimiter({
      redis: {
        eval: () =>
          mode === 'down' ? Promise.reject(new Error('Connection is closed.')) : mode === 'hang' ? new Promise<never>(() => undefined) : Promise.resolve([1, 1000]),
      },
      prefix: 'p:',
      rules: { api: { limit: 2, windowMs: 60_000 } },
      timeoutMs: 20,
    });
    await expect(limiter.hit('api', 'a')).resolves.toMatchObject({ allowed: true, remaining: 1 });
    mode = 'hang';
    await expect(limiter.hit('api', 'a')).resolves.toMatchObject({ allowed: true, remaining: 0 });
    await expect(limiter.hit('api', 'a')).resolves.toMatchObject({ allowed: false });
    mode = 'up';
    await expect(limiter.hit('api', 'a')).resolves.toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: 1000 });
  });
});

describe('guardMiddleware over HTTP', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  async function serve(app: express.Express): Promise<string> {
    server = createServer(app);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('answers 503 in maintenance (except exempt paths), 503 when overloaded, 429 over the limit', async () => {
    let flag: string | null = null;
    const maintenance = createMaintenanceGate({ read: async () => flag, cacheMs: 0 });
    const shedder = createLoadShedder({ maxInFlight: 1, retryAfterSeconds: 2 });
    const limiter = createMemoryRateLimiter({ rules: { api: { limit: 2, windowMs: 60_000 } } });
    let release: (() => void) | undefined;
    const app = express();
    app.use(guardMiddleware({ maintenance, maintenanceExempt: (req) => req.path.startsWith('/admin'), shedder, rateLimit: { limiter, bucket: 'api' } }));
    app.get('/slow', (_req, res) => {
      release = () => res.json({ ok: true });
    });
    app.get(['/fast', '/admin'], (_req, res) => res.json({ ok: true }));
    app.use(errorMiddleware({ flavour: 'registry', logger: createLogger({ service: 't', silent: true }) }));
    const base = await serve(app);

    flag = serializeMaintenance(true, 'upgrading');
    const m = await fetch(`${base}/fast`);
    expect(m.status).toBe(503);
    expect(m.headers.get('retry-after')).toBe('60');
    expect(await m.json()).toEqual({ errors: ['upgrading'] });
    expect((await fetch(`${base}/admin`)).status).toBe(200);
    flag = null;

    const slow = fetch(`${base}/slow`);
    while (shedder.inFlight() === 0) await new Promise((r) => setTimeout(r, 5));
    const shed = await fetch(`${base}/fast`);
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('2');
    expect(await shed.json()).toEqual({ errors: ['The service is overloaded; retry after a delay'] });
    release!();
    expect((await slow).status).toBe(200);
    while (shedder.inFlight() !== 0) await new Promise((r) => setTimeout(r, 5));

    // /admin and /slow used the two hits of the window.
    const limited = await fetch(`${base}/fast`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('2');
    expect(await limited.json()).toEqual({ errors: ['Rate limit exceeded; decrease the frequency of requests'] });
  });
});
