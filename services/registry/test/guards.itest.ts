// Rate limits (429 with Retry-After), maintenance mode and load shedding (503) of the
// registry (spec "Errors"; docs/registry.md "Rate limits and maintenance"): the kit's
// guards (libs/http-kit guards.ts) shared with the box-hosting service.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createLogger } from '@selfstack/logger';
import { testRedisUrl } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { composeRegistry } from '../src/compose';
import { ADMIN_TOKEN, bearer, DEFAULT_SETTINGS, startRegistry, type Registry } from './registry-harness';

const RATE_MESSAGE = { errors: ['Rate limit exceeded; decrease the frequency of requests'] };

describe('registry rate limits', () => {
  let reg: Registry;
  beforeAll(async () => {
    reg = await startRegistry({ rateLimitPerMinute: 3 });
  });
  afterAll(() => reg.close());

  it('answers 429 with Retry-After in the registry error shape once a client exceeds its limit, on every route', async () => {
    for (let i = 0; i < 3; i++) {
      const ok = await request(reg.app).get('/v1/modules');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBeUndefined();
    }
    for (const path of ['/v1/modules', '/.well-known/terraform.json', '/v1/admin/namespaces']) {
      const res = await request(reg.app).get(path).set(bearer(ADMIN_TOKEN));
      expect(res.status).toBe(429);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      expect(res.body).toEqual(RATE_MESSAGE);
    }
    // Health endpoints come before the guards: an orchestrator's probes are never limited.
    expect((await request(reg.app).get('/healthz')).status).toBe(200);
  });

  it('counts per client address (trust proxy on: X-Forwarded-For)', async () => {
    const proxied = await startRegistry({ rateLimitPerMinute: 1, trustProxy: true }, { db: reg.db, prisma: reg.prisma, readPool: reg.readPool, blobRoot: reg.blobRoot });
    expect((await request(proxied.app).get('/v1/modules').set('X-Forwarded-For', '192.0.2.1')).status).toBe(200);
    expect((await request(proxied.app).get('/v1/modules').set('X-Forwarded-For', '192.0.2.1')).status).toBe(429);
    expect((await request(proxied.app).get('/v1/modules').set('X-Forwarded-For', '192.0.2.2')).status).toBe(200);
  });
});

describe('registry rate limits in Redis', () => {
  let reg: Registry;
  let redis: Redis;
  const prefix = `test-registry-${randomUUID()}:`;
  beforeAll(async () => {
    reg = await startRegistry();
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await reg.close();
  });

  it('shares one window between replicas', async () => {
    const logger = createLogger({ service: 'registry', silent: true });
    const replica = () => buildApp(composeRegistry({ prisma: reg.prisma, readPool: reg.readPool, blobs: reg.blobs, logger, redis, redisPrefix: prefix }, { ...DEFAULT_SETTINGS, rateLimitPerMinute: 4 }));
    const a = replica();
    const b = replica();
    for (const app of [a, b, a, b]) expect((await request(app).get('/v1/modules')).status).toBe(200);
    const res = await request(a).get('/v1/modules');
    expect(res.status).toBe(429);
    expect(res.body).toEqual(RATE_MESSAGE);
    const keys = await redis.keys(`${prefix}rl:api:*`);
    expect(keys).toHaveLength(1);
    expect(await redis.get(keys[0]!)).toBe('5');
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
  });
});

describe('registry maintenance mode', () => {
  let reg: Registry;
  let replica: Registry;
  beforeAll(async () => {
    reg = await startRegistry({ maintenanceCheckMs: 0 });
    replica = await startRegistry({ maintenanceCheckMs: 0 }, { db: reg.db, prisma: reg.prisma, readPool: reg.readPool, blobRoot: reg.blobRoot });
  });
  afterAll(() => reg.close());

  it('is switched by the admin API and answers 503 with Retry-After on every other route of every replica', async () => {
    expect((await request(reg.app).get('/v1/admin/maintenance').set(bearer(ADMIN_TOKEN))).body).toEqual({ enabled: false, message: '' });

    const on = await request(reg.app).put('/v1/admin/maintenance').set(bearer(ADMIN_TOKEN)).send({ enabled: true, message: 'upgrading the database' });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ enabled: true, message: 'upgrading the database' });

    for (const path of ['/v1/modules', '/.well-known/terraform.json', '/v1/modules/acme/vpc/aws/versions']) {
      const res = await request(replica.app).get(path);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ errors: ['upgrading the database'] });
    }
    // The admin API stays reachable (it is how maintenance ends); it still needs the token.
    expect((await request(replica.app).get('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN))).status).toBe(200);
    expect((await request(replica.app).get('/v1/admin/maintenance')).status).toBe(401);
    expect((await request(replica.app).get('/healthz')).status).toBe(200);

    const off = await request(replica.app).put('/v1/admin/maintenance').set(bearer(ADMIN_TOKEN)).send({ enabled: false });
    expect(off.body).toEqual({ enabled: false, message: '' });
    expect((await request(reg.app).get('/v1/modules')).status).toBe(200);
  });

  it('refuses a bad switch with a 400 and changes nothing', async () => {
    const res = await request(reg.app).put('/v1/admin/maintenance').set(bearer(ADMIN_TOKEN)).send({ enabled: 'yes' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.stringContaining('enabled')]);
    const unknown = await request(reg.app).put('/v1/admin/maintenance').set(bearer(ADMIN_TOKEN)).send({ enabled: true, mesage: 'typo' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ errors: ['unknown field "mesage"'] });
    expect((await request(reg.app).get('/v1/modules')).status).toBe(200);
  });
});

describe('registry load shedding', () => {
  let reg: Registry;
  let server: Server;
  let base: { host: string; port: number };
  beforeAll(async () => {
    reg = await startRegistry({ maxInFlight: 1 });
    server = createServer(reg.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await reg.close();
  });

  it('answers 503 with Retry-After while maxInFlight requests are being served, and serves again after', async () => {
    // An upload whose body never finishes keeps one request in flight.
    const slow = httpRequest({ ...base, method: 'POST', path: '/v1/modules/acme/vpc/aws/1.0.0', headers: { ...bearer(ADMIN_TOKEN), 'Content-Type': 'application/octet-stream', 'Content-Length': '100000' } });
    slow.on('error', () => undefined);
    slow.write(Buffer.alloc(10));
    const url = `http://${base.host}:${base.port}/v1/modules`;
    let shed: Response | undefined;
    for (let i = 0; i < 200 && !shed; i++) {
      const res = await fetch(url);
      if (res.status === 503) shed = res;
      else await new Promise((r) => setTimeout(r, 10));
    }
    expect(shed?.status).toBe(503);
    expect(shed?.headers.get('retry-after')).toBe('1');
    expect(await shed?.json()).toEqual({ errors: ['The service is overloaded; retry after a delay'] });

    slow.destroy();
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      status = (await fetch(url)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 10));
    }
    expect(status).toBe(200);
  });
});
