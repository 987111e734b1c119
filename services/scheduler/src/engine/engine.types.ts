// Data the scheduling engine passes between its pure steps (issue 25; docs/scheduler.md
// "Scheduling"): what an evaluation sees (a snapshot), what it decides (a plan) and the
// anchor's placement metrics (AllocMetric, reported in FailedTGAllocs).
import type { Allocation } from '../features/allocations/allocations.types';
import type { Deployment } from '../features/deployments/deployments.types';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { Job } from '../features/jobs/jobs.types';
import type { Node } from '../features/nodes/nodes.types';

/** CPU in MHz, memory and disk in MB. */
export interface Resources {
  cpu: number;
  memoryMb: number;
  diskMb: number;
}

export const NO_RESOURCES: Resources = Object.freeze({ cpu: 0, memoryMb: 0, diskMb: 0 });

export function addResources(a: Resources, b: Resources): Resources {
  return { cpu: a.cpu + b.cpu, memoryMb: a.memoryMb + b.memoryMb, diskMb: a.diskMb + b.diskMb };
}

export function subtractResources(a: Resources, b: Resources): Resources {
  return { cpu: a.cpu - b.cpu, memoryMb: a.memoryMb - b.memoryMb, diskMb: a.diskMb - b.diskMb };
}

/** What one evaluation reads: the job, its allocations, its latest deployment, every node
 * and what live allocations hold on each node, all as of `index`. */
export interface Snapshot {
  index: number;
  nowMs: number;
  job: Job | null;
  allocs: Allocation[];
  deployment: Deployment | null;
  nodes: Node[];
  /** Resources held by live (non-terminal) allocations of every job, per node ID. */
  usage: ReadonlyMap<string, Resources>;
}

/** structs.AllocMetric (the anchor's placement metrics). */
export interface AllocMetric {
  NodesEvaluated: number;
  NodesFiltered: number;
  NodesInPool: number;
  NodesAvailable: Record<string, number>;
  ClassFiltered: Record<string, number> | null;
  ConstraintFiltered: Record<string, number> | null;
  NodesExhausted: number;
  ClassExhausted: Record<string, number> | null;
  DimensionExhausted: Record<string, number> | null;
  QuotaExhausted: string[] | null;
  ResourcesExhausted: Record<string, unknown> | null;
  Scores: Record<string, number> | null;
  ScoreMetaData: Array<{ NodeID: string; Scores: Record<string, number>; NormScore: number }> | null;
  AllocationTime: number;
  CoalescedFailures: number;
}

export function emptyMetric(): AllocMetric {
  return {
    NodesEvaluated: 0,
    NodesFiltered: 0,
    NodesInPool: 0,
    NodesAvailable: {},
    ClassFiltered: null,
    ConstraintFiltered: null,
    NodesExhausted: 0,
    ClassExhausted: null,
    DimensionExhausted: null,
    QuotaExhausted: null,
    ResourcesExhausted: null,
    Scores: null,
    ScoreMetaData: null,
    AllocationTime: 0,
    CoalescedFailures: 0,
  };
}

/** An allocation the plan stops, with the anchor's DesiredDescription. */
export interface PlanStop {
  alloc: Allocation;
  description: string;
  /** Set when the stop also settles the client status (lost allocations). */
  clientStatus?: string;
  followupEvalId?: string;
}

/** Per task group counts of what the plan does (the /plan endpoint's DesiredTGUpdates). */
export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
  Reconnect?: number;
  Disconnect?: number;
  RescheduleNow?: number;
  RescheduleLater?: number;
}

export function emptyDesiredUpdates(): DesiredUpdates {
  return { Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 };
}

/**
 * The outcome of one evaluation, as data (ARCHITECTURE "Scheduling": plans are data,
 * testable without a database). The applier re-checks it against the latest state.
 */
export interface Plan {
  eval: Evaluation;
  job: Job | null;
  /** The job's JobModifyIndex the plan was computed for (0: no job). */
  jobModifyIndex: number;
  snapshotIndex: number;
  /** New allocations (indexes are stamped by the applier). */
  place: Allocation[];
  /** Existing allocations updated without a new placement (in-place updates, trackers). */
  update: Allocation[];
  stop: PlanStop[];
  /** A deployment created or changed by this plan. */
  deployment: Deployment | null;
  /** Status changes of other deployments (cancelled because the job changed or stopped). */
  deploymentUpdates: Array<{ deployment: Deployment; status: string; description: string }>;
  annotations: Record<string, DesiredUpdates>;
  /** Task group -> allocations the plan could not place (with their metric). */
  failed: Record<string, AllocMetric>;
  /** Task group -> allocations still to place after this plan (the eval's QueuedAllocations). */
  queued: Record<string, number>;
  /** Evaluations to create with the plan (delayed reschedules). */
  followups: Evaluation[];
}

export function emptyPlan(ev: Evaluation, job: Job | null, snapshotIndex: number): Plan {
  return {
    eval: ev,
    job,
    jobModifyIndex: job?.JobModifyIndex ?? 0,
    snapshotIndex,
    place: [],
    update: [],
    stop: [],
    deployment: null,
    deploymentUpdates: [],
    annotations: {},
    failed: {},
    queued: {},
    followups: [],
  };
}

export function isNoOpPlan(p: Plan): boolean {
  return p.place.length === 0 && p.update.length === 0 && p.stop.length === 0 && p.deployment === null && p.deploymentUpdates.length === 0;
}
