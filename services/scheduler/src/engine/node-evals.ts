// Evaluations a node change calls for (the anchor's createNodeEvals): when a node
// registers, changes status, drain or eligibility, every job with live allocations on it
// and every system job is evaluated again (`node-update`, or `node-drain` when a drain
// starts). Runs inside the node's write.
import { evalEvent, newEvaluation } from '../features/evaluations/eval-factory';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import type { NodeChangeHook } from '../features/nodes/nodes.service';
import type { Clock } from '../shared/common.types';
import type { EngineStore } from './engine.store';

export function createNodeEvalHook(deps: { engineStore: EngineStore; evalStore: EvaluationStore; clock: Clock }): NodeChangeHook {
  return async (w, before, after) => {
    const drainStarted = after.DrainStrategy !== null && after.DrainStrategy !== undefined && (before?.DrainStrategy ?? null) === null;
    const drainChanged = (before?.DrainStrategy ?? null) === null !== (after.DrainStrategy === null || after.DrainStrategy === undefined);
    const changed = !before || before.Status !== after.Status || drainChanged || before.SchedulingEligibility !== after.SchedulingEligibility;
    if (!changed) return [];
    const ids: string[] = [];
    for (const job of await deps.engineStore.jobsForNode(w.tx, after.ID)) {
      const ev = newEvaluation(
        {
          namespace: job.namespace,
          jobId: job.id,
          jobModifyIndex: job.jobModifyIndex,
          type: job.type,
          priority: job.priority,
          triggeredBy: drainStarted ? 'node-drain' : 'node-update',
          index: w.index,
          nodeId: after.ID,
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
