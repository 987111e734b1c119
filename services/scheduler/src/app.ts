// buildApp(deps): the scheduler's Express app (the supertest target); never listens. The
// services come composed (compose.ts); this file turns them into the PathSpec table
// mounted under /v1.
import cluster from 'node:cluster';
import type { Express, NextFunction, Request, Response } from 'express';
import { Gauge } from 'prom-client';
import { MethodNotAllowedError, NotFoundError } from '@selfstack/errors';
import { API_HELMET, createKitApp, mountConsole, mountPaths, type AnyPathSpec, type MountOptions } from '@selfstack/http-kit';
import type { SchedulerAppDeps } from './compose';
import { enginePaths } from './engine/engine.paths';
import { aclPaths } from './features/acl/acl.paths';
import { agentPaths } from './features/agent/agent.paths';
import { allocationPaths } from './features/allocations/allocations.paths';
import { clientPaths } from './features/client/client.paths';
import { deploymentPaths } from './features/deployments/deployments.paths';
import { evaluationPaths } from './features/evaluations/evaluations.paths';
import { eventPaths } from './features/events/events.paths';
import { jobOperationPaths } from './features/jobs/job-operations.paths';
import { jobPaths } from './features/jobs/jobs.paths';
import { namespacePaths } from './features/namespaces/namespaces.paths';
import { nodePaths } from './features/nodes/nodes.paths';
import { regionForwarder } from './http/forward';
import { respond } from './http/reply';
import { requestExtra, type RequestExtra } from './http/request-context';

export type { SchedulerConfig } from './compose';

/** Every route of the scheduler's /v1 table. */
export function schedulerPaths(deps: Pick<SchedulerAppDeps, 'services' | 'config'>): AnyPathSpec<RequestExtra>[] {
  const { services, config } = deps;
  return [
    // Before jobPaths: its `job/+id` takes any path under job/ that no suffix route claims.
    ...jobOperationPaths(services.jobOperations),
    ...jobPaths(services.jobs),
    ...nodePaths(services.nodes),
    ...allocationPaths(services.allocations),
    ...evaluationPaths(services.evaluations),
    ...deploymentPaths(services.deployments),
    ...namespacePaths(services.namespaces),
    ...aclPaths(services.acl),
    ...eventPaths(services.events),
    ...enginePaths(services.clientUpdates),
    ...clientPaths(services.client),
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
}

/** How the /v1 table is served (besides `extra`, the caller's identity). */
export const V1_MOUNT: Omit<MountOptions<RequestExtra>, 'extra'> = {
  prefix: '/v1',
  // Nomad parses every parameter (a bad one is its 400/500) before its RPC checks the
  // token; JSON bodies are not read from a read's query string.
  validateFirst: true,
  bodyFieldsInQuery: false,
  respond,
  // Reference §0: wrong method -> 405 `Invalid method`.
  unsupportedOperation: () => new MethodNotAllowedError('Invalid method'),
  help: { title: 'Workload scheduler API' },
};

export function buildApp(deps: SchedulerAppDeps): Express {
  const { config, state, services } = deps;
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
      mountPaths<RequestExtra>(app, schedulerPaths(deps), { ...V1_MOUNT, extra: requestExtra((secret) => services.acl.resolve(secret)) });
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
