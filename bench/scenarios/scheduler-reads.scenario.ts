// Issue 30 item 3: the scheduler's reads of existing objects, the service as `make dev` runs
// it (its request log at the run's level, the Redis bus when REDIS_URL is set), load from
// the bench's external client (wrk by default):
//
// - scheduler-job-read: GET /v1/job/<id>, a random one of 100 registered jobs;
// - scheduler-allocation-read: GET /v1/allocation/<id>, the 100 allocations the engine placed
//   for them;
// - scheduler-jobs-list: GET /v1/jobs (the 100 jobs' stubs).
//
// The state is built through the API (two nodes registered, 100 service jobs of count 1),
// and the engine places them before the measurement; it is stopped while load runs, so the
// figures are those of the read path alone.
import { randomUUID } from 'node:crypto';
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { createListener } from '@selfstack/http-kit';
import { buildApp } from '../../services/scheduler/src/app';
import { openSchedulerDb, type SchedulerDb } from '../../services/scheduler/src/clients';
import { composeScheduler } from '../../services/scheduler/src/compose';
import { createEngine } from '../../services/scheduler/src/engine/engine';
import { createBenchDatabase } from '../bench-database';
import { serviceLogger } from '../service-logger';
import type { HttpRequestSpec, Scenario, ScenarioContext, ScenarioInstance } from '../scenario';

const JOBS = 100;

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
}

interface Started {
  url: string;
  allocationIds: string[];
  teardown(): Promise<void>;
}

async function startScheduler(ctx: ScenarioContext): Promise<Started> {
  const db = await createBenchDatabase(ctx.databaseUrl, 'schedreads');
  const logger = serviceLogger(ctx, 'scheduler');
  const redisUrl = process.env['REDIS_URL'];
  const bus: Bus = redisUrl ? createRedisBus({ url: redisUrl, prefix: `bench:${db.name}:`, logger }) : createMemoryBus();
  let clients: SchedulerDb | undefined;
  const cleanup = async () => {
    await clients?.close();
    await bus.close();
    await db.drop();
  };
  try {
    clients = await openSchedulerDb({ databaseUrl: db.url, bus, logger, prismaPoolSize: 16, engineWorkers: 1 });
    const { prisma, state, sql, readPool } = clients;
    const app = buildApp(
      composeScheduler(
        { prisma, state, logger, readPool },
        { region: 'global', datacenter: 'dc1', nodeName: 'bench', advertiseAddr: '127.0.0.1:4646', aclEnabled: false, nodeSecret: '', peers: {}, version: '2.0.6' },
      ),
    );
    const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
    const base = listener.url;
    const engine = createEngine({ prisma, state, sql, bus, logger, databaseUrl: db.url, workers: 1 });
    await engine.start();
    try {
      for (let i = 0; i < 2; i++) {
        await call(base, 'PUT', '/v1/internal/node/register', {
          Node: {
            ID: randomUUID(),
            SecretID: randomUUID(),
            Name: `bench-${i}`,
            Datacenter: 'dc1',
            Status: 'ready',
            Attributes: { 'kernel.name': 'linux' },
            NodeResources: { Cpu: { CpuShares: 40_000 }, Memory: { MemoryMB: 65_536 }, Disk: { DiskMB: 1_000_000 } },
            Drivers: { docker: { Detected: true, Healthy: true } },
          },
        });
      }
      for (let i = 0; i < JOBS; i++) {
        await call(base, 'PUT', '/v1/jobs', {
          Job: {
            ID: `job-${i}`,
            Datacenters: ['dc1'],
            Meta: { team: `team-${i % 10}` },
            TaskGroups: [{ Name: 'web', Count: 1, Tasks: [{ Name: 'app', Driver: 'docker', Config: { image: 'app:1' }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
          },
        });
      }
      const by = Date.now() + 120_000;
      let allocationIds: string[] = [];
      for (;;) {
        const list = (await call(base, 'GET', '/v1/allocations')).body as Array<{ ID: string }>;
        allocationIds = list.map((a) => a.ID);
        if (allocationIds.length >= JOBS) break;
        if (Date.now() > by) throw new Error(`only ${allocationIds.length} of ${JOBS} allocations placed after 120 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
      ctx.log(`scheduler reads: ${JOBS} jobs and ${allocationIds.length} allocations on ${base} (database ${db.name})`);
      await engine.stop();
      return {
        url: base,
        allocationIds,
        async teardown() {
          await listener.close({ drainTimeoutMs: 100 });
          await cleanup();
        },
      };
    } catch (err) {
      await engine.stop();
      await listener.close({ drainTimeoutMs: 100 });
      throw err;
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function reads(requestsOf: (s: Started) => HttpRequestSpec[]) {
  return async (ctx: ScenarioContext): Promise<ScenarioInstance> => {
    const s = await startScheduler(ctx);
    return { target: { kind: 'http', url: s.url, requests: requestsOf(s) }, teardown: () => s.teardown() };
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'scheduler-job-read',
    description: `scheduler: GET /v1/job/<id>, a random one of ${JOBS} jobs registered through the API`,
    baseline: 'node-http',
    setup: reads(() => [{ method: 'GET', path: '/v1/job/job-{key}', keys: JOBS }]),
  },
  {
    name: 'scheduler-allocation-read',
    description: `scheduler: GET /v1/allocation/<id>, the ${JOBS} allocations the engine placed`,
    baseline: 'node-http',
    setup: reads((s) => s.allocationIds.map((id) => ({ method: 'GET', path: `/v1/allocation/${id}` }))),
  },
  {
    name: 'scheduler-jobs-list',
    description: `scheduler: GET /v1/jobs (${JOBS} job stubs)`,
    baseline: 'node-http',
    setup: reads(() => [{ method: 'GET', path: '/v1/jobs' }]),
  },
];
