// Evaluations (reference §3): list (full structs), read, allocations of an eval.
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import { allocStub } from '../allocations/allocations.types';
import { TABLES, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import type { Paged } from '../jobs/jobs.service';
import { compileFilter, paginateByCreateIndex } from '../../http/pagination';
import type { ListQuery } from '../../http/query';
import type { EvaluationStore } from './evaluations.store';
import type { Evaluation } from './evaluations.types';

export interface EvaluationServiceDeps extends SchedulerState {
  evalStore: EvaluationStore;
  allocStore: AllocationStore;
}

export const FILTER_WITH_OTHER_PARAMS = 'Filter expression cannot be used with other filter parameters';

export function createEvaluationService(deps: EvaluationServiceDeps) {
  const { evalStore, allocStore } = deps;
  return {
    /** `status=` and `job=` are the dedicated (index-backed) filters; they exclude `filter`. */
    async list(q: ListQuery, legacy: { status: string; job: string }, acl: Acl, opts: ReadOptions): Promise<Paged<Evaluation[]>> {
      if (q.filter !== '' && (legacy.status !== '' || legacy.job !== '')) throw new BadRequestError(FILTER_WITH_OTHER_PARAMS);
      if (!q.allNamespaces && !acl.allowNamespaceOperation(q.namespace, 'read-job')) throw denied();
      const filter = compileFilter(q.filter);
      const r = await blockingRead(deps, [TABLES.evals], opts, (db) =>
        evalStore.list(db, {
          namespaces: q.allNamespaces ? null : [q.namespace],
          prefix: q.prefix,
          ...(legacy.job !== '' ? { jobId: legacy.job } : {}),
          ...(legacy.status !== '' ? { status: legacy.status } : {}),
        }),
        shareKey('evals', q.allNamespaces ? null : q.namespace, q.prefix, legacy.job, legacy.status),
      );
      const page = paginateByCreateIndex(r.value, q, filter, { idOf: (e) => e.ID, accept: (e) => acl.allowNamespaceOperation(e.Namespace, 'read-job') });
      return { index: r.index, value: page.items, nextToken: page.nextToken };
    },

    async get(id: string, related: boolean, acl: Acl, opts: ReadOptions): Promise<Indexed<Evaluation>> {
      const r = await blockingRead(deps, [TABLES.evals], opts, async (db) => {
        const ev = await evalStore.get(db, id);
        if (!ev || !related) return ev;
        const siblings = (await evalStore.byJob(db, ev.Namespace, ev.JobID)).filter((e) => e.ID !== ev.ID);
        return {
          ...ev,
          RelatedEvals: siblings.map((e) => ({
            ID: e.ID,
            Namespace: e.Namespace,
            JobID: e.JobID,
            DeploymentID: e.DeploymentID,
            NodeID: e.NodeID,
            Status: e.Status,
            StatusDescription: e['StatusDescription'] ?? '',
            WaitUntil: e['WaitUntil'] ?? null,
            NextEval: e['NextEval'] ?? '',
            PreviousEval: e['PreviousEval'] ?? '',
            BlockedEval: e['BlockedEval'] ?? '',
            CreateIndex: e.CreateIndex,
            ModifyIndex: e.ModifyIndex,
            CreateTime: e.CreateTime,
            ModifyTime: e.ModifyTime,
          })),
        };
      }, shareKey('eval', id, related));
      if (!r.value) throw new NotFoundError('eval not found');
      if (!acl.allowNamespaceOperation(r.value.Namespace, 'read-job')) throw denied();
      return { index: r.index, value: r.value };
    },

    async allocations(id: string, namespace: string, acl: Acl, opts: ReadOptions): Promise<Indexed<JsonObject[]>> {
      // Reference §5: reading allocations needs read-job, checked first in the request
      // namespace as the anchor does (Eval.Allocations); issue 33 found any caller
      // answered 200 with a filtered list. Allocations of other namespaces stay filtered.
      if (!acl.allowNamespaceOperation(namespace, 'read-job')) throw denied();
      const r = await blockingRead(deps, [TABLES.allocs], opts, (db) => allocStore.where(db, { evalId: id }), shareKey('eval-allocs', id));
      return {
        index: r.index,
        value: r.value
          .filter((a) => acl.allowNamespaceOperation(a.Namespace, 'read-job'))
          .map((a) => allocStub(a, { resources: false, taskStates: true })),
      };
    },
  };
}

export type EvaluationService = ReturnType<typeof createEvaluationService>;
