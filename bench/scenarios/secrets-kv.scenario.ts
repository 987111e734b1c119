// Issue 3, item 9: KV v2 read and write through the whole secrets service (Express app
// from buildApp, the production listener with LIST support, token + ACL + barrier
// decryption, PostgreSQL) at the run's connection count (32 by default), reported as
// ratios to the same-run bare node:http server.
import { randomBytes, randomInt } from 'node:crypto';
import { createMemoryBus } from '@selfstack/bus';
import { createPrismaClient } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { buildApp } from '../../services/secrets/src/app';
import { createEntryPool } from '../../services/secrets/src/features/barrier/barrier.store';
import { defaultListener, envSchema } from '../../services/secrets/src/config';
import { createSecretsServices } from '../../services/secrets/src/services';
import type { HttpRequestSpec, Scenario, ScenarioContext, ScenarioInstance } from '../scenario';
import { createBenchDatabase } from '../bench-database';

const WRITE_KEYS = 64;



interface Running {
  url: string;
  token: string;
  teardown(): Promise<void>;
}

async function startSecrets(ctx: ScenarioContext): Promise<Running> {
  const db = await createBenchDatabase(ctx.databaseUrl, 'secrets');
  const { name, url } = db;
  const prisma = createPrismaClient({ url, poolSize: 2 });
  // As main.ts does, with its default size: the pool's 'error' listener keeps an idle
  // connection ended by the database (teardown's DROP DATABASE ... WITH (FORCE)) from
  // crashing the bench process.
  const defaults = envSchema.parse({});
  const pool = createEntryPool({ url, max: defaults.SECRETS_DB_POOL });
  const bus = createMemoryBus();
  const services = createSecretsServices({ prisma, pool, bus });
  await services.start();
  const init = await services.sys.initialize(1, 1);
  await services.sys.unseal(init.keys[0] as string, false);
  const mount = services.mounts.match('secret/data/x');
  if (!mount) throw new Error('secret/ is not mounted');
  const prefix = `logical/${mount.uuid}/`;
  await services.kv.write(prefix, 'bench/read', { username: 'app', password: randomBytes(16).toString('hex'), port: 5432 }, undefined);
  // Silent: requests cut off when the run ends would log noise over the result table.
  const logger = createLogger({ service: 'secrets-bench', silent: true });
  const app = buildApp({ services, logger, listener: defaultListener(defaults), requestLog: false });
  const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
  ctx.log(`secrets service on ${listener.url} (database ${name})`);
  return {
    url: listener.url,
    token: init.root_token,
    async teardown() {
      await listener.close();
      await bus.close();
      await pool.end();
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

async function readScenario(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const s = await startSecrets(ctx);
  return {
    target: { kind: 'http', url: s.url, requests: [{ method: 'GET', path: '/v1/secret/data/bench/read', headers: { 'X-Vault-Token': s.token } }] },
    teardown: s.teardown,
  };
}

async function writeScenario(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const s = await startSecrets(ctx);
  // Each request writes a random one of 64 keys, as vault-benchmark's kvv2_write does
  // (numkvs): a new version (pruned at 10) per request. (A fixed list of 64 requests would
  // be sent in the same order by every autocannon connection, so all 32 would start on the
  // same key and stay bunched: ~20 % lost optimistic races, a workload no client sends.)
  const requests: HttpRequestSpec[] = [
    {
      method: 'POST',
      path: '/v1/secret/data/bench/write-0',
      pathFor: () => `/v1/secret/data/bench/write-${randomInt(WRITE_KEYS)}`,
      headers: { 'X-Vault-Token': s.token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { foo: randomBytes(32).toString('hex') } }),
    },
  ];
  return { target: { kind: 'http', url: s.url, requests }, teardown: s.teardown };
}

export const scenarios: Scenario[] = [
  {
    name: 'secrets-kv2-read',
    description: 'secrets: GET /v1/secret/data/<key> (token, ACL, barrier decrypt, Postgres), KV v2',
    baseline: 'node-http',
    setup: readScenario,
  },
  {
    name: 'secrets-kv2-write',
    description: 'secrets: POST /v1/secret/data/<key>, a random one of 64 keys per request (new version per request: optimistic conditional write)',
    baseline: 'node-http',
    setup: writeScenario,
  },
];
