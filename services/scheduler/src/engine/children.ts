// Child jobs of periodic and parameterized jobs (the anchor's periodic deriveJob and
// Job.Dispatch): written like a register of a new job (version 0, a `job-register`
// evaluation), inside the caller's write, and counted in the parent's Children summary.
import { nowNanos, type Clock } from '../shared/common.types';
import { evalEvent, newEvaluation } from '../features/evaluations/eval-factory';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import { isPeriodicOrParameterized, summaryFor } from '../features/jobs/job-spec';
import { jobEvent } from '../features/jobs/jobs.service';
import type { JobStore } from '../features/jobs/jobs.store';
import type { Job } from '../features/jobs/jobs.types';
import type { EngineStore } from './engine.store';
import { refreshJobState, type WriteScope } from './job-state';

export interface ChildDeps {
  jobStore: JobStore;
  evalStore: EvaluationStore;
  engineStore: EngineStore;
  clock: Clock;
}

/** Writes `child` as a new job with its evaluation; tables: jobs, job_summary, job_version, evals. */
export async function writeChildJob(deps: ChildDeps, w: WriteScope, child: Job): Promise<{ job: Job; eval: Evaluation | null }> {
  const job: Job = {
    ...child,
    Version: 0,
    Stable: false,
    Stop: false,
    Status: 'pending',
    StatusDescription: '',
    SubmitTime: nowNanos(deps.clock),
    CreateIndex: w.index,
    ModifyIndex: w.index,
    JobModifyIndex: w.index,
  };
  await deps.jobStore.put(w.tx, { job, summary: summaryFor(job, null, w.index) });
  await deps.jobStore.putVersion(w.tx, job);
  w.emit(jobEvent('JobRegistered', job));
  let ev: Evaluation | null = null;
  if (!isPeriodicOrParameterized(job)) {
    ev = newEvaluation(
      { namespace: job.Namespace, jobId: job.ID, jobModifyIndex: w.index, type: job.Type, priority: job.Priority, triggeredBy: 'job-register', index: w.index },
      deps.clock,
    );
    await deps.evalStore.put(w.tx, ev);
    w.emit(evalEvent('JobRegistered', ev));
  }
  const parent = typeof job['ParentID'] === 'string' ? job['ParentID'] : '';
  if (parent !== '') await refreshJobState(deps, w, job.Namespace, parent, 'JobRegistered');
  return { job, eval: ev };
}
