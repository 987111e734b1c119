// New evaluations are recorded as `pending` (placement is the scheduling engine's job).
import { GO_ZERO_TIME, newId, nowNanos, type Clock } from '../../shared/common.types';
import type { Evaluation } from './evaluations.types';

export interface NewEvalInput {
  namespace: string;
  jobId: string;
  jobModifyIndex: number;
  type: string;
  priority: number;
  triggeredBy: string;
  index: number;
  nodeId?: string;
  nodeModifyIndex?: number;
  deploymentId?: string;
}

export function newEvaluation(input: NewEvalInput, clock: Clock): Evaluation {
  const now = nowNanos(clock);
  return {
    ID: newId(),
    Namespace: input.namespace,
    Priority: input.priority,
    Type: input.type,
    TriggeredBy: input.triggeredBy,
    JobID: input.jobId,
    JobModifyIndex: input.jobModifyIndex,
    NodeID: input.nodeId ?? '',
    NodeModifyIndex: input.nodeModifyIndex ?? 0,
    DeploymentID: input.deploymentId ?? '',
    Status: 'pending',
    StatusDescription: '',
    Wait: 0,
    WaitUntil: GO_ZERO_TIME,
    NextEval: '',
    PreviousEval: '',
    BlockedEval: '',
    RelatedEvals: null,
    FailedTGAllocs: null,
    PlanAnnotations: null,
    ClassEligibility: null,
    QuotaLimitReached: '',
    EscapedComputedClass: false,
    AnnotatePlan: false,
    QueuedAllocations: null,
    LeaderACL: '',
    SnapshotIndex: 0,
    CreateIndex: input.index,
    ModifyIndex: input.index,
    CreateTime: now,
    ModifyTime: now,
  };
}

/** The event an evaluation write emits (reference §6: Key=ID, FilterKeys=[JobID, DeploymentID]). */
export function evalEvent(type: string, ev: Evaluation) {
  return {
    topic: 'Evaluation',
    type,
    key: ev.ID,
    namespace: ev.Namespace,
    filterKeys: [ev.JobID, ev.DeploymentID],
    payload: { Evaluation: ev },
  };
}
