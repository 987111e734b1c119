// Issue 3, item 9: KV v2 read and write through the whole secrets service (Express app
// from buildApp, the production listener with LIST support, token + ACL + barrier
// decryption, the physical cache, PostgreSQL, the Redis bus when REDIS_URL is set, the
// request log at the run's level as make dev runs it) at the
// run's connection count (32 by default), reported as ratios to the same-run bare
// node:http server. Reads pick a random one of 1,000 keys per request (as vault-benchmark's
// kvv2_read does), once with the physical cache as deployed and once with it disabled
// (SECRETS_CACHE_MB=0: every read is a Postgres round trip). `secrets-kv2-read-floor` is
// a bare node:http server answering every request with the bytes of one such read (its
// status, headers and body, sampled from the service): what the kernel and node:http cost
// for that response, without any of the service, next to the baseline's small body.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createMemoryBus, createRedisBus } from '@selfstack/bus';
import { createPrismaClient } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { buildApp } from '../../services/secrets/src/app';
import { createEntryPool } from '../../services/secrets/src/features/barrier/barrier.store';
import { defaultListener, entryCacheOptions, envSchema } from '../../services/secrets/src/config';
import { createSecretsServices, startOneShareInstall } from '../../services/secrets/src/services';
import type { HttpRequestSpec, Scenario, ScenarioContext, ScenarioInstance } from '../scenario';
import { createBenchDatabase } from '../bench-database';
import { sampleResponse } from '../baselines';
import { serviceLogger } from '../service-logger';

const WRITE_KEYS = 64;
const READ_KEYS = 1000;



interface Running {
  url: string;
  token: string;
  teardown(): Promise<void>;
}

async function startSecrets(ctx: ScenarioContext, options: { cache: boolean; readKeys: number }): Promise<Running> {
  const db = await createBenchDatabase(ctx.databaseUrl, 'secrets');
  const { name, url } = db;
  const prisma = createPrismaClient({ url, poolSize: 2 });
  // As main.ts does, with its default size: the pool's 'error' listener keeps an idle
  // connection ended by the database (teardown's DROP DATABASE ... WITH (FORCE)) from
  // crashing the bench process.
  const defaults = envSchema.parse({});
  const pool = createEntryPool({ url, max: defaults.SECRETS_DB_POOL });
  // Redis as deployed when REDIS_URL is set (make bench sets it): writes publish the
  // physical cache's invalidations there. The cache as configured by default.
  const redisUrl = process.env['REDIS_URL'];
  const bus = redisUrl
    ? createRedisBus({ url: redisUrl, prefix: `bench:${name}:`, logger: createLogger({ service: 'secrets-bench', level: 'error' }) })
    : createMemoryBus();
  const cache = entryCacheOptions(options.cache ? defaults : { ...defaults, SECRETS_CACHE_MB: 0 });
  ctx.log(`secrets: bus ${redisUrl ? 'Redis' : 'in memory'}, physical cache ${options.cache ? `${defaults.SECRETS_CACHE_MB} MiB` : 'disabled'}`);
  const services = createSecretsServices({ prisma, pool, bus, cache });
  const { rootToken, secretPrefix: prefix } = await startOneShareInstall(services);
  for (let i = 0; i < options.readKeys; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, options.readKeys - i) }, (_, j) =>
        services.kv.write(prefix, `bench/read-${i + j}`, { username: 'app', password: randomBytes(16).toString('hex'), port: 5432 }, undefined),
      ),
    );
  }
  // As make dev runs it: the request log at the run's level (issue 30, item 2).
  const app = buildApp({ services, logger: serviceLogger(ctx, 'secrets'), listener: defaultListener(defaults) });
  const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
  ctx.log(`secrets service on ${listener.url} (database ${name})`);
  return {
    url: listener.url,
    token: rootToken,
    async teardown() {
      await listener.close();
      services.stop();
      await bus.close();
      await pool.end();
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

function readScenario(cache: boolean) {
  return async (ctx: ScenarioContext): Promise<ScenarioInstance> => {
    const s = await startSecrets(ctx, { cache, readKeys: READ_KEYS });
    // A random key per request, independently on every connection (a fixed list would be
    // walked in the same order by all 32 connections: each key read in a burst of 32, then
    // not for seconds, which no client does and which defeats any cache).
    const requests: HttpRequestSpec[] = [{ method: 'GET', path: '/v1/secret/data/bench/read-{key}', keys: READ_KEYS, headers: { 'X-Vault-Token': s.token } }];
    return { target: { kind: 'http', url: s.url, requests }, teardown: s.teardown };
  };
}

async function readFloor(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const s = await startSecrets(ctx, { cache: true, readKeys: 1 });
  let one;
  try {
    one = await sampleResponse(`${s.url}/v1/secret/data/bench/read-0`, { 'X-Vault-Token': s.token });
  } finally {
    await s.teardown();
  }
  if (one.status !== 200) throw new Error(`sampling a read answered ${one.status}`);
  const r = one;
  const headerBytes = r.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  ctx.log(`secrets-kv2-read-floor: replaying a KV v2 read: ${r.headers.length} headers (~${headerBytes} bytes) and a ${r.body.length}-byte body`);
  const server = http.createServer((req, res) => {
    req.resume();
    res.statusCode = r.status;
    for (const [k, v] of r.headers) res.setHeader(k, v);
    res.setHeader('Content-Length', r.body.length);
    res.end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    target: { kind: 'http', url: `http://127.0.0.1:${port}/v1/secret/data/bench/read-0` },
    teardown: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function writeScenario(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const s = await startSecrets(ctx, { cache: true, readKeys: 0 });
  // Each request writes a random one of 64 keys, as vault-benchmark's kvv2_write does
  // (numkvs): a new version (pruned at 10) per request. (A fixed list of 64 requests would
  // be sent in the same order by every autocannon connection, so all 32 would start on the
  // same key and stay bunched: ~20 % lost optimistic races, a workload no client sends.)
  const requests: HttpRequestSpec[] = [
    {
      method: 'POST',
      path: '/v1/secret/data/bench/write-{key}',
      keys: WRITE_KEYS,
      headers: { 'X-Vault-Token': s.token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { foo: randomBytes(32).toString('hex') } }),
    },
  ];
  return { target: { kind: 'http', url: s.url, requests }, teardown: s.teardown };
}

export const scenarios: Scenario[] = [
  {
    name: 'secrets-kv2-read',
    description: `secrets: GET /v1/secret/data/<key>, a random one of ${READ_KEYS} keys (token, ACL, physical cache, barrier decrypt), KV v2`,
    baseline: 'node-http',
    setup: readScenario(true),
  },
  {
    name: 'secrets-kv2-read-floor',
    description: 'a bare node:http server answering with the bytes of one KV v2 read (same status, headers and body): the floor under secrets-kv2-read',
    baseline: 'node-http',
    setup: readFloor,
  },
  {
    name: 'secrets-kv2-read-uncached',
    description: `secrets: the same reads with the physical cache disabled (SECRETS_CACHE_MB=0: one Postgres round trip each)`,
    baseline: 'node-http',
    setup: readScenario(false),
  },
  {
    name: 'secrets-kv2-write',
    description: 'secrets: POST /v1/secret/data/<key>, a random one of 64 keys per request (new version per request: optimistic conditional write)',
    baseline: 'node-http',
    setup: writeScenario,
  },
];
