// Jobs: register (versions bump only on a spec change, a pending evaluation per register),
// deregister with purge, and the reads of reference §1.
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import { allocStub, isTerminalAlloc, type Allocation } from '../allocations/allocations.types';
import { nowNanos, TABLES, type Clock, type Db, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingPointRead, blockingRead, DerivedCache, IndexedSnapshot, shareKey, type SchedulerState } from '../../shared/blocking-read';
import type { DeploymentStore } from '../deployments/deployments.store';
import { isActiveDeployment, type Deployment } from '../deployments/deployments.types';
import { evalEvent, newEvaluation } from '../evaluations/eval-factory';
import type { EvaluationStore } from '../evaluations/evaluations.store';
import { TERMINAL_EVAL_STATUSES, type Evaluation } from '../evaluations/evaluations.types';
import type { NamespaceStore } from '../namespaces/namespaces.store';
import { compileFilter, paginate } from '../../http/pagination';
import type { ListQuery, NamespaceScope } from '../../http/query';
import {
  canonicalizeJob,
  checkRegisterRequest,
  isPeriodicOrParameterized,
  jobSpecChanged,
  jobStatus,
  jobStub,
  summaryFor,
  validateJob,
} from './job-spec';
import { createJobRegisterStore } from './job-register.store';
import type { JobRecord, JobStore } from './jobs.store';
import type { Job, JobDeregisterResponse, JobRegisterResponse, JobSummary } from './jobs.types';

export interface JobServiceDeps extends SchedulerState {
  jobStore: JobStore;
  evalStore: EvaluationStore;
  allocStore: AllocationStore;
  deploymentStore: DeploymentStore;
  namespaceStore: NamespaceStore;
  clock: Clock;
  region: string;
}

export interface Paged<T> extends Indexed<T> {
  nextToken: string;
}

export function jobEvent(type: string, job: Job, extra: JsonObject = {}) {
  return { topic: 'Job', type, key: job.ID, namespace: job.Namespace, filterKeys: null, payload: { Job: job, ...extra } };
}

export function deploymentEvent(type: string, d: Deployment) {
  return { topic: 'Deployment', type, key: d.ID, namespace: d.Namespace, filterKeys: [d.JobID], payload: { Deployment: d } };
}

/** Recomputes a job's Status from its deployments, allocations and evaluations (reference §1.4). */
export async function refreshJobStatus(deps: Pick<JobServiceDeps, 'jobStore' | 'evalStore' | 'allocStore' | 'deploymentStore'>, tx: Db, job: Job): Promise<Job> {
  const [deployments, allocs, evals] = await Promise.all([
    deps.deploymentStore.byJob(tx, job.Namespace, job.ID),
    deps.allocStore.where(tx, { namespace: job.Namespace, jobId: job.ID }),
    deps.evalStore.byJob(tx, job.Namespace, job.ID),
  ]);
  const status = jobStatus(job, {
    hasActiveDeployment: deployments.some(isActiveDeployment),
    hasActiveAlloc: allocs.some((a) => !isTerminalAlloc(a)),
    hasActiveEval: evals.some((e) => !TERMINAL_EVAL_STATUSES.includes(e.Status)),
    hadEvals: evals.length > 0,
  });
  return { ...job, Status: status };
}

function zeroDeregister(): JobDeregisterResponse {
  return { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: 0, VolumeEvalID: '', VolumeEvalIndex: 0, Index: 0, LastContact: 0, KnownLeader: false, NextToken: '' };
}

export function createJobService(deps: JobServiceDeps) {
  const { jobStore, evalStore, allocStore, deploymentStore, state } = deps;
  const registerStore = createJobRegisterStore();
  // /v1/jobs reads the whole table once per table index and filters in memory: list
  // requests between two writes (and the readers one write wakes) share one load.
  const allJobs = new IndexedSnapshot((db) => jobStore.all(db));
  // Pages of one snapshot, per question: identical list requests answered from the same
  // snapshot (typically every reader one write woke) share one page and one serialisation.
  const listPages = new DerivedCache();

  function requireNs(acl: Acl, namespace: string, cap: 'read-job' | 'list-jobs' | 'submit-job' | 'purge-job'): void {
    if (!acl.allowNamespaceOperation(namespace, cap)) throw denied();
  }

  async function readJob(namespace: string, id: string, tables: readonly string[], opts: ReadOptions): Promise<Indexed<JobRecord | null>> {
    return blockingPointRead(deps, tables, opts, () => deps.reads.job(namespace, id, tables), shareKey('job', namespace, id));
  }

  return {
    async register(body: JsonObject, pathId: string | null, q: NamespaceScope, acl: Acl): Promise<JobRegisterResponse> {
      const raw = checkRegisterRequest(body, pathId);
      const job = canonicalizeJob(raw, { namespace: q.allNamespaces ? 'default' : q.namespace, region: deps.region });
      const problems = validateJob(job);
      if (problems !== null) throw new BadRequestError(problems);
      requireNs(acl, job.Namespace, 'submit-job');
      const enforce = body['EnforceIndex'] === true;
      const wantIndex = typeof body['JobModifyIndex'] === 'number' ? body['JobModifyIndex'] : 0;
      const evalPriority = typeof body['EvalPriority'] === 'number' && body['EvalPriority'] > 0 ? body['EvalPriority'] : 0;
      if (isPeriodicOrParameterized(job) && !enforce) {
        // Re-registering an unchanged periodic/parameterized job writes nothing (no new
        // version, no evaluation): one read outside the write lock tells.
        const existing = (await registerStore.snapshot(deps.prisma, job.Namespace, job.ID)).existing;
        if (existing && !jobSpecChanged(existing.job, job)) {
          const jmi = existing.job.JobModifyIndex;
          return { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: jmi, Warnings: '', Index: jmi, LastContact: 0, KnownLeader: false, NextToken: '' };
        }
      }

      // Raw SQL only (the SQL client: job-register.store.ts, deployments' put), so that the
      // counter lock is held for as little as possible: the snapshot is read in the lock's
      // round trip and the write goes out with the commit.
      const tables = [TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, TABLES.evals];
      const { index, result } = await state.withWrite(tables, async ({ tx, index, emit, touch, first, atCommit }) => {
        const snap = registerStore.parseSnapshot(first);
        // Checked under the write lock: a namespace deleted by a concurrent writer must not
        // end up holding this job (the delete checks for jobs in the same ordered section).
        if (!snap.namespaceExists) {
          throw new BadRequestError(`job ${JSON.stringify(job.ID)} is in nonexistent namespace ${JSON.stringify(job.Namespace)}`);
        }
        const existing = snap.existing;
        if (enforce) {
          const current = existing?.job.JobModifyIndex ?? 0;
          if (wantIndex === 0 && existing) {
            throw new BadRequestError(`Enforcing job modify index 0: job already exists`);
          }
          if (wantIndex !== 0 && current !== wantIndex) {
            throw new BadRequestError(
              existing
                ? `Enforcing job modify index ${wantIndex}: job exists with conflicting job modify index: ${current}`
                : `Enforcing job modify index ${wantIndex}: job does not exist`,
            );
          }
        }
        const changed = !existing || jobSpecChanged(existing.job, job);
        let stored: Job;
        if (changed) {
          stored = {
            ...job,
            Version: existing ? existing.job.Version + 1 : 0,
            SubmitTime: nowNanos(deps.clock),
            CreateIndex: existing?.job.CreateIndex ?? index,
            ModifyIndex: index,
            JobModifyIndex: index,
            Status: 'pending',
          };
        } else {
          stored = (existing as JobRecord).job;
        }
        let ev: Evaluation | null = null;
        if (!isPeriodicOrParameterized(stored)) {
          ev = newEvaluation(
            {
              namespace: stored.Namespace,
              jobId: stored.ID,
              jobModifyIndex: stored.JobModifyIndex,
              type: stored.Type,
              priority: evalPriority || stored.Priority,
              triggeredBy: 'job-register',
              index,
            },
            deps.clock,
          );
        }
        let deployments = snap.deployments;
        if (changed) {
          // Spec: a running deployment is cancelled when a newer job version is registered.
          deployments = [];
          for (const d of snap.deployments) {
            if (!isActiveDeployment(d) || d.JobVersion >= stored.Version) {
              deployments.push(d);
              continue;
            }
            const cancelled: Deployment = {
              ...d,
              Status: 'cancelled',
              StatusDescription: 'Cancelled due to newer version of job',
              ModifyIndex: index,
              ModifyTime: nowNanos(deps.clock),
            };
            await deploymentStore.put(tx, cancelled);
            touch(TABLES.deployments);
            emit(deploymentEvent('JobRegistered', cancelled));
            deployments.push(cancelled);
          }
        }
        // The job's status as refreshJobStatus computes it, from the same snapshot plus this
        // write's own changes (its evaluation, the cancelled deployments).
        const refreshed: Job = {
          ...stored,
          Status: jobStatus(stored, {
            hasActiveDeployment: deployments.some(isActiveDeployment),
            hasActiveAlloc: snap.hasActiveAlloc,
            hasActiveEval: snap.hasOpenEval || ev !== null,
            hadEvals: snap.hadEvals || ev !== null,
          }),
        };
        const writeJob = changed || refreshed.Status !== (existing as JobRecord).job.Status;
        if (writeJob && !changed) refreshed.ModifyIndex = index;
        const write = registerStore.writeStatement({
          ev,
          record: writeJob ? { job: refreshed, summary: summaryFor(refreshed, existing?.summary ?? null, index) } : null,
          version: changed,
        });
        if (write) atCommit(write);
        if (changed) {
          emit(jobEvent('JobRegistered', refreshed));
          if (ev) emit(evalEvent('JobRegistered', ev));
        } else if (ev) {
          emit(evalEvent('EvaluationUpdated', ev));
        }
        return { job: refreshed, ev };
      }, { raw: true, first: registerStore.snapshotStatement(job.Namespace, job.ID) });
      return {
        EvalID: result.ev?.ID ?? '',
        EvalCreateIndex: result.ev ? index : 0,
        JobModifyIndex: result.job.JobModifyIndex,
        Warnings: '',
        Index: index,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      };
    },

    async deregister(namespace: string, id: string, purge: boolean, acl: Acl): Promise<JobDeregisterResponse> {
      requireNs(acl, namespace, purge ? 'purge-job' : 'submit-job');
      const existingOutside = await jobStore.get(deps.prisma, namespace, id);
      // Reference §1.3: a missing job answers 200 with an all-zero response.
      if (!existingOutside) return zeroDeregister();
      const { index, result } = await state.withWrite(
        [TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, TABLES.evals],
        async ({ tx, index, emit }) => {
          const existing = await jobStore.get(tx, namespace, id);
          if (!existing) return null;
          let job = existing.job;
          let ev: Evaluation | null = null;
          if (!isPeriodicOrParameterized(job)) {
            ev = newEvaluation(
              { namespace, jobId: id, jobModifyIndex: index, type: 'service', priority: job.Priority, triggeredBy: 'job-deregister', index },
              deps.clock,
            );
            await evalStore.put(tx, ev);
          }
          if (purge) {
            await jobStore.delete(tx, namespace, id);
            emit(jobEvent('JobDeregistered', job, { Deleted: true }));
          } else {
            if (!job.Stop) {
              job = { ...job, Stop: true, Version: job.Version + 1, JobModifyIndex: index, SubmitTime: nowNanos(deps.clock) };
            }
            job = await refreshJobStatus(deps, tx, { ...job, ModifyIndex: index });
            await jobStore.put(tx, { job, summary: summaryFor(job, existing.summary, index) });
            if (job.Version !== existing.job.Version) await jobStore.putVersion(tx, job);
            emit(jobEvent('JobDeregistered', job));
          }
          if (ev) emit(evalEvent('JobDeregistered', ev));
          return { ev, jobModifyIndex: index };
        },
      );
      if (!result) return zeroDeregister();
      return {
        EvalID: result.ev?.ID ?? '',
        EvalCreateIndex: result.ev ? index : 0,
        JobModifyIndex: result.jobModifyIndex,
        VolumeEvalID: '',
        VolumeEvalIndex: 0,
        Index: index,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      };
    },

    /** GET /v1/jobs: stubs by namespace then ID; filter runs on the full job. */
    async list(q: ListQuery, acl: Acl, withMeta: boolean, opts: ReadOptions): Promise<Paged<JsonObject[]>> {
      if (!q.allNamespaces) requireNs(acl, q.namespace, 'list-jobs');
      const filter = compileFilter(q.filter);
      const r = await blockingRead(deps, [TABLES.jobs, TABLES.jobSummary], opts, (db, index) => allJobs.get(db, index));
      const compute = (): Paged<JsonObject[]> => {
        const items = r.value.filter(
          (rec) => (q.allNamespaces || rec.job.Namespace === q.namespace) && (q.prefix === '' || rec.job.ID.startsWith(q.prefix)),
        );
        const page = paginate({
          items,
          keyOf: (rec) => [rec.job.Namespace, rec.job.ID],
          tokenKind: 'namespace-id',
          perPage: q.perPage,
          nextToken: q.nextToken,
          reverse: q.reverse,
          filter,
          datumOf: (rec) => rec.job,
          accept: (rec) => acl.allowNamespaceOperation(rec.job.Namespace, 'list-jobs'),
        });
        return { index: r.index, value: page.items.map((rec) => jobStub(rec.job, rec.summary, withMeta)), nextToken: page.nextToken };
      };
      // Only management rights are known to be equal between requests; other ACLs (each
      // request resolves its own) compute their page themselves.
      if (!acl.management) return compute();
      const key = JSON.stringify([r.index, q.allNamespaces, q.namespace, q.prefix, q.filter, q.perPage, q.nextToken, q.reverse, withMeta]);
      return listPages.get(r.value, key, compute);
    },

    async get(namespace: string, id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Job>> {
      requireNs(acl, namespace, 'read-job');
      const r = await readJob(namespace, id, [TABLES.jobs], opts);
      if (!r.value) throw new NotFoundError('job not found');
      return { index: r.index, value: r.value.job };
    },

    async summary(namespace: string, id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<JobSummary>> {
      requireNs(acl, namespace, 'read-job');
      const r = await readJob(namespace, id, [TABLES.jobSummary], opts);
      if (!r.value) throw new NotFoundError('job not found');
      return { index: r.index, value: r.value.summary };
    },

    async versions(namespace: string, id: string, diffs: boolean, acl: Acl, opts: ReadOptions): Promise<Indexed<JsonObject>> {
      requireNs(acl, namespace, 'read-job');
      const r = await blockingRead(deps, [TABLES.jobVersions], opts, (db) => jobStore.versions(db, namespace, id), shareKey('job-versions', namespace, id));
      if (r.value.length === 0) throw new NotFoundError('job versions not found');
      const body: JsonObject = { Versions: r.value };
      body['Diffs'] = diffs ? [] : null;
      return { index: r.index, value: body };
    },

    async allocations(namespace: string, id: string, all: boolean, acl: Acl, opts: ReadOptions): Promise<Indexed<JsonObject[]>> {
      requireNs(acl, namespace, 'read-job');
      const r = await blockingRead(deps, [TABLES.allocs], opts, async (db) => {
        const allocs = await allocStore.where(db, { namespace, jobId: id });
        if (all) return allocs;
        // Without all=true only allocations of the current job instance (same CreateIndex).
        const rec = await jobStore.get(db, namespace, id);
        return allocs.filter((a: Allocation) => !rec || !a.Job || (a.Job['CreateIndex'] ?? rec.job.CreateIndex) === rec.job.CreateIndex);
      }, shareKey('job-allocs', namespace, id, all));
      return { index: r.index, value: r.value.map((a) => allocStub(a, { resources: false, taskStates: true })) };
    },

    async evaluations(namespace: string, id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Evaluation[]>> {
      requireNs(acl, namespace, 'read-job');
      return blockingRead(deps, [TABLES.evals], opts, (db) => evalStore.byJob(db, namespace, id), shareKey('job-evals', namespace, id));
    },

    async deployments(namespace: string, id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Deployment[]>> {
      requireNs(acl, namespace, 'read-job');
      return blockingRead(deps, [TABLES.deployments], opts, async (db) => (await deploymentStore.byJob(db, namespace, id)).reverse(), shareKey('job-deployments', namespace, id));
    },

    /** Latest deployment or null (200, never 404 — reference §1.2). */
    async latestDeployment(namespace: string, id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Deployment | null>> {
      requireNs(acl, namespace, 'read-job');
      return blockingRead(deps, [TABLES.deployments], opts, async (db) => {
        const list = await deploymentStore.byJob(db, namespace, id);
        return list.length === 0 ? null : (list[list.length - 1] as Deployment);
      }, shareKey('job-latest-deployment', namespace, id));
    },
  };
}

export type JobService = ReturnType<typeof createJobService>;
