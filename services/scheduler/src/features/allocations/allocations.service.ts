// Allocations (reference §3): list, read, stop. Placement itself is the scheduling
// engine's (next issue); here allocations are read and stopped.
import { NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import { nowNanos, TABLES, type Clock, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingPointRead, blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import { evalEvent, newEvaluation } from '../evaluations/eval-factory';
import type { EvaluationStore } from '../evaluations/evaluations.store';
import type { Paged } from '../jobs/jobs.service';
import { compileFilter, paginateByCreateIndex } from '../../http/pagination';
import type { ListQuery } from '../../http/query';
import type { AllocationStore } from './allocations.store';
import { allocStub, type Allocation } from './allocations.types';

export interface AllocationServiceDeps extends SchedulerState {
  allocStore: AllocationStore;
  evalStore: EvaluationStore;
  clock: Clock;
}

/** Allocation events: Key=ID, FilterKeys=[JobID, DeploymentID]; payload without the job (reference §6). */
export function allocEvent(type: string, a: Allocation) {
  return { topic: 'Allocation', type, key: a.ID, namespace: a.Namespace, filterKeys: [a.JobID, a.DeploymentID], payload: { Allocation: { ...a, Job: null } } };
}

export function createAllocationService(deps: AllocationServiceDeps) {
  const { allocStore, evalStore, state } = deps;
  return {
    async list(q: ListQuery, acl: Acl, flags: { resources: boolean; taskStates: boolean }, opts: ReadOptions): Promise<Paged<JsonObject[]>> {
      if (!q.allNamespaces && !acl.allowNamespaceOperation(q.namespace, 'read-job')) throw denied();
      const filter = compileFilter(q.filter);
      const r = await blockingRead(deps, [TABLES.allocs], opts, (db) =>
        allocStore.list(db, { namespaces: q.allNamespaces ? null : [q.namespace], prefix: q.prefix }),
        shareKey('allocs', q.allNamespaces ? null : q.namespace, q.prefix),
      );
      const page = paginateByCreateIndex(r.value, q, filter, { idOf: (a) => a.ID, accept: (a) => acl.allowNamespaceOperation(a.Namespace, 'read-job') });
      return { index: r.index, value: page.items.map((a) => allocStub(a, flags)), nextToken: page.nextToken };
    },

    async get(id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Allocation>> {
      const tables = [TABLES.allocs];
      const r = await blockingPointRead(deps, tables, opts, () => deps.reads.allocation(id, tables), shareKey('alloc', id));
      if (!r.value) throw new NotFoundError('alloc not found');
      if (!acl.allowNamespaceOperation(r.value.Namespace, 'read-job')) throw denied();
      return { index: r.index, value: r.value };
    },

    /** PUT|POST /v1/allocation/:id/stop: marks it for migration and records an eval. */
    async stop(id: string, acl: Acl): Promise<{ EvalID: string; Index: number }> {
      const current = await allocStore.get(deps.prisma, id);
      if (!current) throw new NotFoundError('alloc not found');
      if (!acl.allowNamespaceOperation(current.Namespace, 'alloc-lifecycle')) throw denied();
      const { index, result } = await state.withWrite([TABLES.allocs, TABLES.evals], async ({ tx, index, emit }) => {
        const alloc = await allocStore.get(tx, id);
        if (!alloc) throw new NotFoundError('alloc not found');
        const job = alloc.Job ?? {};
        const ev = newEvaluation(
          {
            namespace: alloc.Namespace,
            jobId: alloc.JobID,
            jobModifyIndex: Number(job['JobModifyIndex'] ?? 0),
            type: String(job['Type'] ?? 'service'),
            priority: Number(job['Priority'] ?? 50),
            triggeredBy: 'alloc-stop',
            index,
          },
          deps.clock,
        );
        const next: Allocation = {
          ...alloc,
          DesiredTransition: { ...alloc.DesiredTransition, Migrate: true },
          ModifyIndex: index,
          ModifyTime: nowNanos(deps.clock),
        };
        await allocStore.put(tx, next);
        await evalStore.put(tx, ev);
        emit(allocEvent('AllocationUpdateDesiredStatus', next));
        emit(evalEvent('AllocationUpdateDesiredStatus', ev));
        return ev.ID;
      });
      return { EvalID: result, Index: index };
    },
  };
}

export type AllocationService = ReturnType<typeof createAllocationService>;
