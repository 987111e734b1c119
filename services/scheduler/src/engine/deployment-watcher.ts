// The deployment watcher (the anchor's nomad/deploymentwatcher): allocation health moves
// a deployment. A healthy allocation counts and extends the progress deadline, and asks
// the scheduler to continue the rollout (a `deployment-watcher` evaluation, which also
// marks the deployment successful once every group is healthy and promoted); canaries all
// healthy with auto_promote promote the deployment; an unhealthy allocation or a passed
// progress deadline fails it, rolling back to the latest stable job version when
// auto_revert is set. Runs inside the write that changed the health (or the deadline
// timer's write), so the deployment never lags the allocations it counts.
import type { Allocation } from '../features/allocations/allocations.types';
import { asObject, nowNanos, type Clock } from '../shared/common.types';
import type { DeploymentStore } from '../features/deployments/deployments.store';
import type { Deployment, DeploymentTaskGroup } from '../features/deployments/deployments.types';
import { evalEvent, newEvaluation } from '../features/evaluations/eval-factory';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import { jobSpecChanged } from '../features/jobs/job-spec';
import { deploymentEvent, jobEvent } from '../features/jobs/jobs.service';
import type { JobStore } from '../features/jobs/jobs.store';
import type { Job } from '../features/jobs/jobs.types';
import type { WriteScope } from './job-state';
import { DEPLOYMENT_DESC } from './reconcile';

export interface WatcherDeps {
  jobStore: JobStore;
  evalStore: EvaluationStore;
  deploymentStore: DeploymentStore;
  clock: Clock;
}

export interface WatcherResult {
  deployment: Deployment;
  /** The job version an auto-revert registered again, if any. */
  revertedVersion: number | null;
  /** The evaluation created to continue (or roll back), '' for none. */
  evalId: string;
}

export interface HealthChange {
  before: Allocation;
  after: Allocation;
}

export function healthOf(a: Allocation): boolean | null {
  const h = asObject(a.DeploymentStatus)['Healthy'];
  return typeof h === 'boolean' ? h : null;
}

/** Counts of a group after health changes (HealthyAllocs / UnhealthyAllocs). */
export function countHealth(tg: DeploymentTaskGroup, changes: readonly HealthChange[]): DeploymentTaskGroup {
  let healthy = tg.HealthyAllocs;
  let unhealthy = tg.UnhealthyAllocs;
  for (const c of changes) {
    const was = healthOf(c.before);
    const now = healthOf(c.after);
    if (was === now) continue;
    if (was === true) healthy--;
    if (was === false) unhealthy--;
    if (now === true) healthy++;
    if (now === false) unhealthy++;
  }
  return { ...tg, HealthyAllocs: healthy, UnhealthyAllocs: unhealthy };
}

/** Canaries all placed and healthy in every group that has them. */
export function canariesHealthy(d: Deployment, allocs: ReadonlyMap<string, Allocation>): boolean {
  for (const tg of Object.values(d.TaskGroups)) {
    if (tg.DesiredCanaries === 0) continue;
    const placed = tg.PlacedCanaries ?? [];
    if (placed.length < tg.DesiredCanaries) return false;
    for (const id of placed) {
      const a = allocs.get(id);
      if (!a || healthOf(a) !== true) return false;
    }
  }
  return true;
}

export function createDeploymentWatcher(deps: WatcherDeps) {
  async function followupEval(w: WriteScope, d: Deployment, job: Job | null): Promise<string> {
    if (!job) return '';
    const ev = newEvaluation(
      {
        namespace: d.Namespace,
        jobId: d.JobID,
        jobModifyIndex: job.JobModifyIndex,
        type: job.Type,
        priority: job.Priority,
        triggeredBy: 'deployment-watcher',
        index: w.index,
        deploymentId: d.ID,
      },
      deps.clock,
    );
    await deps.evalStore.put(w.tx, ev);
    w.emit(evalEvent('DeploymentAllocHealth', ev));
    return ev.ID;
  }

  /**
   * Rolls back to the latest stable version older than the deployment's (auto_revert):
   * the stable spec is registered again as a new version. Returns the description suffix.
   */
  async function rollback(w: WriteScope, d: Deployment, base: string): Promise<{ description: string; job: Job | null; reverted: number | null; evalId: string }> {
    const rec = await deps.jobStore.get(w.tx, d.Namespace, d.JobID);
    if (!rec) return { description: base, job: null, reverted: null, evalId: '' };
    const versions = await deps.jobStore.versions(w.tx, d.Namespace, d.JobID);
    const target = versions.find((v) => v.Stable && v.Version < d.JobVersion);
    if (!target) return { description: `${base} - no stable job version to auto revert to`, job: rec.job, reverted: null, evalId: '' };
    if (!jobSpecChanged(target, rec.job)) {
      return { description: `${base} - not rolling back to stable job version ${target.Version} as current job has same specification`, job: rec.job, reverted: null, evalId: '' };
    }
    const job: Job = {
      ...target,
      Version: rec.job.Version + 1,
      Stable: false,
      Stop: false,
      Status: rec.job.Status,
      SubmitTime: nowNanos(deps.clock),
      CreateIndex: rec.job.CreateIndex,
      ModifyIndex: w.index,
      JobModifyIndex: w.index,
    };
    await deps.jobStore.put(w.tx, { job, summary: rec.summary });
    await deps.jobStore.putVersion(w.tx, job);
    w.emit(jobEvent('DeploymentStatusUpdate', job));
    const ev = newEvaluation(
      { namespace: job.Namespace, jobId: job.ID, jobModifyIndex: job.JobModifyIndex, type: job.Type, priority: job.Priority, triggeredBy: 'job-register', index: w.index },
      deps.clock,
    );
    await deps.evalStore.put(w.tx, ev);
    w.emit(evalEvent('DeploymentStatusUpdate', ev));
    return { description: `${base} - rolling back to job version ${target.Version}`, job, reverted: target.Version, evalId: ev.ID };
  }

  /** Fails a running/paused deployment (unhealthy allocations, progress deadline). */
  async function fail(w: WriteScope, d: Deployment, base: string): Promise<WatcherResult> {
    const revert = Object.values(d.TaskGroups).some((g) => g.AutoRevert);
    let description = base;
    let job: Job | null = null;
    let reverted: number | null = null;
    let evalId = '';
    if (revert) ({ description, job, reverted, evalId } = await rollback(w, d, base));
    else job = (await deps.jobStore.get(w.tx, d.Namespace, d.JobID))?.job ?? null;
    const failed: Deployment = { ...d, Status: 'failed', StatusDescription: description, ModifyIndex: w.index, ModifyTime: nowNanos(deps.clock) };
    await deps.deploymentStore.put(w.tx, failed);
    w.emit(deploymentEvent('DeploymentStatusUpdate', failed));
    if (evalId === '') evalId = await followupEval(w, failed, job);
    return { deployment: failed, revertedVersion: reverted, evalId };
  }

  return {
    /**
     * Health changes of allocations of one deployment: counts, progress deadline, failure,
     * auto-promotion, and an evaluation to continue. `allocs`: the deployment's allocations
     * after the change. Tables: deployment, evals, jobs, job_version.
     */
    async onHealth(w: WriteScope, deploymentId: string, changes: readonly HealthChange[], allocs: ReadonlyMap<string, Allocation>): Promise<WatcherResult | null> {
      const d = await deps.deploymentStore.get(w.tx, deploymentId);
      if (!d || (d.Status !== 'running' && d.Status !== 'paused')) return null;
      const groups = { ...d.TaskGroups };
      const nowMs = deps.clock.nowMs();
      for (const name of Object.keys(groups)) {
        const mine = changes.filter((c) => c.after.TaskGroup === name);
        if (mine.length === 0) continue;
        let tg = countHealth(groups[name] as DeploymentTaskGroup, mine);
        if (mine.some((c) => healthOf(c.after) === true && healthOf(c.before) !== true) && tg.ProgressDeadline > 0) {
          tg = { ...tg, RequireProgressBy: new Date(nowMs + tg.ProgressDeadline / 1e6).toISOString() };
        }
        groups[name] = tg;
      }
      let next: Deployment = { ...d, TaskGroups: groups, ModifyIndex: w.index, ModifyTime: nowNanos(deps.clock) };
      if (changes.some((c) => healthOf(c.after) === false && healthOf(c.before) !== false)) {
        return fail(w, next, DEPLOYMENT_DESC.failedAllocations);
      }
      const job = (await deps.jobStore.get(w.tx, d.Namespace, d.JobID))?.job ?? null;
      const promote = next.Status === 'running' && Object.values(groups).some((g) => g.DesiredCanaries > 0 && !g.Promoted && g.AutoPromote) && canariesHealthy(next, allocs);
      if (promote) {
        const promoted: Record<string, DeploymentTaskGroup> = {};
        for (const [k, g] of Object.entries(groups)) promoted[k] = g.DesiredCanaries > 0 ? { ...g, Promoted: true } : g;
        next = { ...next, TaskGroups: promoted, StatusDescription: DEPLOYMENT_DESC.running };
        await deps.deploymentStore.put(w.tx, next);
        w.emit(deploymentEvent('DeploymentPromotion', next));
      } else {
        await deps.deploymentStore.put(w.tx, next);
        w.emit(deploymentEvent('DeploymentAllocHealth', next));
      }
      const evalId = next.Status === 'running' ? await followupEval(w, next, job) : '';
      return { deployment: next, revertedVersion: null, evalId };
    },

    /** Fails running deployments whose progress deadline passed (timer; tables: deployment, evals, jobs, job_version). */
    async checkDeadline(w: WriteScope, deploymentId: string): Promise<boolean> {
      const d = await deps.deploymentStore.get(w.tx, deploymentId);
      if (!d || d.Status !== 'running') return false;
      const now = deps.clock.nowMs();
      const passed = Object.values(d.TaskGroups).some((g) => {
        if (!g.RequireProgressBy) return false;
        const by = Date.parse(g.RequireProgressBy);
        const done = g.HealthyAllocs >= g.DesiredTotal && (g.DesiredCanaries === 0 || g.Promoted);
        return Number.isFinite(by) && by < now && !done;
      });
      if (!passed) return false;
      await fail(w, d, DEPLOYMENT_DESC.progressDeadline);
      return true;
    },

    fail,
  };
}

export type DeploymentWatcher = ReturnType<typeof createDeploymentWatcher>;
