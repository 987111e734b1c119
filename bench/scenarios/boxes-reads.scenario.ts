// Issue 5, item 10: box search over 10,000 boxes and catalog reads, through the whole
// service as `make dev` runs it (composeBoxes + buildApp, the production listener, Prisma
// over PostgreSQL, the request log at the run's level), reported against the same-run bare
// node:http server (issue 30). BOXES_BENCH_BOXES shrinks the data
// set for a quick look. The 1 GiB upload/download with peak RSS is a separate script:
// `npx tsx bench/scenarios/boxes-large-transfer.ts` (not an autocannon scenario).
import { randomBytes } from 'node:crypto';
import { createFsBlobStore } from '@selfstack/blob';
import { createPrismaClient } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { buildApp } from '../../services/boxes/src/app';
import { composeBoxes } from '../../services/boxes/src/compose';
import { createBoxReadPool } from '../../services/boxes/src/features/boxes/box-reads.store';
import type { HttpRequestSpec, Scenario, ScenarioContext, ScenarioInstance } from '../scenario';
import { DISTROS, seedBoxes } from './boxes-seed';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';
import { serviceLogger } from '../service-logger';




const OWNERS = 100;

async function startBoxes(ctx: ScenarioContext, requests: (boxes: number) => HttpRequestSpec[]): Promise<ScenarioInstance> {
  const boxes = sizeFromEnv('BOXES_BENCH_BOXES', 10_000);
  const db = await createBenchDatabase(ctx.databaseUrl, 'boxes');
  const { name, url } = db;
  try {
    const seeded = await seedBoxes({ databaseUrl: url, owners: OWNERS, boxes });
    ctx.log(`boxes: seeded ${boxes} boxes of ${OWNERS} owners in ${seeded.ms} ms (database ${name})`);
  } catch (err) {
    await db.drop();
    throw err;
  }
  const prisma = createPrismaClient({ url, poolSize: 16 });
  const readPool = createBoxReadPool(url);
  const logger = serviceLogger(ctx, 'boxes');
  const { appDeps } = composeBoxes(
    { prisma, readPool, blobs: createFsBlobStore({ root: `/tmp/${name}` }), logger },
    {
      signingKey: randomBytes(32).toString('hex'),
      uploadUrlTtlMs: 600_000,
      maxUploadBytes: 1 << 30,
      // The load generator is one client address: keep the per-client limit out of the way.
      rateLimits: { api: { limit: 1e9, windowMs: 60_000 } },
    },
  );
  const listener = await createListener(buildApp(appDeps), { port: 0, host: '127.0.0.1' });
  return {
    target: { kind: 'http', url: listener.url, requests: requests(boxes) },
    async teardown() {
      await listener.close();
      await readPool.end();
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

// Frequent and rare terms, a phrase, an owner, a provider filter, sorts and a deep page.
function searchRequests(): HttpRequestSpec[] {
  return [
    'q=ubuntu',
    'q=base%20image%20for%20libvirt',
    'q=owner42',
    'q=alpine-1233',
    'q=rocky&provider=hyperv',
    'sort=created&order=asc&limit=50',
    'q=debian&sort=updated&page=5',
    '',
  ].map((q) => ({ method: 'GET', path: `/api/v1/search${q ? `?${q}` : ''}` }));
}

// 200 different public boxes (boxes with i % 10 = 5 are private and skipped).
function catalogRequests(boxes: number): HttpRequestSpec[] {
  const out: HttpRequestSpec[] = [];
  for (let k = 0; out.length < 200; k++) {
    const i = (k * 37 + 1) % boxes;
    if (i % 10 === 5) continue;
    out.push({ method: 'GET', path: `/owner${i % OWNERS}/${DISTROS[i % DISTROS.length]}-${i}`, headers: { Accept: 'application/json' } });
  }
  return out;
}

export const scenarios: Scenario[] = [
  {
    name: 'boxes-search',
    description: 'GET /api/v1/search?q=... (trigram GIN on search_text) over 10,000 boxes',
    baseline: 'node-http',
    setup: (ctx) => startBoxes(ctx, () => searchRequests()),
  },
  {
    name: 'boxes-catalog',
    description: 'GET /:username/:name (the catalog vagrant box add reads), 200 boxes of 10,000',
    baseline: 'node-http',
    setup: (ctx) => startBoxes(ctx, catalogRequests),
  },
];
