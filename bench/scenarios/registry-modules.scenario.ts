// Issue 6, item 7: the module registry's versions and search endpoints over 5,000
// modules x 20 versions (100,000 version rows, each with a realistic analysis document),
// through the whole service (buildApp + composeRegistry, the production listener,
// Prisma over PostgreSQL), reported against the same-run Postgres point read.
//
// Seeding uses set-based SQL (registry-seed.ts): ~15 s per scenario on a quiet machine.
// REGISTRY_BENCH_MODULES / REGISTRY_BENCH_VERSIONS shrink it for a quick look.
import { randomBytes } from 'node:crypto';
import { createFsBlobStore } from '@selfstack/blob';
import { createPrismaClient } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { buildApp } from '../../services/registry/src/app';
import { composeRegistry } from '../../services/registry/src/compose';
import type { HttpRequestSpec, Scenario, ScenarioContext, ScenarioInstance } from '../scenario';
import { seedRegistry } from './registry-seed';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';

const PROVIDERS = ['aws', 'google', 'azurerm', 'kubernetes'];




async function startRegistry(ctx: ScenarioContext, requests: (modules: number) => HttpRequestSpec[]): Promise<ScenarioInstance> {
  const modules = sizeFromEnv('REGISTRY_BENCH_MODULES', 5000);
  const versions = sizeFromEnv('REGISTRY_BENCH_VERSIONS', 20);
  const db = await createBenchDatabase(ctx.databaseUrl, 'registry');
  const { name, url } = db;
  try {
    const seeded = await seedRegistry({ databaseUrl: url, modules, versionsPerModule: versions });
    ctx.log(`registry: seeded ${seeded.modules} modules x ${versions} versions in ${seeded.ms} ms (database ${name})`);
  } catch (err) {
    await db.drop();
    throw err;
  }
  const prisma = createPrismaClient({ url, poolSize: 16 });
  const logger = createLogger({ service: 'registry-bench', level: 'error' });
  const app = buildApp({
    ...composeRegistry(
      { prisma, blobs: createFsBlobStore({ root: `/tmp/${name}` }), logger },
      {
        publicReads: true,
        publicArchives: false,
        signingKey: randomBytes(32).toString('hex'),
        adminToken: undefined,
        archiveUrlTtlSeconds: 300,
        maxArchiveBytes: 20 << 20,
        maxUnpackedBytes: 200 << 20,
        maxArchiveEntries: 10_000,
      },
    ),
    requestLog: false,
  });
  const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
  return {
    target: { kind: 'http', url: listener.url, requests: requests(modules) },
    async teardown() {
      await listener.close();
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

// 200 different modules spread over the data set (what many `terraform init`s ask).
function versionRequests(modules: number): HttpRequestSpec[] {
  return Array.from({ length: 200 }, (_, i) => {
    const g = (i * 24 + 7) % modules;
    return { method: 'GET', path: `/v1/modules/bench-ns${Math.floor(g / 100)}/mod${g}/${PROVIDERS[g % PROVIDERS.length]}/versions` };
  });
}

// Keywords with many and few hits, a two-word query, a phrase and a name.
function searchRequests(): HttpRequestSpec[] {
  return ['network', 'storage%20bucket', '%22cluster%20and%20queue%22', 'mod2500', 'dns', 'secrets%20identity&provider=aws', 'gateway&limit=50'].map((q) => ({
    method: 'GET',
    path: `/v1/modules/search?q=${q}`,
  }));
}

export const scenarios: Scenario[] = [
  {
    name: 'registry-versions',
    description: 'GET /v1/modules/:ns/:name/:provider/versions, 200 modules of 5,000 x 20 versions',
    baseline: 'pg-point-read',
    setup: (ctx) => startRegistry(ctx, versionRequests),
  },
  {
    name: 'registry-search',
    description: 'GET /v1/modules/search?q=... (Postgres full text, GIN) over 5,000 modules',
    baseline: 'pg-point-read',
    setup: (ctx) => startRegistry(ctx, () => searchRequests()),
  },
];
