// Job-spec rules the scheduler applies (the anchor's structs): update strategies (group
// block, or the job's, with defaults), reschedule policies per job type, allocation names,
// and which spec changes replace an allocation (tasksUpdated) rather than update it in place.
import { asObject, type JsonObject } from '../shared/common.types';
import type { Allocation } from '../features/allocations/allocations.types';
import type { Job } from '../features/jobs/jobs.types';
import { isLiveAlloc, markedForMigration as marked } from '../features/nodes/nodes.types';

const SECOND = 1_000_000_000;

export interface UpdateStrategy {
  MaxParallel: number;
  HealthCheck: string;
  MinHealthyTime: number;
  HealthyDeadline: number;
  ProgressDeadline: number;
  AutoRevert: boolean;
  AutoPromote: boolean;
  Canary: number;
  Stagger: number;
}

function num(v: unknown, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}

/** The group's update strategy (its own block merged over the job's), null without one or
 * with max_parallel 0 (no deployments: the anchor's Update.IsEmpty). */
export function updateStrategyOf(job: Job, tg: JsonObject): UpdateStrategy | null {
  if (job.Type !== 'service') return null;
  const jobU = asObject(job['Update']);
  const tgU = asObject(tg['Update']);
  if (Object.keys(jobU).length === 0 && Object.keys(tgU).length === 0) return null;
  const u = { ...jobU, ...Object.fromEntries(Object.entries(tgU).filter(([, v]) => v !== null && v !== undefined)) };
  const s: UpdateStrategy = {
    MaxParallel: num(u['MaxParallel'], 1),
    HealthCheck: typeof u['HealthCheck'] === 'string' && u['HealthCheck'] !== '' ? u['HealthCheck'] : 'checks',
    MinHealthyTime: num(u['MinHealthyTime'], 10 * SECOND),
    HealthyDeadline: num(u['HealthyDeadline'], 300 * SECOND),
    ProgressDeadline: num(u['ProgressDeadline'], 600 * SECOND),
    AutoRevert: u['AutoRevert'] === true,
    AutoPromote: u['AutoPromote'] === true,
    Canary: num(u['Canary'], 0),
    Stagger: num(u['Stagger'], 30 * SECOND),
  };
  return s.MaxParallel > 0 ? s : null;
}

/**
 * How many allocations of a group a drain migrates at a time: the group's `migrate`
 * block's max_parallel, else the job's, else the anchor's default 1.
 */
export function migrateMaxParallel(job: Job, tg: JsonObject): number {
  const own = asObject(tg['Migrate'])['MaxParallel'];
  if (typeof own === 'number' && Number.isInteger(own) && own >= 0) return own;
  const jobs = asObject(job['Migrate'])['MaxParallel'];
  return typeof jobs === 'number' && Number.isInteger(jobs) && jobs >= 0 ? jobs : 1;
}

/**
 * The paced drain (the anchor's drainer, per task group): of a service job's allocations on
 * the draining node that are live and not yet marked, how many may be marked for migration
 * now. A group keeps at least Count - max_parallel allocations healthy: healthy means live,
 * running, not already marked and not reported unhealthy (no health report counts as
 * healthy once running; the anchor waits for the client's health report there), so the
 * next allocation moves once the replacement of the previous one runs. `allocs` are the
 * job's allocations on every node; a group the job no longer has is not paced.
 */
export function allocsToMigrate(job: Job | null, allocs: readonly Allocation[], nodeId: string): Allocation[] {
  const out: Allocation[] = [];
  const groups = new Map<string, Allocation[]>();
  for (const a of allocs) {
    const list = groups.get(a.TaskGroup);
    if (list) list.push(a);
    else groups.set(a.TaskGroup, [a]);
  }
  for (const [name, members] of groups) {
    const candidates = members.filter((a) => a.NodeID === nodeId && isLiveAlloc(a) && !marked(a));
    if (candidates.length === 0) continue;
    const tg = job?.TaskGroups.find((g) => g['Name'] === name);
    if (!job || job.Stop || !tg) {
      out.push(...candidates);
      continue;
    }
    const healthy = members.filter((a) => isLiveAlloc(a) && !marked(a) && a.ClientStatus === 'running' && asObject(a.DeploymentStatus)['Healthy'] !== false).length;
    const budget = healthy - (num(tg['Count'], 1) - migrateMaxParallel(job, tg));
    out.push(...candidates.slice(0, Math.max(0, budget)));
  }
  return out;
}

export interface ReschedulePolicy {
  Attempts: number;
  Interval: number;
  Delay: number;
  DelayFunction: string;
  MaxDelay: number;
  Unlimited: boolean;
}

/** DefaultServiceJobReschedulePolicy / DefaultBatchJobReschedulePolicy, overridden by the
 * job's and the group's reschedule blocks. System jobs are not rescheduled. */
export function reschedulePolicyOf(job: Job, tg: JsonObject): ReschedulePolicy | null {
  if (job.Type === 'system' || job.Type === 'sysbatch') return null;
  const base: ReschedulePolicy =
    job.Type === 'batch'
      ? { Attempts: 1, Interval: 24 * 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false }
      : { Attempts: 0, Interval: 0, Delay: 30 * SECOND, DelayFunction: 'exponential', MaxDelay: 3600 * SECOND, Unlimited: true };
  const merged = { ...base };
  for (const src of [asObject(job['Reschedule']), asObject(tg['ReschedulePolicy'])]) {
    for (const k of Object.keys(base) as Array<keyof ReschedulePolicy>) {
      const v = src[k];
      if (v !== undefined && v !== null) (merged as Record<string, unknown>)[k] = v;
    }
  }
  return merged;
}

interface RescheduleEvent {
  RescheduleTime: number;
  PrevAllocID: string;
  PrevNodeID: string;
  Delay: number;
}

export function rescheduleEvents(a: Allocation): RescheduleEvent[] {
  const tracker = asObject(a['RescheduleTracker']);
  return Array.isArray(tracker['Events']) ? (tracker['Events'] as RescheduleEvent[]) : [];
}

/** NextDelay: the wait before the next attempt (constant, exponential or fibonacci, capped). */
export function nextRescheduleDelay(policy: ReschedulePolicy, events: readonly RescheduleEvent[]): number {
  const n = events.length;
  let delay = policy.Delay;
  if (policy.DelayFunction === 'exponential' && n > 0) {
    const last = events[n - 1]?.Delay ?? policy.Delay;
    delay = last * 2;
  } else if (policy.DelayFunction === 'fibonacci' && n > 0) {
    const last = events[n - 1]?.Delay ?? policy.Delay;
    const before = n > 1 ? (events[n - 2]?.Delay ?? 0) : 0;
    delay = n === 1 ? policy.Delay : last + before;
  }
  if (policy.MaxDelay > 0 && delay > policy.MaxDelay) delay = policy.MaxDelay;
  return delay;
}

export type RescheduleDecision = { kind: 'now' } | { kind: 'later'; atMs: number; delayNs: number } | { kind: 'never' };

/** Whether a failed allocation is rescheduled, now or at a later time (the anchor's
 * ShouldReschedule / NextRescheduleTime). `failedAtMs`: when the client reported failure. */
export function rescheduleDecision(a: Allocation, policy: ReschedulePolicy | null, failedAtMs: number, nowMs: number): RescheduleDecision {
  if (!policy) return { kind: 'never' };
  if (!policy.Unlimited) {
    if (policy.Attempts <= 0) return { kind: 'never' };
    const windowStart = nowMs * 1e6 - policy.Interval;
    const recent = rescheduleEvents(a).filter((e) => e.RescheduleTime > windowStart).length;
    if (recent >= policy.Attempts) return { kind: 'never' };
  }
  const delayNs = nextRescheduleDelay(policy, rescheduleEvents(a));
  const atMs = failedAtMs + delayNs / 1e6;
  return atMs <= nowMs ? { kind: 'now' } : { kind: 'later', atMs, delayNs };
}

export function allocName(jobId: string, group: string, index: number): string {
  return `${jobId}.${group}[${index}]`;
}

export function allocIndex(name: string): number {
  const m = /\[(\d+)\]$/.exec(name);
  return m ? Number(m[1]) : -1;
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(stable).join(',') + ']';
  if (typeof v === 'object' && v !== null) {
    const o = v as JsonObject;
    return '{' + Object.keys(o).sort().map((k) => JSON.stringify(k) + ':' + stable(o[k])).join(',') + '}';
  }
  return JSON.stringify(v) ?? 'null';
}

/** Group fields whose change does not replace allocations (count, strategies, placement hints). */
const IN_PLACE_GROUP_FIELDS = ['Count', 'Update', 'Scaling', 'Spreads', 'Affinities', 'Constraints', 'ReschedulePolicy', 'Migrate', 'Meta', 'StopAfterClientDisconnect', 'MaxClientDisconnect'];
const IN_PLACE_TASK_FIELDS = ['Constraints', 'Affinities', 'KillTimeout', 'KillSignal', 'ShutdownDelay', 'Services'];

function destructivePart(tg: JsonObject | undefined): string {
  if (!tg) return '';
  const copy: JsonObject = { ...tg };
  for (const f of IN_PLACE_GROUP_FIELDS) delete copy[f];
  copy['Tasks'] = (Array.isArray(tg['Tasks']) ? (tg['Tasks'] as unknown[]) : []).map((t) => {
    const tc: JsonObject = { ...asObject(t) };
    for (const f of IN_PLACE_TASK_FIELDS) delete tc[f];
    return tc;
  });
  return stable(copy);
}

export function groupOf(job: Job | JsonObject | null | undefined, name: string): JsonObject | undefined {
  const groups = job && Array.isArray(job['TaskGroups']) ? (job['TaskGroups'] as unknown[]) : [];
  return groups.map(asObject).find((g) => g['Name'] === name);
}

/** tasksUpdated: does moving from `prev` to `next` need a new allocation for group `name`? */
export function tasksUpdated(prev: JsonObject | null, next: Job, name: string): boolean {
  if (!prev) return true;
  if (stable(prev['Meta'] ?? null) !== stable(next['Meta'] ?? null)) return true;
  return destructivePart(groupOf(prev, name)) !== destructivePart(groupOf(next, name));
}
