// A job's Status and JobSummary recomputed from its allocations, evaluations and
// deployments, inside the write that changed them (reference §1.4; JobSummary counts by
// client status: pending -> Starting, running -> Running, ...). A child's status change
// also refreshes its parent's Children counts.
import type { StateEventInput } from '@selfstack/state';
import type { Db } from '../shared/common.types';
import { isPeriodicOrParameterized, jobStatus, summaryFor } from '../features/jobs/job-spec';
import { jobEvent } from '../features/jobs/jobs.service';
import type { JobStore } from '../features/jobs/jobs.store';
import type { Job, JobSummary, TaskGroupSummary } from '../features/jobs/jobs.types';
import type { EngineStore } from './engine.store';

export interface JobStateDeps {
  jobStore: JobStore;
  engineStore: EngineStore;
}

export interface WriteScope {
  tx: Db;
  index: number;
  emit(e: StateEventInput): void;
}

const COUNT_FIELD: Record<string, keyof TaskGroupSummary> = {
  pending: 'Starting',
  running: 'Running',
  complete: 'Complete',
  failed: 'Failed',
  lost: 'Lost',
  unknown: 'Unknown',
};

function sameSummary(a: JobSummary, b: JobSummary): boolean {
  return JSON.stringify([a.Summary, a.Children]) === JSON.stringify([b.Summary, b.Children]);
}

/**
 * Recomputes and writes the job's Status and summary. `queued` (task group -> count) comes
 * from a completed evaluation's QueuedAllocations; other writers keep the stored Queued.
 * Tables touched: jobs, job_summary (callers name them in withWrite).
 */
export async function refreshJobState(
  deps: JobStateDeps,
  w: WriteScope,
  namespace: string,
  jobId: string,
  eventType: string,
  queued?: Readonly<Record<string, number>>,
): Promise<Job | null> {
  const rec = await deps.engineStore.jobWithFacts(w.tx, namespace, jobId);
  if (!rec) return null;
  const facts = rec.facts;
  const status = jobStatus(rec.job, facts);
  const base = summaryFor(rec.job, rec.summary, w.index);
  const summary: JobSummary = { ...base, Summary: {} };
  for (const g of rec.job.TaskGroups) {
    const name = String(g['Name']);
    const prev = base.Summary[name];
    const counts = facts.counts[name] ?? {};
    const s: TaskGroupSummary = { Queued: queued?.[name] ?? prev?.Queued ?? 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
    for (const [clientStatus, n] of Object.entries(counts)) {
      const f = COUNT_FIELD[clientStatus];
      if (f) s[f] += n;
    }
    summary.Summary[name] = s;
  }
  if (isPeriodicOrParameterized(rec.job)) summary.Children = await deps.engineStore.childCounts(w.tx, namespace, jobId);
  const statusChanged = status !== rec.job.Status;
  if (!statusChanged && sameSummary(summary, rec.summary)) return rec.job;
  const job: Job = statusChanged ? { ...rec.job, Status: status, ModifyIndex: w.index } : rec.job;
  if (statusChanged) {
    await deps.engineStore.setStatus(w.tx, job, summary);
    w.emit(jobEvent(eventType, job));
    const parent = typeof job['ParentID'] === 'string' ? job['ParentID'] : '';
    if (parent !== '') await refreshJobState(deps, w, namespace, parent, eventType);
  } else {
    await deps.engineStore.setSummary(w.tx, namespace, jobId, summary);
  }
  return job;
}
