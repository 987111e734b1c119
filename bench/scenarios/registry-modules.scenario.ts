// Issue 6, item 7 and issue 30: the module registry's list, versions, download and search
// endpoints over 5,000 modules x 20 versions (100,000 version rows, each with a realistic
// analysis document), through the whole service as `make dev` runs it (buildApp +
// composeRegistry, the production listener, Prisma and the read pool over PostgreSQL, the request log at the
// run's level), reported against the same-run bare node:http server.
//
// Seeding uses set-based SQL (registry-seed.ts): ~15 s per scenario on a quiet machine.
// REGISTRY_BENCH_MODULES / REGISTRY_BENCH_VERSIONS shrink it for a quick look.
import { randomBytes } from 'node:crypto';
import { createFsBlobStore } from '@selfstack/blob';
import { createPrismaClient } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { buildApp } from '../../services/registry/src/app';
import { composeRegistry } from '../../services/registry/src/compose';
import { createRegistryReadPool } from '../../services/registry/src/features/modules/modules.store';
import type { HttpRequestSpec, Scenario, ScenarioContext, ScenarioInstance } from '../scenario';
import { seedRegistry } from './registry-seed';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';
import { serviceLogger } from '../service-logger';

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
  const readPool = createRegistryReadPool(url);
  const logger = serviceLogger(ctx, 'registry');
  const app = buildApp({
    ...composeRegistry(
      { prisma, readPool, blobs: createFsBlobStore({ root: `/tmp/${name}` }), logger },
      {
        publicReads: true,
        publicArchives: false,
        signingKey: randomBytes(32).toString('hex'),
        adminToken: undefined,
        archiveUrlTtlSeconds: 300,
        maxArchiveBytes: 20 << 20,
        maxUnpackedBytes: 200 << 20,
        maxArchiveEntries: 10_000,
        // One client address sends every request: the limit must not be what is measured.
        rateLimitPerMinute: 1e9,
      },
    ),
  });
  const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
  return {
    target: { kind: 'http', url: listener.url, requests: requests(modules) },
    async teardown() {
      await listener.close();
      await readPool.end();
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

// The first pages of the list, all and by provider, as a registry UI pages through it.
function listRequests(): HttpRequestSpec[] {
  return ['', '?offset=15', '?offset=150', '?provider=aws', '?provider=google&offset=30', '?limit=50'].map((q) => ({ method: 'GET', path: `/v1/modules${q}` }));
}

// `terraform init` resolving a version: 204 with X-Terraform-Get (signed), one download recorded.
function downloadRequests(modules: number): HttpRequestSpec[] {
  return Array.from({ length: 200 }, (_, i) => {
    const g = (i * 24 + 7) % modules;
    return { method: 'GET', path: `/v1/modules/bench-ns${Math.floor(g / 100)}/mod${g}/${PROVIDERS[g % PROVIDERS.length]}/1.${i % 20}.0/download` };
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
    name: 'registry-list',
    description: 'GET /v1/modules[?offset=&provider=] (the first pages of the list) over 5,000 modules',
    baseline: 'node-http',
    setup: (ctx) => startRegistry(ctx, () => listRequests()),
  },
  {
    name: 'registry-versions',
    description: 'GET /v1/modules/:ns/:name/:provider/versions, 200 modules of 5,000 x 20 versions',
    baseline: 'node-http',
    setup: (ctx) => startRegistry(ctx, versionRequests),
  },
  {
    name: 'registry-download',
    description: 'GET /v1/modules/:ns/:name/:provider/:version/download (204 + signed X-Terraform-Get, a download recorded), 200 modules',
    baseline: 'node-http',
    setup: (ctx) => startRegistry(ctx, downloadRequests),
  },
  {
    name: 'registry-search',
    description: 'GET /v1/modules/search?q=... (Postgres full text, GIN) over 5,000 modules',
    baseline: 'node-http',
    setup: (ctx) => startRegistry(ctx, () => searchRequests()),
  },
];
