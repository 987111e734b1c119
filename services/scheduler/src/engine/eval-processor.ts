// Processing one evaluation (the anchor's GenericScheduler.Process): snapshot, plan,
// apply; a stale or partially committed plan is planned again from fresh state, up to 5
// attempts for services (2 for batch) without progress; then the evaluation fails with a
// blocked evaluation for what is left ("created due to placement conflicts").
import { newId, type Clock, type Db } from '../shared/common.types';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { Node } from '../features/nodes/nodes.types';
import type { EngineStore } from './engine.store';
import { isNoOpPlan, type Plan, type Snapshot } from './engine.types';
import type { EvalOutcome, PlanApplier } from './plan-applier';
import { computePlan, SCHEDULER_TYPES } from './scheduler';

export const MAX_SERVICE_ATTEMPTS = 5;
export const MAX_BATCH_ATTEMPTS = 2;

export const EVAL_DESC = {
  blockedFailedPlacements: 'created to place remaining allocations',
  blockedMaxPlan: 'created due to placement conflicts',
  newerProcessed: 'canceled after more recent eval was processed',
} as const;

export interface ProcessorDeps {
  db: Db;
  engineStore: EngineStore;
  applier: PlanApplier;
  clock: Clock;
  /** Nodes for a nodes-table index (cached by the engine). */
  nodesAt(nodesIndex: number): Promise<Node[]>;
}

export interface ProcessResult {
  status: string;
  attempts: number;
  placed: number;
}

/** A blocked evaluation for what a plan could not place (Evaluation.CreateBlockedEval). */
export function blockedEvalFor(ev: Evaluation, plan: Plan, snapshotIndex: number, maxPlans: boolean): Evaluation {
  return {
    ...ev,
    ID: newId(),
    TriggeredBy: maxPlans ? 'max-plan-attempts' : 'queued-allocs',
    Status: 'blocked',
    StatusDescription: maxPlans ? EVAL_DESC.blockedMaxPlan : EVAL_DESC.blockedFailedPlacements,
    PreviousEval: ev.ID,
    NextEval: '',
    BlockedEval: '',
    FailedTGAllocs: Object.keys(plan.failed).length > 0 ? plan.failed : null,
    QueuedAllocations: null,
    ClassEligibility: null,
    EscapedComputedClass: false,
    WaitUntil: '0001-01-01T00:00:00Z',
    Wait: 0,
    SnapshotIndex: snapshotIndex,
    NodeID: '',
    NodeModifyIndex: 0,
  };
}

/** The evaluation's outcome if the whole plan commits. */
export function outcomeFor(ev: Evaluation, plan: Plan, snapshotIndex: number, others: readonly Evaluation[]): EvalOutcome {
  const failed = Object.keys(plan.failed).length > 0;
  const settled: Evaluation[] = [];
  const base: Evaluation = {
    ...ev,
    QueuedAllocations: plan.queued,
    FailedTGAllocs: failed ? plan.failed : null,
    SnapshotIndex: snapshotIndex,
    ...(plan.followups.length > 0 ? { NextEval: (plan.followups[plan.followups.length - 1] as Evaluation).ID } : {}),
  };
  // Older pending evaluations of the job are answered by this one.
  for (const o of others) {
    if (o.ID === ev.ID || o.Status !== 'pending') continue;
    settled.push({ ...o, Status: 'canceled', StatusDescription: EVAL_DESC.newerProcessed });
  }
  if (failed && ev.Status === 'blocked') {
    // Still not placeable: the blocked evaluation waits for the next change of capacity.
    return { eval: { ...base, Status: 'blocked' }, blocked: null, settled };
  }
  let blocked: Evaluation | null = null;
  if (failed) {
    blocked = blockedEvalFor(ev, plan, snapshotIndex, false);
    base.BlockedEval = blocked.ID;
    for (const o of others) {
      if (o.ID !== ev.ID && o.Status === 'blocked') settled.push({ ...o, Status: 'canceled', StatusDescription: `existing blocked evaluation exists for job ${JSON.stringify(ev.JobID)}` });
    }
  } else {
    for (const o of others) {
      if (o.ID !== ev.ID && o.Status === 'blocked') settled.push({ ...o, Status: 'canceled', StatusDescription: `evaluation ${JSON.stringify(ev.ID)} successful` });
    }
  }
  return { eval: { ...base, Status: 'complete', StatusDescription: '' }, blocked, settled };
}

export async function loadSnapshot(deps: ProcessorDeps, namespace: string, jobId: string): Promise<Snapshot> {
  const raw = await deps.engineStore.snapshot(deps.db, namespace, jobId);
  const nodes = await deps.nodesAt(raw.nodesIndex);
  return { index: raw.index, nowMs: deps.clock.nowMs(), job: raw.job, allocs: raw.allocs, deployment: raw.deployment, nodes, usage: raw.usage };
}

/** The first attempt's plan and outcome, for a batch (broker.ts); null for an evaluation type no scheduler handles. */
export async function prepareEvaluation(deps: ProcessorDeps, ev: Evaluation, others: readonly Evaluation[]): Promise<{ plan: Plan; outcome: EvalOutcome } | null> {
  if (!SCHEDULER_TYPES.includes(ev.Type)) return null;
  const snap = await loadSnapshot(deps, ev.Namespace, ev.JobID);
  const plan = computePlan(snap, ev);
  return { plan, outcome: outcomeFor(ev, plan, snap.index, others) };
}

/** Processes `ev` (its job's lock is held by the caller); `others`: the job's other open evaluations. */
export async function processEvaluation(deps: ProcessorDeps, ev: Evaluation, others: readonly Evaluation[]): Promise<ProcessResult> {
  if (!SCHEDULER_TYPES.includes(ev.Type)) {
    const failedEval = { ...ev, Status: 'failed', StatusDescription: `scheduler cannot handle '${ev.Type}' evaluation reason` };
    await deps.applier.settle({ eval: failedEval, blocked: null, settled: [] });
    return { status: 'failed', attempts: 0, placed: 0 };
  }
  const snapshot0 = await loadSnapshot(deps, ev.Namespace, ev.JobID);
  const limit = snapshot0.job?.Type === 'batch' ? MAX_BATCH_ATTEMPTS : MAX_SERVICE_ATTEMPTS;
  let attempts = 0;
  let sinceProgress = 0;
  let placed = 0;
  let snap = snapshot0;
  let lastPlan: Plan | null = null;
  for (;;) {
    attempts++;
    sinceProgress++;
    const plan = computePlan(snap, ev);
    lastPlan = plan;
    const outcome = outcomeFor(ev, plan, snap.index, others);
    if (isNoOpPlan(plan) && plan.followups.length === 0) {
      await deps.applier.settle(outcome);
      return { status: outcome.eval.Status, attempts, placed };
    }
    const r = await deps.applier.apply(plan, outcome);
    placed += r.placed;
    if (r.full) return { status: outcome.eval.Status, attempts, placed };
    if (r.placed > 0) sinceProgress = 0;
    if (sinceProgress >= limit) break;
    snap = await loadSnapshot(deps, ev.Namespace, ev.JobID);
  }
  // No progress within the attempt limit: fail, and block for what is left.
  const plan = lastPlan as Plan;
  const blocked = blockedEvalFor(ev, plan, snap.index, true);
  const failedEval: Evaluation = {
    ...ev,
    Status: 'failed',
    StatusDescription: `maximum attempts reached (${limit})`,
    BlockedEval: blocked.ID,
    FailedTGAllocs: Object.keys(plan.failed).length > 0 ? plan.failed : null,
    QueuedAllocations: plan.queued,
    SnapshotIndex: snap.index,
  };
  await deps.applier.settle({ eval: failedEval, blocked, settled: [] });
  return { status: 'failed', attempts, placed };
}
