// Integration-test harness: a real Postgres database cloned from the migrated template,
// a Redis bus with a per-file prefix, the real service graph and app.
import type { Express } from 'express';
import type { Pool } from 'pg';
import request from 'supertest';
import { createRedisBus, type RedisBus } from '@selfstack/bus';
import { createPrismaClient, type PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { createTestDatabase, testRedisPrefix, testRedisUrl, type TestDatabase } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { createEntryPool } from '../src/features/barrier/barrier.store';
import { compileCustomHeaders } from '../src/http/response-headers';
import type { ListenerConfig } from '../src/config';
import { createSecretsServices, type SecretsServices } from '../src/services';

// Shared machine, real databases: allow slow hooks (the project-level testTimeout is not
// applied to every run mode).
jest.setTimeout(60_000);

export const silentLogger = createLogger({ service: 'secrets-test', silent: process.env.SECRETS_TEST_LOG !== '1' });

export function testListenerConfig(overrides: Partial<ListenerConfig> = {}): ListenerConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    maxRequestBytes: 32 * 1024 * 1024,
    customHeaders: compileCustomHeaders(undefined),
    requireRequestHeader: false,
    tls: null,
    ...overrides,
  };
}

export interface Harness {
  db: TestDatabase;
  prisma: PrismaClient;
  bus: RedisBus;
  services: SecretsServices;
  app: Express;
  /** Another replica on the same database and bus (own caches, own seal state). */
  /**
   * Another replica on the same database. `busPrefix` gives it a bus of its own, so it
   * hears nothing the others publish (a replica that missed every message).
   */
  replica(options?: { busPrefix?: string }): Promise<{ services: SecretsServices; app: Express }>;
  close(): Promise<void>;
}

export async function startHarness(listener: Partial<ListenerConfig> = {}, options: { hosted?: boolean } = {}): Promise<Harness> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const prismas: PrismaClient[] = [];
  const buses: RedisBus[] = [];
  const pools: Pool[] = [];
  const all: SecretsServices[] = [];
  const make = async (busPrefix = prefix) => {
    const prisma = createPrismaClient({ url: db.url, poolSize: 2 });
    const pool = createEntryPool({ url: db.url, max: 4 });
    pools.push(pool);
    const bus = createRedisBus({ url: testRedisUrl(), prefix: busPrefix, logger: silentLogger });
    prismas.push(prisma);
    buses.push(bus);
    const services = createSecretsServices({ prisma, pool, bus, hosted: options.hosted });
    all.push(services);
    await services.start();
    const app = buildApp({ services, logger: silentLogger, listener: testListenerConfig(listener), requestLog: false });
    return { prisma, bus, services, app };
  };
  const first = await make();
  return {
    db,
    prisma: first.prisma,
    bus: first.bus,
    services: first.services,
    app: first.app,
    replica: async (options) => {
      const r = await make(options?.busPrefix);
      return { services: r.services, app: r.app };
    },
    async close() {
      for (const s of all) s.stop();
      for (const b of buses) await b.close();
      for (const p of prismas) await p.$disconnect();
      for (const p of pools) await p.end();
      await db.drop();
    },
  };
}

export interface Initialised {
  rootToken: string;
  keys: string[];
  keysBase64: string[];
}

export async function initAndUnseal(app: Express, shares = 1, threshold = 1): Promise<Initialised> {
  const init = await request(app).put('/v1/sys/init').send({ secret_shares: shares, secret_threshold: threshold });
  if (init.status !== 200) throw new Error(`init failed: ${init.status} ${init.text}`);
  const body = init.body as { keys: string[]; keys_base64: string[]; root_token: string };
  for (const key of body.keys.slice(0, threshold)) {
    const r = await request(app).put('/v1/sys/unseal').send({ key });
    if (r.status !== 200) throw new Error(`unseal failed: ${r.status} ${r.text}`);
  }
  return { rootToken: body.root_token, keys: body.keys, keysBase64: body.keys_base64 };
}

export const MULTI_DENIED = '1 error occurred:\n\t* permission denied\n\n';
export const INVALID_TOKEN = '2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n';

/** A harness initialised and unsealed, plus a second replica (same database and bus) unsealed too. */
export async function startUnsealedReplicas(): Promise<{ h: Harness; root: string; other: Express }> {
  const h = await startHarness();
  const init = await initAndUnseal(h.app);
  const replica = await h.replica();
  const unsealed = await request(replica.app).put('/v1/sys/unseal').send({ key: init.keys[0] });
  if (unsealed.status !== 200) throw new Error(`replica unseal failed: ${unsealed.status} ${unsealed.text}`);
  return { h, root: init.rootToken, other: replica.app };
}
