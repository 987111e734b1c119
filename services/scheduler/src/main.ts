// Composition root: config -> clients -> state store -> app -> listen.
// Usage: tsx services/scheduler/src/main.ts (configuration: docs/scheduler.md).
// With SCHEDULER_WORKERS > 1 this process becomes the primary of a node:cluster: it only
// supervises, and each worker runs everything below on the shared port.
import cluster from 'node:cluster';
import { hostname } from 'node:os';
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { ConfigError } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { CONFIG_ERROR_EXIT_CODE, createListener, followPrimary, installShutdown, resolveWorkerCount, superviseWorkers } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { createStateStore } from '@selfstack/state';
import { buildApp } from './app';
import { composeScheduler } from './compose';
import type { Db } from './shared/common.types';
import { idleGcOptions, loadSchedulerEnv } from './config';

async function main(): Promise<void> {
  const env = loadSchedulerEnv(process.env);
  if (!env.DATABASE_URL) {
    throw new ConfigError('invalid configuration (1 problem):', [{ where: 'DATABASE_URL', message: 'is required (make dev starts an embedded PostgreSQL and sets it)' }]);
  }
  const logger = createLogger({ service: 'scheduler', level: env.LOG_LEVEL });
  const workers = resolveWorkerCount(env.SCHEDULER_WORKERS);
  if (cluster.isPrimary && workers > 1) {
    logger.info('starting workers', { workers, port: env.PORT });
    superviseWorkers({ count: workers, logger });
    return;
  }
  const prisma = createPrismaClient({ url: env.DATABASE_URL, logger });
  let bus: Bus;
  if (env.REDIS_URL) {
    bus = createRedisBus({ url: env.REDIS_URL, prefix: 'scheduler:', logger });
  } else {
    logger.warn('REDIS_URL is unset: blocking queries are woken in memory (one process only)');
    bus = createMemoryBus();
  }
  const state = createStateStore<Db>({ prisma, bus, logger });
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
  const shutdown = installShutdown({
    listeners: [listener],
    closers: [
      { name: 'state', close: () => state.close() },
      { name: 'bus', close: () => bus.close() },
      { name: 'prisma', close: () => prisma.$disconnect() },
    ],
    logger,
    // A worker stops when its primary says so (or is gone); the primary owns the signals.
    ...(cluster.isWorker ? { signals: [] } : {}),
  });
  if (cluster.isWorker) followPrimary(shutdown);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(CONFIG_ERROR_EXIT_CODE);
  }
  process.stderr.write(`Error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
