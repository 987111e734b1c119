// The periodic dispatcher (the anchor's nomad/periodic.go): every periodic job launches a
// child `<parent>/periodic-<unix seconds>` at each time its cron specs name, in its time
// zone. The last launch is kept in periodic_launches, so a restarted or second replica
// neither repeats nor loses one: a launch is written in one withWrite that re-reads it,
// and a child ID exists once. Missed launches (the scheduler was down) are caught up with
// one launch, as the anchor does. prohibit_overlap skips a launch while a child is alive.
import type { Logger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import { asObject, TABLES, type Clock, type Db } from '../shared/common.types';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import { isPeriodic } from '../features/jobs/job-spec';
import type { JobStore } from '../features/jobs/jobs.store';
import type { Job } from '../features/jobs/jobs.types';
import { writeChildJob } from './children';
import { nextLaunch } from './cron';
import type { EngineStore } from './engine.store';

export const PERIODIC_SUFFIX = '/periodic-';

export interface PeriodicDeps {
  state: StateStore<Db>;
  db: Db;
  jobStore: JobStore;
  evalStore: EvaluationStore;
  engineStore: EngineStore;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'info'>;
}

export function periodicSpecs(job: Job): string[] {
  const p = asObject(job.Periodic);
  const specs = Array.isArray(p['Specs']) ? (p['Specs'] as unknown[]).map(String) : [];
  return typeof p['Spec'] === 'string' && p['Spec'] !== '' ? [p['Spec'], ...specs] : specs;
}

export function periodicTimeZone(job: Job): string {
  const tz = asObject(job.Periodic)['TimeZone'];
  return typeof tz === 'string' && tz !== '' ? tz : 'UTC';
}

/** The next launch after `afterMs` (null: none). */
export function nextPeriodicLaunch(job: Job, afterMs: number): number | null {
  return nextLaunch(periodicSpecs(job), periodicTimeZone(job), afterMs);
}

export function periodicChildId(parentId: string, launchMs: number): string {
  return `${parentId}${PERIODIC_SUFFIX}${Math.floor(launchMs / 1000)}`;
}

export interface LaunchResult {
  childId: string;
  eval: Evaluation | null;
  index: number;
}

export function createPeriodicDispatcher(deps: PeriodicDeps) {
  /**
   * Launches a child of `parentId` for `launchMs`. `force` (periodic/force) launches now
   * whatever the last launch; otherwise a launch at or before the recorded one is skipped.
   * Returns null when nothing was launched.
   */
  async function launch(namespace: string, parentId: string, launchMs: number, force: boolean): Promise<LaunchResult | null> {
    const { index, result } = await deps.state.withWrite([TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, TABLES.evals], async ({ tx, index, emit }) => {
      const w = { tx, index, emit };
      const rec = await deps.jobStore.get(tx, namespace, parentId);
      if (!rec || !isPeriodic(rec.job) || rec.job.Stop) return null;
      const now = deps.clock.nowMs();
      if (!force) {
        const last = await deps.engineStore.lastLaunch(tx, namespace, parentId);
        if (last !== null && last >= launchMs) return null;
      }
      // The next launch is computed from now: missed ones are not launched one by one.
      await deps.engineStore.setLaunch(tx, namespace, parentId, Math.max(launchMs, now), index);
      if (!force && asObject(rec.job.Periodic)['ProhibitOverlap'] === true && (await deps.engineStore.liveChildren(tx, namespace, parentId)) > 0) {
        deps.logger.info('skipping periodic launch: the job prohibits overlap and a child is running', { jobId: parentId });
        return null;
      }
      const childId = periodicChildId(parentId, launchMs);
      if (await deps.engineStore.jobExists(tx, namespace, childId)) return null;
      const child: Job = { ...rec.job, ID: childId, Name: childId, ParentID: parentId, Periodic: null };
      const written = await writeChildJob(deps, w, child);
      return { childId, eval: written.eval };
    });
    return result ? { ...result, index } : null;
  }

  return {
    launch,

    /** Launches every periodic job whose next launch time has come; returns the children. */
    async runDue(): Promise<LaunchResult[]> {
      const now = deps.clock.nowMs();
      const out: LaunchResult[] = [];
      for (const { job, lastLaunchMs } of await deps.engineStore.periodicJobs(deps.db)) {
        const base = lastLaunchMs ?? Math.floor(job.SubmitTime / 1e6);
        let due: number | null;
        try {
          due = nextPeriodicLaunch(job, base);
        } catch (err) {
          deps.logger.warn('periodic job has an unusable spec', { jobId: job.ID, err: err instanceof Error ? err.message : String(err) });
          continue;
        }
        if (due === null || due > now) continue;
        const r = await launch(job.Namespace, job.ID, due, false);
        if (r) out.push(r);
      }
      return out;
    },
  };
}

export type PeriodicDispatcher = ReturnType<typeof createPeriodicDispatcher>;
