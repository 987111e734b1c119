// One evaluation turned into a plan (the anchor's GenericScheduler and SystemScheduler),
// from a snapshot, without I/O: reconcile, then place each requested allocation through
// the placement stack. The plan applier re-checks and commits it.
import { asObject, GO_ZERO_TIME, newId, type JsonObject } from '../shared/common.types';
import type { Allocation } from '../features/allocations/allocations.types';
import type { Deployment } from '../features/deployments/deployments.types';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { Job } from '../features/jobs/jobs.types';
import type { Node } from '../features/nodes/nodes.types';
import { emptyDesiredUpdates, emptyPlan, type AllocMetric, type Plan, type Resources, type Snapshot } from './engine.types';
import { allocName, rescheduleEvents, tasksUpdated } from './job-rules';
import { candidateNodes, isSchedulable } from './placement/feasibility';
import { allocatedResources, taskGroupAsk } from './placement/resources';
import { PlacementStack, seedOf } from './placement/stack';
import { ALLOC_DESC, DEPLOYMENT_DESC, reconcile, type PlaceRequest } from './reconcile';
import { allocResourceTotals } from '../features/allocations/allocations.types';

export const SCHEDULER_TYPES = ['service', 'batch', 'system', 'sysbatch'];

const LIVE_CLIENT = (a: Allocation) => a.DesiredStatus === 'run' && !['complete', 'failed', 'lost'].includes(a.ClientStatus);

export interface NewAllocInput {
  job: Job;
  group: JsonObject;
  name: string;
  node: Node;
  eval: Evaluation;
  metric: AllocMetric;
  nowMs: number;
  deploymentId: string;
  canary: boolean;
  previous?: Allocation;
  reschedule?: boolean;
}

/** A new allocation as the anchor writes it (indexes are stamped by the applier). */
export function newAllocation(i: NewAllocInput): Allocation {
  const now = i.nowMs * 1e6;
  const tracker = i.previous && i.reschedule
    ? {
        Events: [
          ...rescheduleEvents(i.previous),
          { RescheduleTime: now, PrevAllocID: i.previous.ID, PrevNodeID: i.previous.NodeID, Delay: 0 },
        ],
        LastReschedule: 'ok',
      }
    : null;
  return {
    ID: newId(),
    Namespace: i.job.Namespace,
    EvalID: i.eval.ID,
    Name: i.name,
    NodeID: i.node.ID,
    NodeName: i.node.Name,
    JobID: i.job.ID,
    Job: i.job,
    TaskGroup: String(i.group['Name']),
    AllocatedResources: allocatedResources(i.group),
    Metrics: i.metric,
    DesiredStatus: 'run',
    DesiredDescription: '',
    DesiredTransition: { Migrate: null, Reschedule: null, ForceReschedule: null, NoShutdownDelay: null },
    ClientStatus: 'pending',
    ClientDescription: '',
    TaskStates: null,
    DeploymentID: i.deploymentId,
    DeploymentStatus: i.canary ? { Healthy: null, Timestamp: GO_ZERO_TIME, Canary: true, ModifyIndex: 0 } : null,
    PreviousAllocation: i.previous?.ID ?? '',
    NextAllocation: '',
    RescheduleTracker: tracker,
    FollowupEvalID: '',
    PreemptedAllocations: null,
    PreemptedByAllocation: '',
    AllocModifyIndex: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: now,
    ModifyTime: now,
  } as Allocation;
}

function coalesce(metric: AllocMetric, prev: AllocMetric | undefined): AllocMetric {
  if (!prev) return metric;
  return { ...prev, CoalescedFailures: prev.CoalescedFailures + 1 };
}

function proposedOf(allocs: readonly Allocation[], stopIds: ReadonlySet<string>) {
  return allocs.filter((a) => LIVE_CLIENT(a) && !stopIds.has(a.ID)).map((a) => ({ nodeId: a.NodeID, taskGroup: a.TaskGroup }));
}

function usageAfterStops(usage: ReadonlyMap<string, Resources>, stops: readonly Allocation[]): Map<string, Resources> {
  const out = new Map(usage);
  for (const a of stops) {
    if (!LIVE_CLIENT(a)) continue;
    const r = allocResourceTotals(a);
    const u = out.get(a.NodeID);
    if (u) out.set(a.NodeID, { cpu: u.cpu - r.cpu, memoryMb: u.memoryMb - r.memoryMb, diskMb: u.diskMb - r.diskMb });
  }
  return out;
}

/** Service and batch jobs (GenericScheduler.computeJobAllocs + computePlacements). */
function genericPlan(snap: Snapshot, ev: Evaluation): Plan {
  const job = snap.job;
  const plan = emptyPlan(ev, job, snap.index);
  const nodes = new Map(snap.nodes.map((n) => [n.ID, n]));
  const r = reconcile({ job, eval: ev, allocs: snap.allocs, deployment: snap.deployment, nodes, nowMs: snap.nowMs });
  plan.stop = r.stop;
  plan.update = [...r.inPlace, ...r.annotate];
  plan.followups = r.followups;
  plan.annotations = r.desired;
  plan.deploymentUpdates = r.deploymentUpdates;
  if (!job || job.Stop) {
    for (const g of (job?.TaskGroups ?? []) as JsonObject[]) plan.queued[String(g['Name'])] = 0;
    return plan;
  }
  for (const g of job.TaskGroups) plan.queued[String(g['Name'])] = 0;

  const stopIds = new Set(r.stop.map((s) => s.alloc.ID));
  const stack = new PlacementStack({
    job,
    nodes: snap.nodes,
    usage: usageAfterStops(snap.usage, r.stop.map((s) => s.alloc)),
    proposed: proposedOf(snap.allocs, stopIds),
    seed: seedOf(ev.ID),
  });
  const deployment: Deployment | null = r.deployment;
  const previousNext = new Map<string, string>();
  for (const p of r.place) {
    const name = String(p.group['Name']);
    const penalty = p.reschedule && p.previous ? new Set([p.previous.NodeID]) : undefined;
    const sel = stack.select(p.group, penalty ? { penaltyNodes: penalty } : {});
    if (!sel.node) {
      plan.failed[name] = coalesce(sel.metric, plan.failed[name]);
      plan.queued[name] = (plan.queued[name] ?? 0) + 1;
      continue;
    }
    const alloc = newAllocation({
      job,
      group: p.group,
      name: p.name,
      node: sel.node,
      eval: ev,
      metric: sel.metric,
      nowMs: snap.nowMs,
      deploymentId: p.inDeployment && deployment ? deployment.ID : '',
      canary: p.canary === true,
      ...(p.previous ? { previous: p.previous } : {}),
      ...(p.reschedule ? { reschedule: true } : {}),
    });
    plan.place.push(alloc);
    if (p.previous) previousNext.set(p.previous.ID, alloc.ID);
    if (deployment && p.inDeployment) {
      const tg = deployment.TaskGroups[name];
      if (tg) {
        const progressBy = tg.ProgressDeadline > 0 ? new Date(snap.nowMs + tg.ProgressDeadline / 1e6).toISOString() : null;
        deployment.TaskGroups[name] = {
          ...tg,
          PlacedAllocs: tg.PlacedAllocs + 1,
          PlacedCanaries: p.canary ? [...(tg.PlacedCanaries ?? []), alloc.ID] : tg.PlacedCanaries,
          RequireProgressBy: progressBy ?? tg.RequireProgressBy,
        };
      }
    }
  }
  // The replaced allocation points at its replacement (NextAllocation).
  plan.stop = plan.stop.map((s) => {
    const next = previousNext.get(s.alloc.ID);
    return next ? { ...s, alloc: { ...s.alloc, NextAllocation: next } } : s;
  });
  if (deployment && (r.deploymentCreated || plan.place.some((a) => a.DeploymentID === deployment.ID) || r.inPlace.length > 0 || deploymentChanged(snap.deployment, deployment))) {
    plan.deployment = deployment;
  }
  return plan;
}

function deploymentChanged(before: Deployment | null, after: Deployment): boolean {
  return !before || before.ID !== after.ID || JSON.stringify(before.TaskGroups) !== JSON.stringify(after.TaskGroups);
}

/** System and sysbatch jobs: one allocation per task group on every feasible node. */
function systemPlan(snap: Snapshot, ev: Evaluation): Plan {
  const job = snap.job;
  const plan = emptyPlan(ev, job, snap.index);
  const nodes = new Map(snap.nodes.map((n) => [n.ID, n]));
  const stopped = !job || job.Stop;
  const groups = stopped ? [] : (job.TaskGroups as JsonObject[]);
  const groupNames = new Set(groups.map((g) => String(g['Name'])));
  const live = snap.allocs.filter(LIVE_CLIENT);
  const keep: Allocation[] = [];
  for (const a of live) {
    const d = (plan.annotations[a.TaskGroup] ??= emptyDesiredUpdates());
    const node = nodes.get(a.NodeID);
    if (stopped || !groupNames.has(a.TaskGroup)) {
      plan.stop.push({ alloc: a, description: ALLOC_DESC.notNeeded });
      d.Stop++;
    } else if (!node || node.Status === 'down') {
      plan.stop.push({ alloc: a, description: ALLOC_DESC.lost, clientStatus: 'lost' });
      d.Stop++;
    } else if (node.DrainStrategy && asObject(asObject(node.DrainStrategy)['DrainSpec'])['IgnoreSystemJobs'] !== true) {
      plan.stop.push({ alloc: a, description: ALLOC_DESC.nodeTainted });
      d.Migrate++;
    } else keep.push(a);
  }
  if (stopped || !job) {
    for (const g of (job?.TaskGroups ?? []) as JsonObject[]) plan.queued[String(g['Name'])] = 0;
    if (snap.deployment && snap.deployment.Status === 'running') {
      plan.deploymentUpdates.push({ deployment: snap.deployment, status: 'cancelled', description: DEPLOYMENT_DESC.stoppedJob });
    }
    return plan;
  }
  const candidates = candidateNodes(snap.nodes, job).nodes;
  const stopIds = new Set(plan.stop.map((s) => s.alloc.ID));
  for (const g of groups) {
    const name = String(g['Name']);
    plan.queued[name] = 0;
    const d = (plan.annotations[name] ??= emptyDesiredUpdates());
    const onNode = new Map<string, Allocation>();
    for (const a of keep) if (a.TaskGroup === name) onNode.set(a.NodeID, a);
    for (const a of onNode.values()) {
      if (a.Job?.['Version'] === job.Version && a.Job?.['CreateIndex'] === job.CreateIndex) d.Ignore++;
      else if (tasksUpdated(asObject(a.Job), job, name)) {
        plan.stop.push({ alloc: a, description: ALLOC_DESC.updating });
        stopIds.add(a.ID);
        d.DestructiveUpdate++;
      } else {
        plan.update.push({ ...a, Job: job });
        d.InPlaceUpdate++;
      }
    }
  }
  const stack = new PlacementStack({
    job,
    nodes: snap.nodes,
    usage: usageAfterStops(snap.usage, plan.stop.map((s) => s.alloc)),
    proposed: proposedOf(snap.allocs, stopIds),
    seed: seedOf(ev.ID),
  });
  for (const node of candidates) {
    if (!isSchedulable(node)) continue;
    for (const g of groups) {
      const name = String(g['Name']);
      const existing = keep.find((a) => a.NodeID === node.ID && a.TaskGroup === name && !stopIds.has(a.ID));
      if (existing) continue;
      const sel = stack.select(g, { onlyNode: node.ID });
      if (!sel.node) {
        // Nodes filtered by constraints are not failures of a system job; exhausted ones are.
        if (sel.metric.NodesExhausted > 0) {
          plan.failed[name] = coalesce(sel.metric, plan.failed[name]);
          plan.queued[name] = (plan.queued[name] ?? 0) + 1;
        }
        continue;
      }
      const replaced = plan.stop.find((s) => s.alloc.NodeID === node.ID && s.alloc.TaskGroup === name);
      plan.place.push(
        newAllocation({
          job,
          group: g,
          name: allocName(job.ID, name, 0),
          node: sel.node,
          eval: ev,
          metric: sel.metric,
          nowMs: snap.nowMs,
          deploymentId: '',
          canary: false,
          ...(replaced ? { previous: replaced.alloc } : {}),
        }),
      );
      (plan.annotations[name] ??= emptyDesiredUpdates()).Place++;
    }
  }
  return plan;
}

/** The plan for one evaluation. */
export function computePlan(snap: Snapshot, ev: Evaluation): Plan {
  const type = snap.job?.Type ?? ev.Type;
  return type === 'system' || type === 'sysbatch' ? systemPlan(snap, ev) : genericPlan(snap, ev);
}

/** What the plan asks of each node (for the applier's capacity re-check). */
export function planAskByNode(plan: Plan): Map<string, Resources> {
  const out = new Map<string, Resources>();
  for (const a of plan.place) {
    const g = (a.Job?.['TaskGroups'] as JsonObject[] | undefined)?.find((x) => x['Name'] === a.TaskGroup);
    const r = g ? taskGroupAsk(g) : allocResourceTotals(a);
    const u = out.get(a.NodeID) ?? { cpu: 0, memoryMb: 0, diskMb: 0 };
    out.set(a.NodeID, { cpu: u.cpu + r.cpu, memoryMb: u.memoryMb + r.memoryMb, diskMb: u.diskMb + r.diskMb });
  }
  return out;
}

export type { PlaceRequest };
