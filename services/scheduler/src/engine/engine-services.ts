// The engine's request-side services, composed once per app (buildApp): what HTTP routes
// need from the engine (client allocation updates, the deployment watcher).
import { createAllocationStore } from '../features/allocations/allocations.store';
import type { Logger } from '@selfstack/logger';
import type { Clock } from '../shared/common.types';
import type { SchedulerState } from '../shared/blocking-read';
import { createDeploymentStore } from '../features/deployments/deployments.store';
import { createEvaluationStore } from '../features/evaluations/evaluations.store';
import { createJobStore } from '../features/jobs/jobs.store';
import { createNodeStore } from '../features/nodes/nodes.store';
import { createClientUpdatesService } from './client-updates.service';
import { createDeploymentWatcher } from './deployment-watcher';
import { createEngineStore } from './engine.store';
import { createNodeEvalHook } from './node-evals';
import { createPeriodicDispatcher } from './periodic';
import { createJobOperationsService } from '../features/jobs/job-operations.service';

export interface EngineServicesDeps extends SchedulerState {
  clock: Clock;
  aclEnabled: boolean;
  region: string;
  logger: Pick<Logger, 'warn' | 'info'>;
}

export function createEngineServices(deps: EngineServicesDeps) {
  const jobStore = createJobStore();
  const evalStore = createEvaluationStore();
  const allocStore = createAllocationStore();
  const deploymentStore = createDeploymentStore();
  const nodeStore = createNodeStore();
  const engineStore = createEngineStore();
  const watcher = createDeploymentWatcher({ jobStore, evalStore, deploymentStore, clock: deps.clock });
  const clientUpdates = createClientUpdatesService({
    prisma: deps.prisma,
    state: deps.state,
    reads: deps.reads,
    nodeStore,
    allocStore,
    evalStore,
    jobStore,
    engineStore,
    watcher,
    clock: deps.clock,
    aclEnabled: deps.aclEnabled,
  });
  const periodic = createPeriodicDispatcher({ state: deps.state, db: deps.prisma, jobStore, evalStore, engineStore, clock: deps.clock, logger: deps.logger });
  const jobOperations = createJobOperationsService({
    prisma: deps.prisma,
    state: deps.state,
    reads: deps.reads,
    jobStore,
    evalStore,
    allocStore,
    deploymentStore,
    engineStore,
    periodic,
    clock: deps.clock,
    region: deps.region,
  });
  return {
    clientUpdates,
    jobOperations,
    /** For the node service: the evaluations a node change calls for. */
    onNodeChange: createNodeEvalHook({ engineStore, evalStore, allocStore, jobStore, clock: deps.clock }),
    watcher,
    /** For the ACL resolver: client agents authenticate with their node SecretID. */
    isNodeSecret: (secretHash: string) => nodeStore.secretExists(deps.prisma, secretHash),
  };
}

export type EngineServices = ReturnType<typeof createEngineServices>;
