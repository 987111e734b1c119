// Wiring shared by main.ts, the integration tests and the benchmarks: stores -> services
// -> the dependencies of buildApp, so all of them run the same graph. Clients (Prisma, the
// state store over the bus) come from outside.
import type { PrismaClient } from '@selfstack/db';
import type { Logger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import { createAclService, type AclService } from './features/acl/acl.service';
import { createAclStore } from './features/acl/acl.store';
import { createAllocationService, type AllocationService } from './features/allocations/allocations.service';
import { createAllocationStore } from './features/allocations/allocations.store';
import { createDeploymentService, type DeploymentService } from './features/deployments/deployments.service';
import { createDeploymentStore } from './features/deployments/deployments.store';
import { createEvaluationService, type EvaluationService } from './features/evaluations/evaluations.service';
import { createEvaluationStore } from './features/evaluations/evaluations.store';
import { createJobService, type JobService } from './features/jobs/jobs.service';
import { createJobStore } from './features/jobs/jobs.store';
import { createNamespaceService, type NamespaceService } from './features/namespaces/namespaces.service';
import { createNamespaceStore } from './features/namespaces/namespaces.store';
import { createNodeService, type NodeService } from './features/nodes/nodes.service';
import { createNodeStore } from './features/nodes/nodes.store';
import { systemClock, type Clock, type Db } from './shared/common.types';

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
}

export interface SchedulerClients {
  prisma: PrismaClient;
  state: StateStore<Db>;
  logger: Logger;
}

export interface SchedulerServices {
  acl: AclService;
  jobs: JobService;
  nodes: NodeService;
  allocations: AllocationService;
  evaluations: EvaluationService;
  deployments: DeploymentService;
  namespaces: NamespaceService;
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
}

export function composeScheduler(clients: SchedulerClients, config: SchedulerConfig, options: ComposeOptions = {}): SchedulerAppDeps {
  const { prisma, state } = clients;
  const clock = options.clock ?? systemClock;
  const s = { prisma, state };
  const jobStore = createJobStore();
  const evalStore = createEvaluationStore();
  const allocStore = createAllocationStore();
  const deploymentStore = createDeploymentStore();
  const nodeStore = createNodeStore();
  const namespaceStore = createNamespaceStore();
  const aclStore = createAclStore();

  const services: SchedulerServices = {
    acl: createAclService({ ...s, aclStore, enabled: config.aclEnabled, clock }),
    jobs: createJobService({ ...s, jobStore, evalStore, allocStore, deploymentStore, namespaceStore, clock, region: config.region }),
    nodes: createNodeService({
      ...s,
      nodeStore,
      allocStore,
      clock,
      datacenter: config.datacenter,
      aclEnabled: config.aclEnabled,
      nodeSecret: config.nodeSecret,
    }),
    allocations: createAllocationService({ ...s, allocStore, evalStore, clock }),
    evaluations: createEvaluationService({ ...s, evalStore, allocStore }),
    deployments: createDeploymentService({ ...s, deploymentStore, allocStore, evalStore, jobStore, clock }),
    namespaces: createNamespaceService({ ...s, namespaceStore, jobStore, region: config.region }),
  };
  return { config, logger: clients.logger, state, services, ...(options.readiness ? { readiness: options.readiness } : {}) };
}
