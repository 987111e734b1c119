// Runs the roles a configuration asks for (controller, worker, or both) and owns the
// shutdown sequence, including the anchor's graceful wait: on SIGTERM/SIGINT with
// `graceful_shutdown_wait_duration` set, /health answers 503 at once while requests are
// still served for that long; then shutdown begins. Without a wait it begins at once.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Bus } from '@selfstack/bus';
import type { PrismaClient } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import { buildApp } from './app';
import { startClusterServer, WORKER_SYNC_CHANNEL, type ClusterServer } from './cluster/cluster-server';
import { startWorkerUpstream, type WorkerUpstream } from './cluster/worker-upstream';
import { healthExposed, type ServerConfig } from './config/controller-config';
import { createSessionService } from './features/sessions/sessions.service';
import { createSessionStore } from './features/sessions/sessions.store';
import { createOpsHandler, type WorkerOperationalState } from './ops/ops-server';

export interface RunningServer {
  /** Bound ports by purpose (useful when a config asks for port 0). */
  ports: Partial<Record<'api' | 'cluster' | 'ops', number>>;
  /** Runs the shutdown sequence once; later calls return the same promise. */
  shutdown(reason: string): Promise<void>;
  /** Resolves when shutdown has finished. */
  stopped: Promise<void>;
}

export interface ServerDeps {
  config: ServerConfig;
  logger: Logger;
  bus: Bus;
  /** Required when the config runs a controller. */
  prisma?: PrismaClient;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function runServer(deps: ServerDeps): Promise<RunningServer> {
  const { config, logger, bus } = deps;
  const sleep = deps.sleep ?? defaultSleep;
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const ports: RunningServer['ports'] = {};
  const closers: { name: string; close: () => Promise<void> }[] = [];

  let shuttingDown = false;
  // The TCP server that accepts API connections (the kit's http.Server never listens itself).
  let apiServer: import('node:net').Server | undefined;
  let cluster: ClusterServer | undefined;
  let upstream: WorkerUpstream | undefined;
  let workerState: WorkerOperationalState = 'unknown';

  if (config.controller) {
    const prisma = deps.prisma;
    if (!prisma) throw new Error('a controller needs a database client');
    const store = createSessionStore({ prisma });
    const clusterListener = config.listeners.cluster!;
    cluster = await startClusterServer({
      host: clusterListener.host,
      port: clusterListener.port,
      controllerName: config.controller.name,
      store,
      bus,
      logger,
    });
    ports.cluster = cluster.port;
    const sessions = createSessionService({
      store,
      notifyWorker: (workerName) => bus.publish(WORKER_SYNC_CHANNEL, workerName),
    });
    const api = config.listeners.api;
    if (api) {
      const app = buildApp({ sessions, logger, apiToken: config.controller.apiToken, maxRequestBytes: api.maxRequestBytes });
      // The connection-level cap sits above the app's limit (as the secrets service does), so
      // a body just over max_request_size gets the app's 413 instead of a dropped connection.
      const listener = await createListener(app, { port: api.port, host: api.host, ...(api.maxRequestBytes ? { maxRequestBytes: api.maxRequestBytes * 2 } : {}) });
      apiServer = listener.netServer;
      ports.api = listener.port;
      closers.push({ name: 'api listener', close: () => listener.close() });
    }
    const c = cluster;
    closers.push({ name: 'cluster listener', close: () => c.close() });
  }

  if (config.worker) {
    const w = config.worker;
    upstream = startWorkerUpstream({ workerName: w.name, ...(w.description ? { description: w.description } : {}), upstream: w.initialUpstreams[0]!, logger });
    workerState = 'active';
    const u = upstream;
    closers.push({ name: 'worker upstream', close: async () => u.close() });
  }

  let opsServer: http.Server | undefined;
  const ops = config.listeners.ops;
  if (ops) {
    const handler = createOpsHandler({
      healthExposed: healthExposed(config),
      metrics,
      sources: {
        ...(config.controller
          ? { controller: { apiServerUp: () => apiServer?.listening === true, shuttingDown: () => shuttingDown } }
          : {}),
        ...(upstream
          ? {
              worker: {
                state: () => workerState,
                activeSessionCount: () => upstream!.activeSessionCount(),
                upstreamConnectionState: () => upstream!.connectionState(),
              },
            }
          : {}),
      },
    });
    const server = http.createServer({ requestTimeout: 30_000 }, handler);
    server.listen(ops.port, ops.host);
    await once(server, 'listening');
    ports.ops = (server.address() as AddressInfo).port;
    opsServer = server;
  }

  logger.info('server started', { controller: config.controller?.name, worker: config.worker?.name, ports });

  let stopping: Promise<void> | undefined;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));

  async function sequence(reason: string): Promise<void> {
    shuttingDown = true;
    if (upstream) workerState = 'shutdown';
    const wait = Math.max(config.controller?.gracefulShutdownWaitMs ?? 0, config.worker?.gracefulShutdownWaitMs ?? 0);
    if (wait > 0) {
      // The anchor prints exactly this while health reports 503 and requests still flow.
      logger.info(`==> Health is enabled, waiting ${wait / 1000}s before shutdown`, { reason });
      await sleep(wait);
    }
    logger.info('shutting down', { reason });
    for (const closer of closers) {
      try {
        await closer.close();
      } catch (err) {
        logger.warn('closer failed', { closer: closer.name, err: String(err) });
      }
    }
    if (opsServer) {
      const s = opsServer;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
    await deps.prisma?.$disconnect().catch(() => undefined);
    await bus.close().catch(() => undefined);
    markStopped();
  }

  return {
    ports,
    stopped,
    shutdown(reason) {
      stopping ??= sequence(reason);
      return stopping;
    },
  };
}
