// The reconciler for service and batch jobs (the anchor's scheduler/reconciler,
// reconcile_cluster.go): compares the job's desired state with its allocations and the
// nodes they run on, and decides what to place, stop, update in place, replace (rolling,
// with canaries), reschedule now or later, and how the job's deployment moves. Pure.
import { asObject, GO_ZERO_TIME, newId, type JsonObject } from '../shared/common.types';
import type { Allocation } from '../features/allocations/allocations.types';
import type { Deployment, DeploymentTaskGroup } from '../features/deployments/deployments.types';
import { newEvaluation } from '../features/evaluations/eval-factory';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { Job } from '../features/jobs/jobs.types';
import { markedForMigration, type Node } from '../features/nodes/nodes.types';
import { emptyDesiredUpdates, type DesiredUpdates, type PlanStop } from './engine.types';
import {
  allocIndex,
  allocName,
  reschedulePolicyOf,
  rescheduleDecision,
  tasksUpdated,
  updateStrategyOf,
  type UpdateStrategy,
} from './job-rules';

/** The anchor's allocation DesiredDescription strings (scheduler/structs/const.go). */
export const ALLOC_DESC = {
  notNeeded: 'alloc not needed due to job update',
  migrating: 'alloc is being migrated',
  updating: 'alloc is being updated due to job update',
  lost: 'alloc is lost since its node is down',
  nodeTainted: 'alloc not needed as node is tainted',
  rescheduled: 'alloc was rescheduled because it failed',
} as const;

export const DEPLOYMENT_DESC = {
  running: 'Deployment is running',
  needsPromotion: 'Deployment is running but requires manual promotion',
  autoPromotion: 'Deployment is running pending automatic promotion',
  paused: 'Deployment is paused',
  successful: 'Deployment completed successfully',
  stoppedJob: 'Cancelled because job is stopped',
  newerJob: 'Cancelled due to newer version of job',
  failedAllocations: 'Failed due to unhealthy allocations',
  progressDeadline: 'Failed due to progress deadline',
  failedByUser: 'Deployment marked as failed',
} as const;

export const RESCHEDULE_FOLLOWUP_DESC = 'created for delayed rescheduling';

export interface PlaceRequest {
  group: JsonObject;
  name: string;
  previous?: Allocation;
  reschedule?: boolean;
  canary?: boolean;
  /** Counted by the deployment (new version under a rolling update). */
  inDeployment: boolean;
}

export interface ReconcileInput {
  job: Job | null;
  eval: Evaluation;
  allocs: readonly Allocation[];
  deployment: Deployment | null;
  nodes: ReadonlyMap<string, Node>;
  nowMs: number;
}

export interface ReconcileResult {
  place: PlaceRequest[];
  stop: PlanStop[];
  /** Allocations moved to the new job version without being replaced. */
  inPlace: Allocation[];
  /** Other allocation changes (FollowupEvalID annotations). */
  annotate: Allocation[];
  /** The deployment of the current job version, created or updated (null: none needed). */
  deployment: Deployment | null;
  deploymentCreated: boolean;
  deploymentUpdates: Array<{ deployment: Deployment; status: string; description: string }>;
  followups: Evaluation[];
  desired: Record<string, DesiredUpdates>;
}

const CLIENT_TERMINAL = new Set(['complete', 'failed', 'lost']);

function failedAtMs(a: Allocation): number {
  let latest = 0;
  for (const ts of Object.values(asObject(a['TaskStates']))) {
    const finished = asObject(ts)['FinishedAt'];
    if (typeof finished === 'string' && !finished.startsWith('0001-')) {
      const ms = Date.parse(finished);
      if (Number.isFinite(ms) && ms > latest) latest = ms;
    }
  }
  return latest > 0 ? latest : Math.floor(Number(a.ModifyTime) / 1e6);
}

function hasNext(a: Allocation): boolean {
  return typeof a['NextAllocation'] === 'string' && a['NextAllocation'] !== '';
}

function jobOf(a: Allocation): JsonObject {
  return asObject(a.Job);
}

/** Same job instance and version as `job` (JobModifyIndex identifies the spec written). */
function isCurrent(a: Allocation, job: Job): boolean {
  const aj = jobOf(a);
  return aj['Version'] === job.Version && aj['CreateIndex'] === job.CreateIndex;
}

function healthy(a: Allocation): boolean | null {
  const h = asObject(a.DeploymentStatus)['Healthy'];
  return typeof h === 'boolean' ? h : null;
}

function isCanary(a: Allocation): boolean {
  return asObject(a.DeploymentStatus)['Canary'] === true;
}

/** The latest deployment when it tracks this job version (else null). */
export function deploymentForVersion(d: Deployment | null, job: Job): Deployment | null {
  if (!d) return null;
  return d.JobVersion === job.Version && d.JobCreateIndex === job.CreateIndex ? d : null;
}

function newDeployment(job: Job, eval_: Evaluation, nowMs: number): Deployment {
  return {
    ID: newId(),
    Namespace: job.Namespace,
    JobID: job.ID,
    JobVersion: job.Version,
    JobModifyIndex: job.JobModifyIndex,
    JobSpecModifyIndex: job.JobModifyIndex,
    JobCreateIndex: job.CreateIndex,
    IsMultiregion: false,
    TaskGroups: {},
    Status: 'running',
    StatusDescription: DEPLOYMENT_DESC.running,
    EvalPriority: eval_.Priority,
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: nowMs * 1e6,
    ModifyTime: nowMs * 1e6,
  };
}

function groupState(d: Deployment, name: string, u: UpdateStrategy, count: number): DeploymentTaskGroup {
  const existing = d.TaskGroups[name];
  if (existing) return existing;
  const tg: DeploymentTaskGroup = {
    AutoRevert: u.AutoRevert,
    AutoPromote: u.AutoPromote,
    ProgressDeadline: u.ProgressDeadline,
    RequireProgressBy: null,
    Promoted: false,
    PlacedCanaries: null,
    DesiredCanaries: 0,
    DesiredTotal: count,
    PlacedAllocs: 0,
    HealthyAllocs: 0,
    UnhealthyAllocs: 0,
  } as DeploymentTaskGroup;
  d.TaskGroups = { ...d.TaskGroups, [name]: tg };
  return tg;
}

export function reconcile(input: ReconcileInput): ReconcileResult {
  const { job, allocs, nodes, nowMs } = input;
  const out: ReconcileResult = {
    place: [],
    stop: [],
    inPlace: [],
    annotate: [],
    deployment: null,
    deploymentCreated: false,
    deploymentUpdates: [],
    followups: [],
    desired: {},
  };
  const stopped = !job || job.Stop;
  const groups = stopped ? [] : (job.TaskGroups as JsonObject[]);
  const groupNames = new Set(groups.map((g) => String(g['Name'])));

  // Deployments: a stopped job cancels its active one; older versions' are cancelled at
  // register (jobs.service), in case one slipped through they are cancelled here too.
  const latest = input.deployment;
  if (latest && (latest.Status === 'running' || latest.Status === 'paused')) {
    if (stopped) out.deploymentUpdates.push({ deployment: latest, status: 'cancelled', description: DEPLOYMENT_DESC.stoppedJob });
    else if (!deploymentForVersion(latest, job)) out.deploymentUpdates.push({ deployment: latest, status: 'cancelled', description: DEPLOYMENT_DESC.newerJob });
  }
  let deployment: Deployment | null = stopped ? null : deploymentForVersion(latest, job);
  if (deployment) deployment = { ...deployment, TaskGroups: { ...deployment.TaskGroups } };
  const deploymentActive = deployment !== null && deployment.Status === 'running';
  const deploymentHalted = deployment !== null && (deployment.Status === 'paused' || deployment.Status === 'failed' || deployment.Status === 'cancelled');

  // Allocations of groups that no longer exist (or of a stopped job) are stopped.
  for (const a of allocs) {
    if (a.DesiredStatus !== 'run' || CLIENT_TERMINAL.has(a.ClientStatus)) continue;
    if (stopped || !groupNames.has(a.TaskGroup)) {
      out.stop.push({ alloc: a, description: ALLOC_DESC.notNeeded });
      const d = (out.desired[a.TaskGroup] ??= emptyDesiredUpdates());
      d.Stop++;
    }
  }
  if (stopped || !job) return out;

  let deploymentComplete = true;
  let anyDeploymentWork = false;
  for (const tg of groups) {
    const name = String(tg['Name']);
    const desired = (out.desired[name] ??= emptyDesiredUpdates());
    const count = typeof tg['Count'] === 'number' ? tg['Count'] : 1;
    const update = updateStrategyOf(job, tg);
    const policy = reschedulePolicyOf(job, tg);
    const mine = allocs.filter((a) => a.TaskGroup === name);

    const live: Allocation[] = [];
    const occupying: Allocation[] = []; // terminal allocations that keep their name (batch done, failed for good, reschedule later)
    const replacements: Array<{ prev: Allocation; reschedule: boolean; lostEarlier?: boolean }> = [];
    for (const a of mine) {
      if (a.DesiredStatus !== 'run') {
        // Lost with its node (engine/node-evals.ts stops it in the node's write): replaced
        // under its name, once (its NextAllocation then names the replacement).
        if (a.ClientStatus === 'lost' && a.DesiredDescription === ALLOC_DESC.lost && !hasNext(a)) replacements.push({ prev: a, reschedule: false, lostEarlier: true });
        continue;
      }
      const node = nodes.get(a.NodeID);
      if (!CLIENT_TERMINAL.has(a.ClientStatus)) {
        if (!node || node.Status === 'down') {
          out.stop.push({ alloc: a, description: ALLOC_DESC.lost, clientStatus: 'lost' });
          desired.Stop++;
          replacements.push({ prev: a, reschedule: false });
        } else if (markedForMigration(a)) {
          // Marked to move: by a drain (node-evals.ts: service work paced by the groups'
          // migrate blocks, everything when forced or at the deadline, as the anchor's
          // drainer) or by an allocation stop.
          // Unmarked allocations on a draining node stay (the anchor's filterByTainted).
          out.stop.push({ alloc: a, description: ALLOC_DESC.migrating });
          desired.Migrate++;
          replacements.push({ prev: a, reschedule: false });
        } else live.push(a);
        continue;
      }
      if (a.ClientStatus === 'complete') {
        // Batch work that finished keeps its slot; a service allocation that exited is replaced.
        if (job.Type === 'batch') occupying.push(a);
        continue;
      }
      if (a.ClientStatus !== 'failed' || (typeof a['NextAllocation'] === 'string' && a['NextAllocation'] !== '')) continue;
      // evaluate with ForceReschedule: now, whatever the policy says.
      const decision = asObject(a.DesiredTransition)['ForceReschedule'] === true ? { kind: 'now' as const } : rescheduleDecision(a, policy, failedAtMs(a), nowMs);
      if (decision.kind === 'now') {
        out.stop.push({ alloc: a, description: ALLOC_DESC.rescheduled });
        desired.RescheduleNow = (desired.RescheduleNow ?? 0) + 1;
        replacements.push({ prev: a, reschedule: true });
      } else if (decision.kind === 'later') {
        occupying.push(a);
        desired.RescheduleLater = (desired.RescheduleLater ?? 0) + 1;
        if (typeof a['FollowupEvalID'] !== 'string' || a['FollowupEvalID'] === '') {
          const ev = newEvaluation(
            {
              namespace: job.Namespace,
              jobId: job.ID,
              jobModifyIndex: job.JobModifyIndex,
              type: job.Type,
              priority: job.Priority,
              triggeredBy: 'alloc-failure',
              index: 0,
            },
            { nowMs: () => nowMs },
          );
          ev.StatusDescription = RESCHEDULE_FOLLOWUP_DESC;
          ev.WaitUntil = new Date(decision.atMs).toISOString();
          ev.PreviousEval = input.eval.ID;
          out.followups.push(ev);
          out.annotate.push({ ...a, FollowupEvalID: ev.ID });
        }
      } else occupying.push(a);
    }

    // Versions: allocations of an older spec are updated in place or replaced.
    let dstate: DeploymentTaskGroup | null = deployment ? (deployment.TaskGroups[name] ?? null) : null;
    const old = live.filter((a) => !isCurrent(a, job));
    const current = live.filter((a) => isCurrent(a, job));
    const destructive: Allocation[] = [];
    for (const a of old) {
      if (tasksUpdated(jobOf(a), job, name)) destructive.push(a);
      else {
        out.inPlace.push({ ...a, Job: job, DeploymentID: deployment?.ID ?? a.DeploymentID });
        desired.InPlaceUpdate++;
        current.push(a);
      }
    }

    // Canaries: a rolling update with canaries first places them beside the old set.
    const canaries = current.filter((a) => isCanary(a) && deployment !== null && a.DeploymentID === deployment.ID);
    const promoted = dstate?.Promoted === true;
    const wantCanaries = update !== null && update.Canary > 0 && destructive.length > 0 && !promoted && !deploymentHalted;
    const needDeployment = update !== null && !deploymentHalted && (deployment === null || deploymentActive);
    if (needDeployment && deployment === null && (destructive.length > 0 || current.length + occupying.length < count)) {
      deployment = newDeployment(job, input.eval, nowMs);
      out.deploymentCreated = true;
    }
    if (deployment && update) {
      dstate = groupState(deployment, name, update, count);
      dstate = { ...dstate, DesiredTotal: count };
      if (wantCanaries) dstate.DesiredCanaries = update.Canary;
      deployment.TaskGroups = { ...deployment.TaskGroups, [name]: dstate };
    }
    const canDeploy = deployment !== null && deployment.Status === 'running';

    if (wantCanaries && canDeploy) {
      const missing = update.Canary - canaries.length;
      const names = destructive.map((a) => a.Name).sort((x, y) => allocIndex(x) - allocIndex(y));
      for (let i = 0; i < missing; i++) {
        const nm = names[i % Math.max(1, names.length)] ?? allocName(job.ID, name, i);
        out.place.push({ group: tg, name: nm, canary: true, inDeployment: true });
        desired.Canary++;
      }
    }

    // Who holds a slot: the current version (canaries only once promoted), the old
    // allocations, and terminal ones that keep their name.
    const unpromotedCanaries = !promoted && update !== null && update.Canary > 0 && destructive.length > 0;
    const currentHolding = current.filter((a) => !(unpromotedCanaries && isCanary(a)));
    const used = new Set<number>();
    const claim = (a: Allocation): boolean => {
      const i = allocIndex(a.Name);
      if (i < 0 || i >= count || used.has(i)) return false;
      used.add(i);
      return true;
    };
    const extras: Allocation[] = [];
    // Current allocations claim names first, so an old one sharing a name is the extra.
    const byIndex = [...currentHolding.sort((x, y) => allocIndex(x.Name) - allocIndex(y.Name)), ...occupying, ...destructive.slice().sort((x, y) => allocIndex(x.Name) - allocIndex(y.Name))];
    for (const a of byIndex) if (!claim(a)) extras.push(a);
    // Over the count: stop live extras, old versions first, highest index first.
    let over = currentHolding.length + occupying.length + destructive.length - count;
    const stoppable = [...extras.slice().sort((x, y) => allocIndex(y.Name) - allocIndex(x.Name)), ...byIndex.filter((a) => !extras.includes(a)).reverse()]
      .filter((a) => live.includes(a))
      .sort((x, y) => Number(isCurrent(x, job)) - Number(isCurrent(y, job)));
    const overStopped = new Set<string>();
    for (const a of stoppable) {
      if (over <= 0) break;
      out.stop.push({ alloc: a, description: ALLOC_DESC.notNeeded });
      overStopped.add(a.ID);
      desired.Stop++;
      over--;
      if (!extras.includes(a)) used.delete(allocIndex(a.Name));
    }

    // Destructive updates, limited by max_parallel minus what is still in flight.
    const remainingOld = destructive.filter((a) => !overStopped.has(a.ID));
    let replace: Allocation[] = [];
    if (remainingOld.length > 0) {
      if (update === null) replace = remainingOld;
      else if (canDeploy && (promoted || update.Canary === 0)) {
        const inFlight = current.filter((a) => a.DeploymentID === deployment?.ID && healthy(a) !== true && !(isCanary(a) && promoted)).length;
        const limit = Math.max(0, update.MaxParallel - inFlight);
        replace = remainingOld.slice().sort((x, y) => allocIndex(x.Name) - allocIndex(y.Name)).slice(0, limit);
      }
    }
    const replacedIds = new Set(replace.map((a) => a.ID));
    const keptOld = remainingOld.filter((a) => !replacedIds.has(a.ID));
    for (const a of replace) if (!extras.includes(a)) used.delete(allocIndex(a.Name));

    // Replaced allocations stop; each is replaced while the count still needs it.
    let need = count - used.size;
    const freeName = (preferred: string): string => {
      const i = allocIndex(preferred);
      if (i >= 0 && i < count && !used.has(i)) {
        used.add(i);
        return preferred;
      }
      for (let k = 0; k < count; k++) {
        if (!used.has(k)) {
          used.add(k);
          return allocName(job.ID, name, k);
        }
      }
      return preferred;
    };
    for (const a of replace) {
      out.stop.push({ alloc: a, description: ALLOC_DESC.updating });
      desired.DestructiveUpdate++;
      if (need > 0) {
        out.place.push({ group: tg, name: freeName(a.Name), previous: a, inDeployment: deployment !== null });
        need--;
      }
    }
    const stoppedIds = new Set(out.stop.map((st) => st.alloc.ID));
    const inPlaceIds = new Set(out.inPlace.map((a) => a.ID));
    desired.Ignore += live.filter((a) => !stoppedIds.has(a.ID) && !inPlaceIds.has(a.ID)).length;

    // Lost, migrated and rescheduled allocations are replaced under their names.
    for (const r of replacements) {
      if (need <= 0) break;
      const i = allocIndex(r.prev.Name);
      if (i >= count || used.has(i)) continue;
      used.add(i);
      need--;
      out.place.push({ group: tg, name: r.prev.Name, previous: r.prev, reschedule: r.reschedule, inDeployment: deployment !== null && canDeploy });
      // Already stopped: written again only to point at its replacement.
      if (r.lostEarlier) out.stop.push({ alloc: r.prev, description: ALLOC_DESC.lost, clientStatus: 'lost' });
      if (!r.reschedule) desired.Place++;
    }
    // Missing names are placed (not while a halted deployment holds the new version back).
    const mayPlace = !(deploymentHalted && update !== null);
    for (let i = 0; i < count && mayPlace && need > 0; i++) {
      if (used.has(i)) continue;
      used.add(i);
      need--;
      out.place.push({ group: tg, name: allocName(job.ID, name, i), inDeployment: deployment !== null && canDeploy });
      desired.Place++;
    }

    if (deployment && dstate && update) {
      const placedNew = out.place.filter((p) => p.group === tg && p.inDeployment).length;
      if (placedNew > 0 || replace.length > 0 || keptOld.length > 0 || (wantCanaries && !promoted)) anyDeploymentWork = true;
      const groupDone = dstate.HealthyAllocs >= dstate.DesiredTotal && (dstate.DesiredCanaries === 0 || dstate.Promoted) && keptOld.length === 0 && placedNew === 0;
      if (!groupDone) deploymentComplete = false;
    }
  }

  if (deployment) {
    if (out.deploymentCreated) {
      const needsPromotion = Object.values(deployment.TaskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted);
      if (needsPromotion) {
        deployment.StatusDescription = Object.values(deployment.TaskGroups).every((g) => g.DesiredCanaries === 0 || g.AutoPromote)
          ? DEPLOYMENT_DESC.autoPromotion
          : DEPLOYMENT_DESC.needsPromotion;
      }
    } else if (deployment.Status === 'running' && deploymentComplete && !anyDeploymentWork) {
      out.deploymentUpdates.push({ deployment, status: 'successful', description: DEPLOYMENT_DESC.successful });
    }
    out.deployment = deployment;
  }
  return out;
}

export { GO_ZERO_TIME };
