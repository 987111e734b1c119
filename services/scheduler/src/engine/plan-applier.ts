// The plan applier (ARCHITECTURE "Scheduling"; the anchor's plan_apply.go): re-checks a
// plan against the latest state and commits what still holds in one withWrite, with its
// events. The evaluation's job is held by the worker's advisory lock (broker.ts), so plans
// of one job are applied one at a time; the checks here catch what other jobs and writers
// changed since the snapshot:
//   - the job was re-registered or purged (JobModifyIndex differs): the whole plan is stale;
//   - allocations of the job were created since the snapshot (a planner without the lock):
//     the whole plan is stale;
//   - a node no longer fits what the plan places there (other jobs' placements), or is no
//     longer schedulable: that node's placements are dropped (a partial commit).
// A stale or partial plan leaves the evaluation open: the worker plans again (refresh).
import type { StateEventInput, StateStore, WriteOptions } from '@selfstack/state';
import { allocEvent } from '../features/allocations/allocations.service';
import type { Allocation } from '../features/allocations/allocations.types';
import { TABLES, nowNanos, type Clock, type Db } from '../shared/common.types';
import type { Node } from '../features/nodes/nodes.types';
import type { DeploymentStore } from '../features/deployments/deployments.store';
import type { Deployment } from '../features/deployments/deployments.types';
import { evalEvent } from '../features/evaluations/eval-factory';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import { deploymentEvent } from '../features/jobs/jobs.service';
import type { JobStore } from '../features/jobs/jobs.store';
import type { Job } from '../features/jobs/jobs.types';
import { NO_RESOURCES, type Plan, type Resources } from './engine.types';
import type { EngineStore } from './engine.store';
import { refreshJobState } from './job-state';
import { exhaustedDimension, nodeCapacity } from './placement/resources';
import { isSchedulable } from './placement/feasibility';
import { planAskByNode } from './scheduler';
import { allocResourceTotals } from '../features/allocations/allocations.types';

/** Pseudo-table written whenever capacity is freed: blocked evaluations computed before it
 * become claimable again (engine.store.ts `candidates`). */
export const CAPACITY_TABLE = 'capacity';

export interface EvalOutcome {
  /** The processed evaluation as it should be stored (status, FailedTGAllocs, ...). */
  eval: Evaluation;
  /** A blocked evaluation created for what could not be placed. */
  blocked: Evaluation | null;
  /** Other evaluations settled by this one (cancelled). */
  settled: Evaluation[];
}

export interface ApplyResult {
  /** Everything committed, evaluation included. */
  full: boolean;
  /** The job changed since the snapshot: nothing was committed. */
  stale: boolean;
  placed: number;
  rejectedNodes: string[];
  index: number;
}

export interface PlanApplierDeps {
  state: StateStore<Db>;
  jobStore: JobStore;
  evalStore: EvaluationStore;
  deploymentStore: DeploymentStore;
  engineStore: EngineStore;
  clock: Clock;
}

function withoutRejected(plan: Plan, rejected: ReadonlySet<string>): Plan {
  if (rejected.size === 0) return plan;
  const dropped = plan.place.filter((a) => rejected.has(a.NodeID));
  const droppedIds = new Set(dropped.map((a) => a.ID));
  let deployment = plan.deployment;
  if (deployment) {
    const groups = { ...deployment.TaskGroups };
    for (const a of dropped) {
      const g = groups[a.TaskGroup];
      if (!g || a.DeploymentID !== deployment.ID) continue;
      groups[a.TaskGroup] = {
        ...g,
        PlacedAllocs: Math.max(0, g.PlacedAllocs - 1),
        PlacedCanaries: g.PlacedCanaries ? g.PlacedCanaries.filter((id) => !droppedIds.has(id)) : g.PlacedCanaries,
      };
    }
    deployment = { ...deployment, TaskGroups: groups };
  }
  return {
    ...plan,
    place: plan.place.filter((a) => !rejected.has(a.NodeID)),
    stop: plan.stop.map((s) => (droppedIds.has(String(s.alloc['NextAllocation'] ?? '')) ? { ...s, alloc: { ...s.alloc, NextAllocation: '' } } : s)),
    deployment,
  };
}

export function createPlanApplier(deps: PlanApplierDeps) {
  const { state, engineStore } = deps;

  /**
   * Write options for `plans`: raw SQL (the state store's SQL client, no Prisma overhead)
   * unless a plan creates or updates a deployment, which is written with the model API.
   */
  function writeFor(plans: readonly Plan[]): WriteOptions {
    return { raw: plans.every((p) => p.deployment === null && p.deploymentUpdates.length === 0) };
  }

  /** Nodes whose placements no longer fit or are no longer schedulable. */
  function rejectedNodes(plan: Plan, nodes: ReadonlyMap<string, Node>, usage: ReadonlyMap<string, Resources>): Set<string> {
    const ask = planAskByNode(plan);
    const out = new Set<string>();
    const freed = new Map<string, Resources>();
    for (const s of plan.stop) {
      const r = allocResourceTotals(s.alloc);
      const f = freed.get(s.alloc.NodeID) ?? NO_RESOURCES;
      freed.set(s.alloc.NodeID, { cpu: f.cpu + r.cpu, memoryMb: f.memoryMb + r.memoryMb, diskMb: f.diskMb + r.diskMb });
    }
    for (const [id, want] of ask) {
      const node = nodes.get(id);
      if (!node || !isSchedulable(node)) {
        out.add(id);
        continue;
      }
      const u = usage.get(id) ?? NO_RESOURCES;
      const f = freed.get(id) ?? NO_RESOURCES;
      const used = { cpu: u.cpu - f.cpu, memoryMb: u.memoryMb - f.memoryMb, diskMb: u.diskMb - f.diskMb };
      if (exhaustedDimension(nodeCapacity(node), used, want) !== null) out.add(id);
    }
    return out;
  }

  /**
   * Commits the plan (what still fits) and, when all of it fits, the evaluation's outcome.
   * `outcome` null: the plan is committed without settling the evaluation.
   */
  function tablesFor(input: Plan): string[] {
    const tables: string[] = [TABLES.allocs, TABLES.evals, TABLES.jobs, TABLES.jobSummary];
    if (input.deployment || input.deploymentUpdates.length > 0) tables.push(TABLES.deployments, TABLES.jobVersions);
    // Stops free capacity: blocked evaluations computed before this write may now fit.
    if (input.stop.length > 0) tables.push(CAPACITY_TABLE);
    return tables;
  }

  /** One plan inside an open write (apply, applyBatch). */
  async function applyIn(w: { tx: Db; index: number; emit: (e: StateEventInput) => void }, input: Plan, outcome: EvalOutcome | null): Promise<{ full: boolean; stale: boolean; placed: number; rejected: string[] }> {
    const { tx, index, emit } = w;
    const ev = input.eval;
    {
      const now = nowNanos(deps.clock);
      const check = await engineStore.planCheck(tx, ev.Namespace, ev.JobID, input.snapshotIndex, [...new Set(input.place.map((a) => a.NodeID))]);
      if (input.job && check.jobModifyIndex !== input.jobModifyIndex) return { full: false, stale: true, placed: 0, rejected: [] as string[] };
      if (input.place.length > 0 && check.newAllocs > 0) return { full: false, stale: true, placed: 0, rejected: [] as string[] };
      const rejected = rejectedNodes(input, check.nodes, check.usage);
      const plan = withoutRejected(input, rejected);
      const full = rejected.size === 0;

      // Allocations: placements, stops (DesiredStatus stop), in-place updates.
      const writes: Allocation[] = [];
      for (const a of plan.place) writes.push({ ...a, CreateIndex: index, ModifyIndex: index, AllocModifyIndex: index, CreateTime: now, ModifyTime: now });
      for (const s of plan.stop) {
        writes.push({
          ...s.alloc,
          DesiredStatus: 'stop',
          DesiredDescription: s.description,
          ...(s.clientStatus ? { ClientStatus: s.clientStatus } : {}),
          ...(s.followupEvalId ? { FollowupEvalID: s.followupEvalId } : {}),
          ModifyIndex: index,
          AllocModifyIndex: index,
          ModifyTime: now,
        });
      }
      const stoppedIds = new Set(plan.stop.map((s) => s.alloc.ID));
      for (const a of plan.update) if (!stoppedIds.has(a.ID)) writes.push({ ...a, ModifyIndex: index, AllocModifyIndex: index, ModifyTime: now });
      await engineStore.upsertAllocs(tx, writes);
      for (const a of writes) emit(allocEvent('PlanResult', a));

      // Deployments: the current one (created or counted), and status changes of others.
      let stable: Deployment | null = null;
      if (plan.deployment) {
        const d: Deployment = { ...plan.deployment, CreateIndex: plan.deployment.CreateIndex || index, ModifyIndex: index, ModifyTime: now };
        await deps.deploymentStore.put(tx, d);
        emit(deploymentEvent('PlanResult', d));
      }
      for (const u of plan.deploymentUpdates) {
        const latest = (await deps.deploymentStore.get(tx, u.deployment.ID)) ?? u.deployment;
        if (latest.Status !== 'running' && latest.Status !== 'paused') continue;
        const base = plan.deployment && plan.deployment.ID === latest.ID ? { ...latest, TaskGroups: plan.deployment.TaskGroups } : latest;
        const d: Deployment = { ...base, Status: u.status, StatusDescription: u.description, ModifyIndex: index, ModifyTime: now };
        await deps.deploymentStore.put(tx, d);
        emit(deploymentEvent('DeploymentStatusUpdate', d));
        if (u.status === 'successful') stable = d;
      }
      if (stable) await markStable(tx, stable, index, emit);

      // Follow-up evaluations (delayed reschedules) and the evaluation's outcome, one statement.
      const evalWrites: Evaluation[] = plan.followups.map((f) => ({ ...f, CreateIndex: index, ModifyIndex: index, CreateTime: now, ModifyTime: now }));
      let queued: Record<string, number> | undefined;
      if (full && outcome) {
        const e: Evaluation = { ...outcome.eval, ModifyIndex: index, ModifyTime: now };
        evalWrites.push(e, ...(await settledWrites(tx, outcome, index, now)));
        queued = (e['QueuedAllocations'] as Record<string, number> | null) ?? undefined;
      }
      await engineStore.putEvals(tx, evalWrites);
      for (const e of evalWrites) emit(evalEvent('EvaluationUpdated', e));
      await refreshJobState(deps, { tx, index, emit }, ev.Namespace, ev.JobID, 'PlanResult', queued);
      return { full, stale: false, placed: plan.place.length, rejected: [...rejected] };
    }
  }

  async function apply(input: Plan, outcome: EvalOutcome | null): Promise<ApplyResult> {
    const { index, result } = await state.withWrite(tablesFor(input), (w) => applyIn(w, input, outcome), writeFor([input]));
    return { full: result.full, stale: result.stale, placed: result.placed, rejectedNodes: result.rejected, index };
  }

  /**
   * Several plans (of different jobs, each under its own lock) in one write: one counter
   * lock, one commit for all (group commit). Each is re-checked in turn, so a later plan
   * sees what the earlier ones placed.
   */
  async function applyBatch(items: ReadonlyArray<{ plan: Plan; outcome: EvalOutcome | null }>): Promise<ApplyResult[]> {
    const tables = [...new Set(items.flatMap((i) => tablesFor(i.plan)))];
    const { index, result } = await state.withWrite(
      tables,
      async (w) => {
        const out: Array<{ full: boolean; stale: boolean; placed: number; rejected: string[] }> = [];
        for (const i of items) out.push(await applyIn(w, i.plan, i.outcome));
        return out;
      },
      writeFor(items.map((i) => i.plan)),
    );
    return result.map((r) => ({ full: r.full, stale: r.stale, placed: r.placed, rejectedNodes: r.rejected, index }));
  }

  /** The blocked evaluation to create and the others to settle (still open ones only). */
  async function settledWrites(tx: Db, outcome: EvalOutcome, index: number, now: number): Promise<Evaluation[]> {
    const out: Evaluation[] = [];
    if (outcome.blocked) out.push({ ...outcome.blocked, CreateIndex: index, ModifyIndex: index, CreateTime: now, ModifyTime: now });
    const wanted = new Map(outcome.settled.map((s) => [s.ID, s]));
    for (const cur of await engineStore.openAmong(tx, [...wanted.keys()])) {
      const s = wanted.get(cur.ID) as Evaluation;
      out.push({ ...cur, Status: s.Status, StatusDescription: s['StatusDescription'] as string, ModifyIndex: index, ModifyTime: now });
    }
    return out;
  }

  /** A successful deployment makes its job version stable (the anchor's Job.Stable). */
  async function markStable(tx: Db, d: Deployment, index: number, emit: (e: ReturnType<typeof evalEvent> | ReturnType<typeof deploymentEvent>) => void): Promise<void> {
    void emit;
    const rec = await deps.jobStore.get(tx, d.Namespace, d.JobID);
    if (rec && rec.job.Version === d.JobVersion && !rec.job.Stable) {
      const job: Job = { ...rec.job, Stable: true, ModifyIndex: index };
      await deps.jobStore.put(tx, { job, summary: rec.summary });
      await deps.jobStore.putVersion(tx, job);
    } else {
      const versions = await deps.jobStore.versions(tx, d.Namespace, d.JobID);
      const v = versions.find((j) => j.Version === d.JobVersion);
      if (v && !v.Stable) await deps.jobStore.putVersion(tx, { ...v, Stable: true });
    }
  }

  /** Settles an evaluation without a plan (no-op plans, failures). */
  async function settle(outcome: EvalOutcome): Promise<number> {
    const ev = outcome.eval;
    const { index } = await state.withWrite(
      [TABLES.evals, TABLES.jobs, TABLES.jobSummary],
      async ({ tx, index, emit }) => {
        const now = nowNanos(deps.clock);
        const e: Evaluation = { ...ev, ModifyIndex: index, ModifyTime: now };
        const writes = [e, ...(await settledWrites(tx, outcome, index, now))];
        await engineStore.putEvals(tx, writes);
        for (const x of writes) emit(evalEvent('EvaluationUpdated', x));
        const queued = (e['QueuedAllocations'] as Record<string, number> | null) ?? undefined;
        await refreshJobState(deps, { tx, index, emit }, ev.Namespace, ev.JobID, 'EvaluationUpdated', queued);
      },
      { raw: true },
    );
    return index;
  }

  return { apply, applyBatch, settle };
}

export type PlanApplier = ReturnType<typeof createPlanApplier>;
