// Composition root: config -> clients -> state store -> app -> listen (runService does the
// rest: the DATABASE_URL check, logger, bus, workers, shutdown).
// Usage: tsx services/scheduler/src/main.ts (configuration: docs/scheduler.md).
// With SCHEDULER_WORKERS > 1 this process becomes the primary of a node:cluster: it only
// supervises, and each worker runs `start` on the shared port.
import cluster from 'node:cluster';
import { hostname } from 'node:os';
import { createPrismaClient } from '@selfstack/db';
import { createListener, resolveWorkerCount, runService } from '@selfstack/http-kit';
import { createStateStore } from '@selfstack/state';
import { buildApp } from './app';
import { composeScheduler } from './compose';
import { idleGcOptions, loadSchedulerEnv } from './config';
import type { Db } from './shared/common.types';

void runService({
  name: 'scheduler',
  config: loadSchedulerEnv,
  settings: (env) => ({ logLevel: env.LOG_LEVEL, databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL, workers: resolveWorkerCount(env.SCHEDULER_WORKERS) }),
  async start({ config: env, logger, databaseUrl, bus, onShutdown }) {
    const prisma = createPrismaClient({ url: databaseUrl, logger });
    const state = createStateStore<Db>({ prisma, bus: bus('scheduler:', 'REDIS_URL is unset: blocking queries are woken in memory (one process only)'), logger });
    onShutdown('state', () => state.close());
    onShutdown('prisma', () => prisma.$disconnect());
    await state.ready();

    const app = buildApp(
      composeScheduler(
        { prisma, state, logger },
        {
          region: env.SCHEDULER_REGION,
          datacenter: env.SCHEDULER_DATACENTER,
          nodeName: env.SCHEDULER_NODE_NAME ?? hostname(),
          advertiseAddr: env.SCHEDULER_ADVERTISE_ADDR ?? `127.0.0.1:${env.PORT}`,
          aclEnabled: env.SCHEDULER_ACL_ENABLED,
          nodeSecret: env.SCHEDULER_NODE_SECRET ?? '',
          peers: env.SCHEDULER_PEER_REGIONS,
          version: '2.0.6',
          maxRequestBytes: env.MAX_REQUEST_BYTES,
        },
        { readiness: async () => ({ postgres: await prisma.$queryRaw`SELECT 1`.then(() => true, () => false) }) },
      ),
    );
    const idleGc = idleGcOptions(env.SCHEDULER_IDLE_GC_MS);
    const listener = await createListener(app, {
      port: env.PORT,
      host: env.HOST,
      maxRequestBytes: env.MAX_REQUEST_BYTES,
      ...(idleGc ? { idleGc: { ...idleGc, onCollect: (c: { held: number; ms: number }) => logger.debug('idle young-generation collection', c) } } : {}),
    });
    logger.info('scheduler listening', { url: listener.url, region: env.SCHEDULER_REGION, acl: env.SCHEDULER_ACL_ENABLED, worker: cluster.worker?.id ?? 0 });
    return [listener];
  },
});
