// Wiring shared by main.ts, the integration tests and the benchmarks: stores -> services
// -> the dependencies of buildApp, so all of them run the same graph. Clients (Prisma, the
// state store over the bus) come from outside.
import type { PrismaClient } from '@selfstack/db';
import type { Logger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import type { Pool } from 'pg';
import { createEngineServices, type EngineServices } from './engine/engine-services';
import { createAclService, type AclService } from './features/acl/acl.service';
import { createAclStore } from './features/acl/acl.store';
import { createAllocationService, type AllocationService } from './features/allocations/allocations.service';
import { createAllocationStore } from './features/allocations/allocations.store';
import { createDeploymentService, type DeploymentService } from './features/deployments/deployments.service';
import { createDeploymentStore } from './features/deployments/deployments.store';
import { createClientService, type ClientService } from './features/client/client.service';
import { createEvaluationService, type EvaluationService } from './features/evaluations/evaluations.service';
import { createEvaluationStore } from './features/evaluations/evaluations.store';
import { createEventStreamService, DEFAULT_EVENT_STREAM_SETTINGS, type EventStreamService, type EventStreamSettings } from './features/events/event-stream.service';
import { createJobService, type JobService } from './features/jobs/jobs.service';
import { createJobStore } from './features/jobs/jobs.store';
import { createNamespaceService, type NamespaceService } from './features/namespaces/namespaces.service';
import { createNamespaceStore } from './features/namespaces/namespaces.store';
import { createNodeService, type HeartbeatSettings, type NodeService } from './features/nodes/nodes.service';
import { createNodeStore } from './features/nodes/nodes.store';
import { systemClock, type Clock, type Db } from './shared/common.types';
import { createPointReads } from './shared/point-reads.store';

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
  /** Node heartbeat TTLs (default: the anchor's 10 s minimum, 50/s, 10 s grace). */
  heartbeat?: HeartbeatSettings;
  /** Event stream timings (default: the anchor's 30 s heartbeat). */
  eventStream?: Partial<EventStreamSettings>;
}

export interface SchedulerClients {
  prisma: PrismaClient;
  state: StateStore<Db>;
  logger: Logger;
  /** node-postgres pool for the hot reads (shared/point-reads.store.ts createReadPool); the caller closes it. */
  readPool: Pool;
}

export interface SchedulerServices {
  acl: AclService;
  jobs: JobService;
  nodes: NodeService;
  allocations: AllocationService;
  evaluations: EvaluationService;
  deployments: DeploymentService;
  namespaces: NamespaceService;
  events: EventStreamService;
  /** The engine's request side (issue 25): client allocation updates, job operations. */
  clientUpdates: EngineServices['clientUpdates'];
  jobOperations: EngineServices['jobOperations'];
  /** /v1/client/* forwarded to client agents (issue 26). */
  client: ClientService;
}

export interface SchedulerAppDeps {
  config: SchedulerConfig;
  logger: Logger;
  /** For the per-process gauges (blocking queries, event streams). */
  state: StateStore<Db>;
  services: SchedulerServices;
  readiness?: () => Promise<Record<string, boolean>>;
}

export interface ComposeOptions {
  clock?: Clock;
  readiness?: () => Promise<Record<string, boolean>>;
  /** Aborted when the process starts shutting down: event streams end before the drain. */
  stopping?: AbortSignal;
}

export function composeScheduler(clients: SchedulerClients, config: SchedulerConfig, options: ComposeOptions = {}): SchedulerAppDeps {
  const { prisma, state } = clients;
  const clock = options.clock ?? systemClock;
  const s = { prisma, state, reads: createPointReads(clients.readPool) };
  const jobStore = createJobStore();
  const evalStore = createEvaluationStore();
  const allocStore = createAllocationStore();
  const deploymentStore = createDeploymentStore();
  const nodeStore = createNodeStore();
  const namespaceStore = createNamespaceStore();
  const aclStore = createAclStore();

  // Scheduling engine (issue 25): its request-side services; the broker runs from main.ts.
  const engine = createEngineServices({ ...s, clock, aclEnabled: config.aclEnabled, region: config.region, logger: clients.logger });
  const acl = createAclService({ ...s, aclStore, enabled: config.aclEnabled, clock, isNodeSecret: engine.isNodeSecret });
  const services: SchedulerServices = {
    acl,
    jobs: createJobService({ ...s, jobStore, evalStore, allocStore, deploymentStore, namespaceStore, clock, region: config.region }),
    nodes: createNodeService({
      ...s,
      onNodeChange: engine.onNodeChange,
      nodeStore,
      allocStore,
      clock,
      datacenter: config.datacenter,
      aclEnabled: config.aclEnabled,
      nodeSecret: config.nodeSecret,
      ...(config.heartbeat ? { heartbeat: config.heartbeat } : {}),
    }),
    allocations: createAllocationService({ ...s, allocStore, evalStore, clock }),
    evaluations: createEvaluationService({ ...s, evalStore, allocStore }),
    deployments: createDeploymentService({ ...s, deploymentStore, allocStore, evalStore, jobStore, clock, watcher: engine.watcher }),
    namespaces: createNamespaceService({ ...s, namespaceStore, jobStore, region: config.region }),
    events: createEventStreamService({
      state,
      resolveIdentity: (secret) => acl.resolve(secret),
      settings: { ...DEFAULT_EVENT_STREAM_SETTINGS, ...config.eventStream },
      ...(options.stopping ? { stopping: options.stopping } : {}),
    }),
    clientUpdates: engine.clientUpdates,
    jobOperations: engine.jobOperations,
    client: createClientService({ prisma, allocStore, nodeStore }),
  };
  return { config, logger: clients.logger, state, services, ...(options.readiness ? { readiness: options.readiness } : {}) };
}
