// buildApp(deps): the scheduler's Express app (the supertest target); never listens.
// Composition of stores -> services -> PathSpec tables, mounted under /v1.
import cluster from 'node:cluster';
import type { Express, NextFunction, Request, Response } from 'express';
import { Gauge } from 'prom-client';
import type { PrismaClient } from '@selfstack/db';
import { MethodNotAllowedError, NotFoundError } from '@selfstack/errors';
import { API_HELMET, createKitApp, mountConsole, mountPaths, type AnyPathSpec } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import { aclPaths } from './features/acl/acl.paths';
import { createAclService } from './features/acl/acl.service';
import { createAclStore } from './features/acl/acl.store';
import { agentPaths } from './features/agent/agent.paths';
import { allocationPaths } from './features/allocations/allocations.paths';
import { createAllocationService } from './features/allocations/allocations.service';
import { createAllocationStore } from './features/allocations/allocations.store';
import { systemClock, type Clock, type Db } from './features/common/common.types';
import { deploymentPaths } from './features/deployments/deployments.paths';
import { createDeploymentService } from './features/deployments/deployments.service';
import { createDeploymentStore } from './features/deployments/deployments.store';
import { createEventStreamService, DEFAULT_EVENT_STREAM_SETTINGS, type EventStreamSettings } from './features/events/event-stream.service';
import { eventPaths } from './features/events/events.paths';
import { evaluationPaths } from './features/evaluations/evaluations.paths';
import { createEvaluationService } from './features/evaluations/evaluations.service';
import { createEvaluationStore } from './features/evaluations/evaluations.store';
import { jobPaths } from './features/jobs/jobs.paths';
import { createJobService } from './features/jobs/jobs.service';
import { createJobStore } from './features/jobs/jobs.store';
import { namespacePaths } from './features/namespaces/namespaces.paths';
import { createNamespaceService } from './features/namespaces/namespaces.service';
import { createNamespaceStore } from './features/namespaces/namespaces.store';
import { nodePaths } from './features/nodes/nodes.paths';
import { createNodeService } from './features/nodes/nodes.service';
import { createNodeStore } from './features/nodes/nodes.store';
import { createEngineServices } from './engine/engine-services';
import { enginePaths } from './engine/engine.paths';
import { jobOperationPaths } from './features/jobs/job-operations.paths';
import { regionForwarder } from './http/forward';
import { respond } from './http/reply';
import { buildExtra, type RequestExtra } from './http/request-context';

export interface SchedulerConfig {
  region: string;
  datacenter: string;
  nodeName: string;
  advertiseAddr: string;
  aclEnabled: boolean;
  /** Shared secret for PUT /v1/internal/node/register ('' = none). */
  nodeSecret: string;
  /** region -> base URL of a server of that region */
  peers: Readonly<Record<string, string>>;
  version: string;
  maxRequestBytes?: number;
  /** Event stream timings (default: the anchor's 30 s heartbeat). */
  eventStream?: Partial<EventStreamSettings>;
}

export interface AppDeps {
  prisma: PrismaClient;
  state: StateStore<Db>;
  logger: Logger;
  config: SchedulerConfig;
  clock?: Clock;
  readiness?: () => Promise<Record<string, boolean>>;
  /** Aborted when the process starts shutting down (ends event streams before the drain). */
  stopping?: AbortSignal;
}

export function buildApp(deps: AppDeps): Express {
  const { prisma, state, config } = deps;
  const clock = deps.clock ?? systemClock;
  const s = { prisma, state };
  const jobStore = createJobStore();
  const evalStore = createEvaluationStore();
  const allocStore = createAllocationStore();
  const deploymentStore = createDeploymentStore();
  const nodeStore = createNodeStore();
  const namespaceStore = createNamespaceStore();
  const aclStore = createAclStore();

  // Scheduling engine (issue 25): request-side services; the broker runs from main.ts.
  const engine = createEngineServices({ ...s, clock, aclEnabled: config.aclEnabled, region: config.region, logger: deps.logger });
  const acl = createAclService({ ...s, aclStore, enabled: config.aclEnabled, clock, isNodeSecret: engine.isNodeSecret });
  const jobs = createJobService({ ...s, jobStore, evalStore, allocStore, deploymentStore, namespaceStore, clock, region: config.region });
  const nodes = createNodeService({
    ...s,
    onNodeChange: engine.onNodeChange,
    nodeStore,
    allocStore,
    clock,
    datacenter: config.datacenter,
    aclEnabled: config.aclEnabled,
    nodeSecret: config.nodeSecret,
  });
  const allocs = createAllocationService({ ...s, allocStore, evalStore, clock });
  const evals = createEvaluationService({ ...s, evalStore, allocStore });
  const deployments = createDeploymentService({ ...s, deploymentStore, allocStore, evalStore, jobStore, clock, watcher: engine.watcher });
  const namespaces = createNamespaceService({ ...s, namespaceStore, jobStore, region: config.region });
  const eventStream = createEventStreamService({
    state,
    resolveIdentity: (secret) => acl.resolve(secret),
    settings: { ...DEFAULT_EVENT_STREAM_SETTINGS, ...config.eventStream },
    ...(deps.stopping ? { stopping: deps.stopping } : {}),
  });

  const table: AnyPathSpec<RequestExtra>[] = [
    ...jobPaths(jobs),
    ...nodePaths(nodes),
    ...allocationPaths(allocs),
    ...evaluationPaths(evals),
    ...deploymentPaths(deployments),
    ...namespacePaths(namespaces),
    ...aclPaths(acl),
    ...eventPaths(eventStream),
    ...enginePaths(engine.clientUpdates),
    ...jobOperationPaths(engine.jobOperations),
    ...agentPaths({
      name: config.nodeName,
      region: config.region,
      datacenter: config.datacenter,
      advertiseAddr: config.advertiseAddr,
      version: config.version,
      peerRegions: Object.keys(config.peers),
      aclEnabled: config.aclEnabled,
    }),
  ];

  return createKitApp(
    {
      service: 'scheduler',
      logger: deps.logger,
      errorFlavour: 'nomad',
      // JSON for programs only: helmet's API profile (every header is paid per response,
      // 1,000 times when a write wakes 1,000 blocked readers).
      helmet: API_HELMET,
      // Nomad clients often send JSON without a Content-Type.
      jsonWithoutContentType: true,
      ...(config.maxRequestBytes !== undefined ? { maxRequestBytes: config.maxRequestBytes } : {}),
      ...(deps.readiness ? { readiness: deps.readiness } : {}),
      // Reference §0: an unknown path is a 404 with an empty body.
      notFound: (_req: Request, _res: Response, next: NextFunction) => next(new NotFoundError([])),
    },
    (app, kit) => {
      if (kit.metrics) {
        // Per process: with SCHEDULER_WORKERS > 1 each worker answers /metrics with its own
        // figures, told apart by the `worker` label (0 for a single-process service).
        const registry = kit.metrics;
        const worker = String(cluster.worker?.id ?? 0);
        const perWorker = (name: string, help: string, read: () => number) =>
          new Gauge({
            name,
            help,
            labelNames: ['worker'],
            registers: [registry],
            collect() {
              this.set({ worker }, read());
            },
          });
        perWorker('scheduler_blocking_queries', 'Blocking queries waiting for a write in this process', () => state.waiterCount());
        perWorker('scheduler_event_streams', 'Event stream clients following the event log in this process', () => state.eventTailCount());
      }
      app.use('/v1', regionForwarder(config.region, config.peers));
      mountPaths<RequestExtra>(app, table, {
        prefix: '/v1',
        extra: (req) => buildExtra({ region: config.region, resolveIdentity: (secret) => acl.resolve(secret) }, req),
        respond: (ctx, result, res) => respond(ctx as never, result, res),
        // Reference §0: wrong method -> 405 `Invalid method`.
        unsupportedOperation: () => new MethodNotAllowedError('Invalid method'),
        help: { title: 'Workload scheduler API' },
      });
      // Reference §0: `/` -> 307 to `/ui/`; the web console lives there (issue 32,
      // docs/console.md), static files with document headers of their own.
      app.get('/', (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(307, '/ui/');
      });
      mountConsole(app);
    },
  );
}
