// What a node change means for the allocations on it, and the evaluations it calls for (the
// anchor's createNodeEvals, plus what its plan applier and drainer write; docs/scheduler.md
// "Nodes and heartbeats"). Runs inside the node's write:
//   - a node that goes down (missed heartbeats) or is purged loses its allocations: each
//     one still live on the client becomes ClientStatus `lost`, DesiredStatus `stop` with the
//     anchor's "alloc is lost since its node is down"; the evaluations replace them;
//   - a drain that starts (or changes) marks the allocations of service jobs for migration
//     (DesiredTransition.Migrate), paced per task group by its `migrate` block's
//     max_parallel (job-rules.ts allocsToMigrate; the drainer marks the next ones, `pace`,
//     once the replacements run); when forced (deadline -1) or once the deadline has
//     passed (`forceMigrate`, from the drainer) everything at once, batch jobs' too; system
//     jobs are handled by the system scheduler;
//   - every job with live allocations on the node and every system job is evaluated again
//     (`node-update`, or `node-drain` when a drain starts, takes a paced step or is enforced).
import { allocEvent } from '../features/allocations/allocations.service';
import type { AllocationStore } from '../features/allocations/allocations.store';
import type { Allocation } from '../features/allocations/allocations.types';
import { evalEvent, newEvaluation } from '../features/evaluations/eval-factory';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import type { JobStore } from '../features/jobs/jobs.store';
import type { NodeChangeHook } from '../features/nodes/nodes.service';
import { CLIENT_TERMINAL, isLiveAlloc, jobTypeOf as jobType, markedForMigration, SYSTEM_JOB_TYPES as SYSTEM_TYPES, type Node } from '../features/nodes/nodes.types';
import { asObject, nowNanos, type Clock, type Db } from '../shared/common.types';
import type { EngineStore } from './engine.store';
import { refreshJobState } from './job-state';
import { allocsToMigrate } from './job-rules';
import { ALLOC_DESC } from './reconcile';

export interface NodeEvalHookDeps {
  engineStore: EngineStore;
  evalStore: EvaluationStore;
  allocStore: AllocationStore;
  jobStore: JobStore;
  clock: Clock;
}

function draining(n: Node | null): boolean {
  return n !== null && n.DrainStrategy !== null && n.DrainStrategy !== undefined;
}

function drainDeadline(n: Node): number {
  const d = asObject(asObject(n.DrainStrategy)['DrainSpec'])['Deadline'];
  return typeof d === 'number' ? d : 0;
}

/**
 * The service allocations among `onNode` (a draining node's) that a paced drain may mark
 * now (job-rules.ts allocsToMigrate), judged against all allocations of their jobs as `db`
 * sees them: the drain's write under its lock, and the drainer's read before it.
 */
export async function pacedMigrations(
  stores: { jobStore: Pick<JobStore, 'get'>; allocStore: Pick<AllocationStore, 'where'> },
  db: Db,
  nodeId: string,
  onNode: readonly Allocation[],
): Promise<Allocation[]> {
  const jobs = new Map<string, { namespace: string; jobId: string }>();
  for (const a of onNode) if (jobType(a) === 'service' && !markedForMigration(a)) jobs.set(`${a.Namespace}\u0000${a.JobID}`, { namespace: a.Namespace, jobId: a.JobID });
  const out: Allocation[] = [];
  for (const { namespace, jobId } of jobs.values()) {
    const record = await stores.jobStore.get(db, namespace, jobId);
    out.push(...allocsToMigrate(record?.job ?? null, await stores.allocStore.where(db, { namespace, jobId }), nodeId));
  }
  return out;
}

export function createNodeEvalHook(deps: NodeEvalHookDeps): NodeChangeHook {
  return async (w, before, after, opts = {}) => {
    const gone = after === null || (after.Status === 'down' && before?.Status !== 'down');
    const drainStarted = after !== null && draining(after) && (!draining(before) || JSON.stringify(before?.DrainStrategy) !== JSON.stringify(after.DrainStrategy));
    const enforce = opts.forceMigrate === true && after !== null && draining(after);
    const pace = opts.pace === true && after !== null && draining(after) && !gone;
    const changed =
      !before ||
      !after ||
      before.Status !== after.Status ||
      draining(before) !== draining(after) ||
      drainStarted ||
      enforce ||
      pace ||
      before.SchedulingEligibility !== after.SchedulingEligibility;
    if (!changed) return [];
    const nodeId = (after ?? before)?.ID ?? '';
    // The jobs to evaluate: read before their allocations are marked (lost ones no longer count as live).
    const jobs = await deps.engineStore.jobsForNode(w.tx, nodeId);

    const touched = new Map<string, { namespace: string; jobId: string }>();
    if (gone || drainStarted || enforce || pace) {
      const now = nowNanos(deps.clock);
      // Forced or past the deadline: everything at once, batch work included.
      const unpaced = enforce || (after !== null && drainDeadline(after) < 0);
      const onNode = await deps.allocStore.where(w.tx, { nodeId });
      const paced = gone || unpaced ? null : new Set((await pacedMigrations(deps, w.tx, nodeId, onNode)).map((a) => a.ID));
      for (const a of onNode) {
        let next: Allocation | null = null;
        let type = 'AllocationUpdated';
        if (gone && !CLIENT_TERMINAL.has(a.ClientStatus)) {
          next = { ...a, ClientStatus: 'lost', ...(a.DesiredStatus === 'run' ? { DesiredStatus: 'stop', DesiredDescription: ALLOC_DESC.lost } : {}) };
        } else if (!gone && isLiveAlloc(a) && !markedForMigration(a)) {
          const t = jobType(a);
          if (SYSTEM_TYPES.has(t) || (t === 'batch' && !unpaced)) continue;
          if (t === 'service' && paced !== null && !paced.has(a.ID)) continue;
          next = { ...a, DesiredTransition: { ...asObject(a.DesiredTransition), Migrate: true } };
          type = 'AllocationUpdateDesiredStatus';
        }
        if (!next) continue;
        next = { ...next, ModifyIndex: w.index, AllocModifyIndex: w.index, ModifyTime: now };
        await deps.allocStore.put(w.tx, next);
        w.emit(allocEvent(type, next));
        touched.set(`${a.Namespace}\u0000${a.JobID}`, { namespace: a.Namespace, jobId: a.JobID });
      }
      for (const j of touched.values()) await refreshJobState(deps, w, j.namespace, j.jobId, 'AllocationUpdated');
    }

    // An enforced deadline or a paced step re-evaluates only the jobs it marked.
    const wanted = (enforce || pace) && !gone && !drainStarted ? jobs.filter((j) => touched.has(`${j.namespace}\u0000${j.id}`)) : jobs;
    const ids: string[] = [];
    for (const job of wanted) {
      const ev = newEvaluation(
        {
          namespace: job.namespace,
          jobId: job.id,
          jobModifyIndex: job.jobModifyIndex,
          type: job.type,
          priority: job.priority,
          triggeredBy: drainStarted || enforce || pace ? 'node-drain' : 'node-update',
          index: w.index,
          nodeId,
          nodeModifyIndex: w.index,
        },
        deps.clock,
      );
      await deps.evalStore.put(w.tx, ev);
      w.emit(evalEvent('EvaluationUpdated', ev));
      ids.push(ev.ID);
    }
    return ids;
  };
}
