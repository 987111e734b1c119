// Deployments (reference §4): list, read, allocations, and the operator actions fail,
// pause/resume, promote and allocation-health, each recorded with its event type.
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import { allocEvent } from '../allocations/allocations.service';
import { allocStub, type Allocation } from '../allocations/allocations.types';
import { nowNanos, TABLES, type Clock, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import { evalEvent, newEvaluation } from '../evaluations/eval-factory';
import type { EvaluationStore } from '../evaluations/evaluations.store';
import type { Evaluation } from '../evaluations/evaluations.types';
import { deploymentEvent, refreshJobStatus, type Paged } from '../jobs/jobs.service';
import type { JobStore } from '../jobs/jobs.store';
import { compileFilter, paginateByCreateIndex } from '../../http/pagination';
import type { ListQuery } from '../../http/query';
import type { DeploymentStore } from './deployments.store';
import { isActiveDeployment, type Deployment, type DeploymentUpdateResponse } from './deployments.types';

export interface DeploymentServiceDeps extends SchedulerState {
  deploymentStore: DeploymentStore;
  allocStore: AllocationStore;
  evalStore: EvaluationStore;
  jobStore: JobStore;
  clock: Clock;
}

type Action = 'fail' | 'pause' | 'resume' | 'promote' | 'alloc-health';

const TERMINAL_MESSAGES: Record<Action, string> = {
  fail: "can't fail terminal deployment",
  pause: "can't pause terminal deployment",
  resume: "can't resume terminal deployment",
  promote: "can't promote terminal deployment",
  'alloc-health': "can't set health of allocations for a terminal deployment",
};

/** Checks a write body's DeploymentID against the path (reference §4). */
export function checkDeploymentId(id: string | undefined, pathId: string): void {
  if (id === undefined || id === '') throw new BadRequestError('DeploymentID must be specified');
  if (id !== pathId) throw new BadRequestError('Deployment ID does not match');
}

export function createDeploymentService(deps: DeploymentServiceDeps) {
  const { deploymentStore, allocStore, evalStore, state } = deps;

  async function act(
    id: string,
    acl: Acl,
    action: Action,
    eventType: string,
    change: (d: Deployment, index: number, tx: Parameters<DeploymentStore['put']>[0], emit: (e: ReturnType<typeof allocEvent>) => void) => Promise<Deployment>,
  ): Promise<DeploymentUpdateResponse> {
    const current = await deploymentStore.get(deps.prisma, id);
    if (!current) throw new NotFoundError('deployment not found');
    if (!acl.allowNamespaceOperation(current.Namespace, 'submit-job')) throw denied();
    const tables = [TABLES.deployments, TABLES.evals, TABLES.jobs, ...(action === 'alloc-health' ? [TABLES.allocs] : [])];
    const { index, result } = await state.withWrite(tables, async ({ tx, index, emit }) => {
      const d = await deploymentStore.get(tx, id);
      if (!d) throw new NotFoundError('deployment not found');
      if (!isActiveDeployment(d)) throw new BadRequestError(TERMINAL_MESSAGES[action]);
      const next = { ...(await change(d, index, tx, emit)), ModifyIndex: index, ModifyTime: nowNanos(deps.clock) };
      await deploymentStore.put(tx, next);
      emit(deploymentEvent(eventType, next));
      const rec = await deps.jobStore.get(tx, d.Namespace, d.JobID);
      let ev: Evaluation | null = null;
      if (rec && action !== 'pause') {
        ev = newEvaluation(
          {
            namespace: d.Namespace,
            jobId: d.JobID,
            jobModifyIndex: rec.job.JobModifyIndex,
            type: rec.job.Type,
            priority: rec.job.Priority,
            triggeredBy: 'deployment-watcher',
            index,
            deploymentId: d.ID,
          },
          deps.clock,
        );
        await evalStore.put(tx, ev);
        emit(evalEvent(eventType, ev));
      }
      if (rec) {
        const refreshed = await refreshJobStatus(deps, tx, rec.job);
        if (refreshed.Status !== rec.job.Status) {
          await deps.jobStore.put(tx, { job: { ...refreshed, ModifyIndex: index }, summary: rec.summary });
        }
      }
      return ev;
    });
    return {
      EvalID: result?.ID ?? '',
      EvalCreateIndex: result ? index : 0,
      DeploymentModifyIndex: index,
      RevertedJobVersion: null,
      Index: index,
      LastContact: 0,
      KnownLeader: false,
      NextToken: '',
    };
  }

  return {
    async list(q: ListQuery, acl: Acl, opts: ReadOptions): Promise<Paged<Deployment[]>> {
      if (!q.allNamespaces && !acl.allowNamespaceOperation(q.namespace, 'read-job')) throw denied();
      const filter = compileFilter(q.filter);
      const r = await blockingRead(deps, [TABLES.deployments], opts, (db) =>
        deploymentStore.list(db, { namespaces: q.allNamespaces ? null : [q.namespace], prefix: q.prefix }),
        shareKey('deployments', q.allNamespaces ? null : q.namespace, q.prefix),
      );
      const page = paginateByCreateIndex(r.value, q, filter, { idOf: (d) => d.ID, accept: (d) => acl.allowNamespaceOperation(d.Namespace, 'read-job') });
      return { index: r.index, value: page.items, nextToken: page.nextToken };
    },

    async get(id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Deployment>> {
      const r = await blockingRead(deps, [TABLES.deployments], opts, (db) => deploymentStore.get(db, id), shareKey('deployment', id));
      if (!r.value) throw new NotFoundError('deployment not found');
      if (!acl.allowNamespaceOperation(r.value.Namespace, 'read-job')) throw denied();
      return { index: r.index, value: r.value };
    },

    async allocations(id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<JsonObject[]>> {
      const r = await blockingRead(deps, [TABLES.allocs], opts, (db) => allocStore.where(db, { deploymentId: id }), shareKey('deployment-allocs', id));
      return {
        index: r.index,
        value: r.value
          .filter((a) => acl.allowNamespaceOperation(a.Namespace, 'read-job'))
          .map((a) => allocStub(a, { resources: false, taskStates: true })),
      };
    },

    fail(id: string, acl: Acl) {
      return act(id, acl, 'fail', 'DeploymentStatusUpdate', async (d) => ({ ...d, Status: 'failed', StatusDescription: 'Deployment marked as failed' }));
    },

    pause(id: string, pause: boolean, acl: Acl) {
      return act(id, acl, pause ? 'pause' : 'resume', 'DeploymentStatusUpdate', async (d) =>
        pause
          ? { ...d, Status: 'paused', StatusDescription: 'Deployment is paused' }
          : { ...d, Status: 'running', StatusDescription: 'Deployment is running' },
      );
    },

    promote(id: string, all: boolean, groups: readonly string[], acl: Acl) {
      return act(id, acl, 'promote', 'DeploymentPromotion', async (d) => {
        const names = all ? Object.keys(d.TaskGroups) : [...groups];
        if (names.length === 0) throw new BadRequestError('must promote all or specific groups');
        const taskGroups = { ...d.TaskGroups };
        let promoted = 0;
        for (const name of names) {
          const tg = taskGroups[name];
          if (!tg) throw new BadRequestError(`Deployment does not include task group ${JSON.stringify(name)}`);
          if (tg.DesiredCanaries === 0) continue;
          taskGroups[name] = { ...tg, Promoted: true };
          promoted++;
        }
        if (promoted === 0) throw new BadRequestError('no canaries to promote');
        return { ...d, TaskGroups: taskGroups, StatusDescription: 'Deployment is running' };
      });
    },

    /** Marks allocations healthy/unhealthy; any unhealthy one fails the deployment. */
    allocationHealth(id: string, healthy: readonly string[], unhealthy: readonly string[], acl: Acl) {
      return act(id, acl, 'alloc-health', 'DeploymentAllocHealth', async (d, index, tx, emit) => {
        const ids = [...healthy, ...unhealthy];
        if (ids.length === 0) throw new BadRequestError('must specify at least one healthy/unhealthy allocation ID');
        const allocs = new Map((await allocStore.getMany(tx, ids)).map((a) => [a.ID, a]));
        const taskGroups = { ...d.TaskGroups };
        for (const [list, isHealthy] of [[healthy, true], [unhealthy, false]] as const) {
          for (const allocId of list) {
            const a = allocs.get(allocId);
            if (!a || a.DeploymentID !== d.ID) throw new BadRequestError(`Deployment ${JSON.stringify(d.ID)} does not contain allocation ${JSON.stringify(allocId)}`);
            const was = a.DeploymentStatus?.['Healthy'];
            const next: Allocation = {
              ...a,
              DeploymentStatus: { ...(a.DeploymentStatus ?? {}), Healthy: isHealthy, Timestamp: new Date(deps.clock.nowMs()).toISOString(), ModifyIndex: index },
              ModifyIndex: index,
              ModifyTime: nowNanos(deps.clock),
            };
            await allocStore.put(tx, next);
            emit(allocEvent('DeploymentAllocHealth', next));
            const tg = taskGroups[a.TaskGroup];
            if (tg && was !== isHealthy) {
              taskGroups[a.TaskGroup] = {
                ...tg,
                HealthyAllocs: tg.HealthyAllocs + (isHealthy ? 1 : 0) - (was === true ? 1 : 0),
                UnhealthyAllocs: tg.UnhealthyAllocs + (isHealthy ? 0 : 1) - (was === false ? 1 : 0),
              };
            }
          }
        }
        if (unhealthy.length > 0) {
          return { ...d, TaskGroups: taskGroups, Status: 'failed', StatusDescription: 'Failed due to unhealthy allocations' };
        }
        return { ...d, TaskGroups: taskGroups };
      });
    },
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
