// Composition root: config -> clients -> state store -> app -> listen (runService does the
// rest: the DATABASE_URL check, logger, bus, workers, shutdown).
// Usage: tsx services/scheduler/src/main.ts (configuration: docs/scheduler.md).
// With SCHEDULER_WORKERS > 1 this process becomes the primary of a node:cluster: it only
// supervises, and each worker runs `start` on the shared port.
import cluster from 'node:cluster';
import { hostname } from 'node:os';
import { createListener, resolveWorkerCount, runService } from '@selfstack/http-kit';
import { buildApp } from './app';
import { openSchedulerDb } from './clients';
import { composeScheduler } from './compose';
import { createEngine } from './engine/engine';
import { startEventLogPruner } from './features/events/event-log-pruner';
import { idleGcOptions, loadSchedulerEnv, nodeSweepIntervalMs } from './config';
import { createAllocationStore } from './features/allocations/allocations.store';
import { createJobStore } from './features/jobs/jobs.store';
import { createNodeLifecycle } from './features/nodes/node-lifecycle';
import { createNodeStore } from './features/nodes/nodes.store';
import { systemClock } from './shared/common.types';

void runService({
  name: 'scheduler',
  config: loadSchedulerEnv,
  settings: (env) => ({ logLevel: env.LOG_LEVEL, databaseUrl: env.DATABASE_URL, redisUrl: env.REDIS_URL, workers: resolveWorkerCount(env.SCHEDULER_WORKERS) }),
  async start({ config: env, logger, databaseUrl, bus, onShutdown, beforeDrain }) {
    const processBus = bus('scheduler:', 'REDIS_URL is unset: blocking queries are woken in memory (one process only)');
    const { prisma, sql, readPool, state, close } = await openSchedulerDb({
      databaseUrl,
      bus: processBus,
      logger,
      engineWorkers: env.SCHEDULER_ENGINE_WORKERS,
      eventReadIntervalMs: env.SCHEDULER_EVENT_BATCH,
    });
    // Event streams end (with the index to resume from) before the listener drains.
    const stopping = new AbortController();
    beforeDrain('event streams', () => stopping.abort());
    // The event backlog's retention (issue 27).
    const pruner = startEventLogPruner({
      state,
      logger,
      retention: { keepEvents: env.SCHEDULER_EVENT_RETENTION_EVENTS, maxAgeMs: env.SCHEDULER_EVENT_RETENTION_AGE, intervalMs: env.SCHEDULER_EVENT_PRUNE_INTERVAL },
    });
    onShutdown('event log pruner', () => pruner.stop());
    // Scheduling engine (issue 25): the evaluation broker and its timers; replicas share the work.
    const engine = env.SCHEDULER_ENGINE_WORKERS > 0 ? createEngine({ prisma, state, sql, bus: processBus, logger, databaseUrl, workers: env.SCHEDULER_ENGINE_WORKERS }) : null;
    if (engine) onShutdown('engine', () => engine.stop());

    const deps = composeScheduler(
      { prisma, state, logger, readPool },
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
        eventStream: { heartbeatMs: env.SCHEDULER_EVENT_HEARTBEAT, slowConsumerMs: env.SCHEDULER_EVENT_SLOW_CONSUMER },
        heartbeat: { minTtlMs: env.SCHEDULER_HEARTBEAT_TTL_MIN, graceMs: env.SCHEDULER_HEARTBEAT_GRACE, maxPerSecond: env.SCHEDULER_HEARTBEAT_MAX_PER_SECOND },
      },
      { readiness: async () => ({ postgres: await prisma.$queryRaw`SELECT 1`.then(() => true, () => false) }), stopping: stopping.signal },
    );
    const app = buildApp(deps);
    // Node heartbeats and drains (issue 26): every replica sweeps; transitions are re-checked in their writes.
    const lifecycle = createNodeLifecycle({
      db: prisma,
      nodes: deps.services.nodes,
      nodeStore: createNodeStore(),
      allocStore: createAllocationStore(),
      jobStore: createJobStore(),
      clock: systemClock,
      logger,
      intervalMs: nodeSweepIntervalMs(env.SCHEDULER_HEARTBEAT_GRACE),
      failoverMs: env.SCHEDULER_HEARTBEAT_FAILOVER,
    });
    onShutdown('node lifecycle', () => lifecycle.stop());
    // Closed in this order at shutdown: the timers above first, then their clients.
    onShutdown('database clients', close);
    await engine?.start();
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
