// Composition root: config -> clients -> state store -> app -> listen.
// Usage: tsx services/scheduler/src/main.ts (configuration: docs/scheduler.md).
import { hostname } from 'node:os';
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { ConfigError } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { createListener, installShutdown } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { createStateStore } from '@selfstack/state';
import { buildApp } from './app';
import type { Db } from './features/common/common.types';
import { loadSchedulerEnv } from './config';

async function main(): Promise<void> {
  const env = loadSchedulerEnv(process.env);
  if (!env.DATABASE_URL) {
    throw new ConfigError('invalid configuration (1 problem):', [{ where: 'DATABASE_URL', message: 'is required (make dev starts an embedded PostgreSQL and sets it)' }]);
  }
  const logger = createLogger({ service: 'scheduler', level: env.LOG_LEVEL });
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

  const app = buildApp({
    prisma,
    state,
    logger,
    config: {
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
    readiness: async () => ({
      postgres: await prisma.$queryRaw`SELECT 1`.then(() => true, () => false),
    }),
  });
  const listener = await createListener(app, { port: env.PORT, host: env.HOST, maxRequestBytes: env.MAX_REQUEST_BYTES });
  logger.info('scheduler listening', { url: listener.url, region: env.SCHEDULER_REGION, acl: env.SCHEDULER_ACL_ENABLED });
  installShutdown({
    listeners: [listener],
    closers: [
      { name: 'state', close: () => state.close() },
      { name: 'bus', close: () => bus.close() },
      { name: 'prisma', close: () => prisma.$disconnect() },
    ],
    logger,
  });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`Error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
