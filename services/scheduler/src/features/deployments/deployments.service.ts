// Deployments (reference §4): list, read, allocations, and the operator actions fail,
// pause/resume, promote and allocation-health, each recorded with its event type.
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import { allocEvent } from '../allocations/allocations.service';
import { allocStub, type Allocation } from '../allocations/allocations.types';
import type { StateEventInput } from '@selfstack/state';
import { nowNanos, TABLES, type Clock, type Db, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
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

/** What the scheduling engine's deployment watcher does for these routes (issue 25). */
export interface DeploymentWatcherHooks {
  onHealth(
    w: { tx: Db; index: number; emit: (e: StateEventInput) => void },
    deploymentId: string,
    changes: ReadonlyArray<{ before: Allocation; after: Allocation }>,
    allocs: ReadonlyMap<string, Allocation>,
  ): Promise<Handled | null>;
  fail(w: { tx: Db; index: number; emit: (e: StateEventInput) => void }, d: Deployment, description: string): Promise<Handled>;
}

/** A change the watcher wrote itself (deployment, events, evaluation). */
export interface Handled {
  deployment: Deployment;
  revertedVersion: number | null;
  evalId: string;
}

function isHandled(v: Deployment | Handled): v is Handled {
  return 'deployment' in v && 'evalId' in v;
}

export interface DeploymentServiceDeps extends SchedulerState {
  watcher?: DeploymentWatcherHooks;
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
    change: (d: Deployment, index: number, tx: Parameters<DeploymentStore['put']>[0], emit: (e: StateEventInput) => void) => Promise<Deployment | Handled>,
  ): Promise<DeploymentUpdateResponse> {
    const current = await deploymentStore.get(deps.prisma, id);
    if (!current) throw new NotFoundError('deployment not found');
    if (!acl.allowNamespaceOperation(current.Namespace, 'submit-job')) throw denied();
    const tables = [TABLES.deployments, TABLES.evals, TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, ...(action === 'alloc-health' ? [TABLES.allocs] : [])];
    const { index, result } = await state.withWrite(tables, async ({ tx, index, emit }) => {
      const d = await deploymentStore.get(tx, id);
      if (!d) throw new NotFoundError('deployment not found');
      if (!isActiveDeployment(d)) throw new BadRequestError(TERMINAL_MESSAGES[action]);
      const changed = await change(d, index, tx, emit);
      const rec = await deps.jobStore.get(tx, d.Namespace, d.JobID);
      let ev: Evaluation | null = null;
      let reverted: number | null = null;
      if (isHandled(changed)) {
        // The engine's watcher wrote the deployment, its events and evaluation.
        reverted = changed.revertedVersion;
        ev = changed.evalId !== '' ? await evalStore.get(tx, changed.evalId) : null;
      } else {
        const next = { ...changed, ModifyIndex: index, ModifyTime: nowNanos(deps.clock) };
        await deploymentStore.put(tx, next);
        emit(deploymentEvent(eventType, next));
      }
      if (rec && action !== 'pause' && !isHandled(changed)) {
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
      const latest = await deps.jobStore.get(tx, d.Namespace, d.JobID);
      if (latest) {
        const refreshed = await refreshJobStatus(deps, tx, latest.job);
        if (refreshed.Status !== latest.job.Status) {
          await deps.jobStore.put(tx, { job: { ...refreshed, ModifyIndex: index }, summary: latest.summary });
        }
      }
      return { ev, reverted };
    });
    return {
      EvalID: result.ev?.ID ?? '',
      EvalCreateIndex: result.ev ? index : 0,
      DeploymentModifyIndex: index,
      RevertedJobVersion: result.reverted,
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

    async allocations(id: string, namespace: string, acl: Acl, opts: ReadOptions): Promise<Indexed<JsonObject[]>> {
      // Reference §5: reading allocations needs read-job, checked first in the request
      // namespace as the anchor does (Deployment.Allocations); issue 33 found any caller
      // answered 200 with a filtered list. Allocations of other namespaces stay filtered.
      if (!acl.allowNamespaceOperation(namespace, 'read-job')) throw denied();
      const r = await blockingRead(deps, [TABLES.allocs], opts, (db) => allocStore.where(db, { deploymentId: id }), shareKey('deployment-allocs', id));
      return {
        index: r.index,
        value: r.value
          .filter((a) => acl.allowNamespaceOperation(a.Namespace, 'read-job'))
          .map((a) => allocStub(a, { resources: false, taskStates: true })),
      };
    },

    fail(id: string, acl: Acl) {
      return act(id, acl, 'fail', 'DeploymentStatusUpdate', async (d, index, tx, emit) => {
        // The watcher rolls back to the last stable version when auto_revert is set.
        if (deps.watcher) return deps.watcher.fail({ tx, index, emit }, d, 'Deployment marked as failed');
        return { ...d, Status: 'failed', StatusDescription: 'Deployment marked as failed' };
      });
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
        const changes: Array<{ before: Allocation; after: Allocation }> = [];
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
            changes.push({ before: a, after: next });
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
        if (deps.watcher) {
          // The engine's watcher counts, fails (auto-revert), auto-promotes and continues.
          const all = new Map((await allocStore.where(tx, { deploymentId: d.ID })).map((a) => [a.ID, a]));
          const handled = await deps.watcher.onHealth({ tx, index, emit }, d.ID, changes, all);
          if (handled) return handled;
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
