// Job operations of the scheduling engine (issue 25 item 5; reference §1.2's sub-routes):
// scale (status and action with its events), dispatch of parameterized jobs, periodic
// force, plan (a dry run of the scheduler with diff and annotations), revert to a version,
// evaluate (force a new evaluation, optionally rescheduling failed allocations), validate
// and parse (HCL2). Errors carry the anchor's texts.
import { BadRequestError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../acl/acl-policy';
import { denied } from '../acl/acl.service';
import type { AllocationStore } from '../allocations/allocations.store';
import { allocEvent } from '../allocations/allocations.service';
import type { Allocation } from '../allocations/allocations.types';
import { asObject, GO_ZERO_TIME, newId, nowNanos, TABLES, type Clock, type Indexed, type JsonObject, type ReadOptions } from '../../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../../shared/blocking-read';
import type { DeploymentStore } from '../deployments/deployments.store';
import { isActiveDeployment, type Deployment } from '../deployments/deployments.types';
import { evalEvent, newEvaluation } from '../evaluations/eval-factory';
import type { EvaluationStore } from '../evaluations/evaluations.store';
import type { Evaluation } from '../evaluations/evaluations.types';
import { writeChildJob } from '../../engine/children';
import type { EngineStore } from '../../engine/engine.store';
import { jobDiff } from '../../engine/job-diff';
import { refreshJobState, type WriteScope } from '../../engine/job-state';
import { parseJobHcl } from '../../engine/jobspec-hcl';
import { nextPeriodicLaunch, type PeriodicDispatcher } from '../../engine/periodic';
import { computePlan } from '../../engine/scheduler';
import { canonicalizeJob, checkRegisterRequest, isParameterized, isPeriodic, jobSpecChanged, validateJob } from './job-spec';
import { deploymentEvent, jobEvent } from './jobs.service';
import type { JobRecord, JobStore } from './jobs.store';
import type { Job, JobRegisterResponse } from './jobs.types';

export const DISPATCH_PAYLOAD_LIMIT = 16 * 1024;
const MAX_SCALING_EVENTS = 20;

export interface JobOperationsDeps extends SchedulerState {
  jobStore: JobStore;
  evalStore: EvaluationStore;
  allocStore: AllocationStore;
  deploymentStore: DeploymentStore;
  engineStore: EngineStore;
  periodic: PeriodicDispatcher;
  clock: Clock;
  region: string;
}

export interface ScaleRequest {
  Count?: number | null | undefined;
  Target?: Record<string, string> | undefined;
  Message?: string | undefined;
  Error?: boolean | undefined;
  Meta?: Record<string, unknown> | null | undefined;
  EnforceIndex?: boolean | undefined;
  JobModifyIndex?: number | undefined;
}

export interface DispatchRequest {
  Payload?: string | null | undefined;
  Meta?: Record<string, string> | null | undefined;
  IdempotencyToken?: string | undefined;
  Priority?: number | undefined;
}

function registerResponse(index: number, ev: Evaluation | null, jobModifyIndex: number): JobRegisterResponse {
  return { EvalID: ev?.ID ?? '', EvalCreateIndex: ev ? index : 0, JobModifyIndex: jobModifyIndex, Warnings: '', Index: index, LastContact: 0, KnownLeader: false, NextToken: '' };
}

export function createJobOperationsService(deps: JobOperationsDeps) {
  const { state, jobStore, evalStore, engineStore } = deps;
  const stateDeps = { jobStore, engineStore };

  function require(acl: Acl, namespace: string, ...caps: Parameters<Acl['allowNamespaceOperation']>[1][]): void {
    if (!caps.some((c) => acl.allowNamespaceOperation(namespace, c))) throw denied();
  }

  async function mustGet(namespace: string, id: string): Promise<JobRecord> {
    const rec = await jobStore.get(deps.prisma, namespace, id);
    if (!rec) throw new NotFoundError('job not found');
    return rec;
  }

  function newEval(job: Job, index: number, triggeredBy: string): Evaluation {
    return newEvaluation(
      { namespace: job.Namespace, jobId: job.ID, jobModifyIndex: job.JobModifyIndex, type: job.Type, priority: job.Priority, triggeredBy, index },
      deps.clock,
    );
  }

  /** Writes `spec` as the job's next version with an evaluation (scale, revert). */
  async function writeVersion(w: WriteScope, rec: JobRecord, spec: Job, triggeredBy: string): Promise<{ job: Job; ev: Evaluation | null }> {
    const job: Job = {
      ...spec,
      Version: rec.job.Version + 1,
      Stable: false,
      Stop: false,
      Status: rec.job.Status,
      StatusDescription: '',
      SubmitTime: nowNanos(deps.clock),
      CreateIndex: rec.job.CreateIndex,
      ModifyIndex: w.index,
      JobModifyIndex: w.index,
    };
    await jobStore.put(w.tx, { job, summary: rec.summary });
    await jobStore.putVersion(w.tx, job);
    w.emit(jobEvent('JobRegistered', job));
    for (const d of await deps.deploymentStore.byJob(w.tx, job.Namespace, job.ID)) {
      if (!isActiveDeployment(d) || d.JobVersion >= job.Version) continue;
      const cancelled: Deployment = { ...d, Status: 'cancelled', StatusDescription: 'Cancelled due to newer version of job', ModifyIndex: w.index, ModifyTime: nowNanos(deps.clock) };
      await deps.deploymentStore.put(w.tx, cancelled);
      w.emit(deploymentEvent('JobRegistered', cancelled));
    }
    let ev: Evaluation | null = null;
    if (!isPeriodic(job) && !isParameterized(job)) {
      ev = newEval(job, w.index, triggeredBy);
      await evalStore.put(w.tx, ev);
      w.emit(evalEvent('JobRegistered', ev));
    }
    await refreshJobState(stateDeps, w, job.Namespace, job.ID, 'JobRegistered');
    return { job, ev };
  }

  return {
    /** GET /v1/job/:id/scale (JobScaleStatusResponse). */
    async scaleStatus(namespace: string, id: string, acl: Acl, opts: ReadOptions): Promise<Indexed<JsonObject>> {
      require(acl, namespace, 'read-job-scaling', 'read-job');
      const r = await blockingRead(
        deps,
        [TABLES.jobs, TABLES.allocs, TABLES.deployments],
        opts,
        async (db) => {
          const rec = await jobStore.get(db, namespace, id);
          if (!rec) return null;
          const [allocs, deployments, events] = await Promise.all([
            deps.allocStore.where(db, { namespace, jobId: id }),
            deps.deploymentStore.byJob(db, namespace, id),
            engineStore.scalingEvents(db, namespace, id),
          ]);
          return { rec, allocs, deployment: deployments[deployments.length - 1] ?? null, events };
        },
        shareKey('job-scale', namespace, id),
      );
      if (!r.value) throw new NotFoundError('job not found');
      const { rec, allocs, deployment, events } = r.value;
      const groups: JsonObject = {};
      for (const g of rec.job.TaskGroups) {
        const name = String(g['Name']);
        const mine = allocs.filter((a) => a.TaskGroup === name && a.DesiredStatus === 'run' && !['complete', 'failed', 'lost'].includes(a.ClientStatus));
        const current = deployment && deployment.JobVersion === rec.job.Version ? deployment.TaskGroups[name] : undefined;
        groups[name] = {
          Desired: typeof g['Count'] === 'number' ? g['Count'] : 1,
          Placed: mine.length,
          Running: mine.filter((a) => a.ClientStatus === 'running').length,
          Healthy: current ? current.HealthyAllocs : mine.filter((a) => asObject(a.DeploymentStatus)['Healthy'] === true).length,
          Unhealthy: current ? current.UnhealthyAllocs : mine.filter((a) => asObject(a.DeploymentStatus)['Healthy'] === false).length,
          Events: events[name] ?? null,
        };
      }
      return {
        index: r.index,
        value: { JobID: rec.job.ID, Namespace: rec.job.Namespace, JobCreateIndex: rec.job.CreateIndex, JobModifyIndex: rec.job.JobModifyIndex, JobStopped: rec.job.Stop, TaskGroups: groups },
      };
    },

    /** POST /v1/job/:id/scale: a count change (new version + `job-scaling` evaluation) and/or an event. */
    async scale(namespace: string, id: string, req: ScaleRequest, acl: Acl): Promise<JobRegisterResponse> {
      require(acl, namespace, 'scale-job', 'submit-job');
      const group = req.Target?.['Group'];
      if (group === undefined || group === '') throw new BadRequestError('missing task group name for scaling action');
      if (req.Count !== undefined && req.Count !== null && req.Count < 0) throw new BadRequestError('scaling action count can\'t be negative');
      if ((req.Count === undefined || req.Count === null) && req.Error !== true && (req.Message ?? '') === '') {
        throw new BadRequestError('scaling action should have either count, error, or message');
      }
      const { index, result } = await state.withWrite([TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, TABLES.evals, TABLES.deployments], async ({ tx, index, emit }) => {
        const w = { tx, index, emit };
        const rec = await jobStore.get(tx, namespace, id);
        if (!rec) throw new NotFoundError(`job ${JSON.stringify(id)} not found`);
        const tg = rec.job.TaskGroups.find((g) => g['Name'] === group);
        if (!tg) throw new BadRequestError(`task group ${JSON.stringify(group)} specified for scaling does not exist in job`);
        const count = req.Count ?? null;
        if (count !== null && (rec.job.Type === 'system' || rec.job.Type === 'sysbatch') && count > 1) throw new BadRequestError('jobs of type "system" can only be scaled between 0 and 1');
        const scaling = asObject(tg['Scaling']);
        if (count !== null && Object.keys(scaling).length > 0) {
          if (typeof scaling['Min'] === 'number' && count < scaling['Min']) throw new BadRequestError(`group count was less than scaling policy minimum: ${count} < ${scaling['Min']}`);
          if (typeof scaling['Max'] === 'number' && scaling['Max'] < count) throw new BadRequestError(`group count was greater than scaling policy maximum: ${count} > ${scaling['Max']}`);
        }
        let ev: Evaluation | null = null;
        let jobModifyIndex = rec.job.JobModifyIndex;
        if (count !== null && req.Error !== true) {
          if ((await deps.deploymentStore.byJob(tx, namespace, id)).some(isActiveDeployment)) throw new BadRequestError('job scaling blocked due to active deployment');
          if (req.EnforceIndex === true && req.JobModifyIndex !== rec.job.JobModifyIndex) {
            throw new BadRequestError(`Enforcing job modify index ${req.JobModifyIndex ?? 0}: job exists with conflicting job modify index: ${rec.job.JobModifyIndex}`);
          }
          const spec: Job = { ...rec.job, TaskGroups: rec.job.TaskGroups.map((g) => (g['Name'] === group ? { ...g, Count: count } : g)) };
          const written = await writeVersion(w, rec, spec, 'job-scaling');
          ev = written.ev;
          jobModifyIndex = written.job.JobModifyIndex;
        }
        const events = await engineStore.scalingEvents(tx, namespace, id);
        const event = {
          Time: nowNanos(deps.clock),
          Count: count,
          PreviousCount: typeof tg['Count'] === 'number' ? tg['Count'] : 1,
          Message: req.Message ?? '',
          Error: req.Error === true,
          Meta: req.Meta ?? null,
          EvalID: ev?.ID ?? null,
          CreateIndex: index,
        };
        events[group] = [event, ...(events[group] ?? [])].slice(0, MAX_SCALING_EVENTS);
        await engineStore.setScalingEvents(tx, namespace, id, events);
        return { ev, jobModifyIndex };
      });
      return registerResponse(index, result.ev, result.jobModifyIndex);
    },

    /** POST /v1/job/:id/dispatch (the anchor's Job.Dispatch). */
    async dispatch(namespace: string, id: string, req: DispatchRequest, acl: Acl): Promise<JsonObject> {
      require(acl, namespace, 'dispatch-job');
      const parent = await jobStore.get(deps.prisma, namespace, id);
      if (!parent) throw new NotFoundError('parameterized job not found');
      if (!isParameterized(parent.job)) throw new BadRequestError(`Specified job ${JSON.stringify(id)} is not a parameterized job`);
      if (parent.job.Stop) throw new BadRequestError(`Specified job ${JSON.stringify(id)} is stopped`);
      const cfg = asObject(parent.job.ParameterizedJob);
      const payload = req.Payload ? Buffer.from(req.Payload, 'base64') : Buffer.alloc(0);
      const requirement = typeof cfg['Payload'] === 'string' && cfg['Payload'] !== '' ? cfg['Payload'] : 'optional';
      if (requirement === 'required' && payload.length === 0) throw new BadRequestError('Payload is not provided but required by parameterized job');
      if (requirement === 'forbidden' && payload.length > 0) throw new BadRequestError('Payload provided but forbidden by parameterized job');
      if (payload.length > DISPATCH_PAYLOAD_LIMIT) throw new BadRequestError(`Payload exceeds maximum size; ${payload.length} > ${DISPATCH_PAYLOAD_LIMIT}`);
      const meta = req.Meta ?? {};
      const required = Array.isArray(cfg['MetaRequired']) ? (cfg['MetaRequired'] as unknown[]).map(String) : [];
      const optional = Array.isArray(cfg['MetaOptional']) ? (cfg['MetaOptional'] as unknown[]).map(String) : [];
      const unpermitted = Object.keys(meta).filter((k) => !required.includes(k) && !optional.includes(k)).sort();
      if (unpermitted.length > 0) throw new BadRequestError(`Dispatch request included unpermitted metadata keys: [${unpermitted.join(' ')}]`);
      const missing = required.filter((k) => !(k in meta)).sort();
      if (missing.length > 0) throw new BadRequestError(`Dispatch did not provide required meta keys: [${missing.join(' ')}]`);
      const priority = req.Priority !== undefined && req.Priority !== 0 ? req.Priority : parent.job.Priority;
      if (priority < 1 || priority > 100) throw new BadRequestError('dispatch job priority must be between [1, 100]');
      const token = req.IdempotencyToken ?? '';
      const { index, result } = await state.withWrite([TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, TABLES.evals], async ({ tx, index, emit }) => {
        if (token !== '') {
          const found = await engineStore.childByToken(tx, namespace, id, token);
          if (found) return { job: found, ev: null as Evaluation | null, existing: true };
        }
        const now = deps.clock.nowMs();
        const childId = `${id}/dispatch-${Math.floor(now / 1000)}-${newId().slice(0, 8)}`;
        const child: Job = {
          ...parent.job,
          ID: childId,
          Name: childId,
          ParentID: id,
          Dispatched: true,
          DispatchIdempotencyToken: token,
          Priority: priority,
          Meta: { ...(parent.job.Meta ?? {}), ...meta },
          Payload: payload.length > 0 ? payload.toString('base64') : null,
        };
        const written = await writeChildJob({ jobStore, evalStore, engineStore, clock: deps.clock }, { tx, index, emit }, child);
        return { job: written.job, ev: written.eval, existing: false };
      });
      return {
        Index: result.existing ? result.job.ModifyIndex : index,
        JobCreateIndex: result.job.CreateIndex,
        EvalID: result.ev?.ID ?? '',
        EvalCreateIndex: result.ev ? index : 0,
        DispatchedJobID: result.job.ID,
      };
    },

    /** POST /v1/job/:id/periodic/force: launches a child now. */
    async forcePeriodic(namespace: string, id: string, acl: Acl): Promise<JsonObject> {
      require(acl, namespace, 'submit-job');
      const rec = await jobStore.get(deps.prisma, namespace, id);
      if (!rec) throw new NotFoundError('job not found');
      if (!isPeriodic(rec.job)) throw new BadRequestError("can't force launch non-periodic job");
      const r = await deps.periodic.launch(namespace, id, deps.clock.nowMs(), true);
      if (!r) throw new BadRequestError(`force launch for job ${JSON.stringify(id)} failed: a child for this second already exists`);
      return { EvalID: r.eval?.ID ?? '', EvalCreateIndex: r.eval ? r.index : 0, Index: r.index };
    },

    /** PUT /v1/job/:id/plan: the scheduler's answer for this spec, committed nowhere. */
    async plan(namespace: string, pathId: string, body: JsonObject, withDiff: boolean, acl: Acl): Promise<JsonObject> {
      const raw = checkRegisterRequest(body, pathId);
      const spec = canonicalizeJob(raw, { namespace, region: deps.region });
      const problems = validateJob(spec);
      if (problems !== null) throw new BadRequestError(problems);
      require(acl, spec.Namespace, 'submit-job');
      const snap = await engineStore.snapshot(deps.prisma, spec.Namespace, spec.ID);
      const nodes = await engineStore.nodes(deps.prisma);
      const existing = snap.job;
      const changed = !existing || jobSpecChanged(existing, spec);
      const job: Job = existing && !changed
        ? existing
        : { ...spec, Version: existing ? existing.Version + 1 : 0, CreateIndex: existing?.CreateIndex ?? snap.index + 1, ModifyIndex: snap.index + 1, JobModifyIndex: snap.index + 1, Status: 'pending' };
      const ev = { ...newEval(job, snap.index, 'job-register'), AnnotatePlan: true };
      let annotations: JsonObject = {};
      let failed: JsonObject | null = null;
      if (!isPeriodic(job) && !isParameterized(job)) {
        const plan = computePlan({ index: snap.index, nowMs: deps.clock.nowMs(), job, allocs: snap.allocs, deployment: snap.deployment, nodes, usage: snap.usage }, ev);
        annotations = plan.annotations as unknown as JsonObject;
        failed = Object.keys(plan.failed).length > 0 ? (plan.failed as unknown as JsonObject) : null;
      }
      const next = isPeriodic(job) ? nextPeriodicLaunch(job, deps.clock.nowMs()) : null;
      return {
        Annotations: { DesiredTGUpdates: annotations, PreemptedAllocs: null },
        FailedTGAllocs: failed,
        JobModifyIndex: existing?.JobModifyIndex ?? 0,
        CreatedEvals: null,
        Diff: withDiff ? jobDiff(existing, job, annotations as never) : null,
        NextPeriodicLaunch: next === null ? GO_ZERO_TIME : new Date(next).toISOString(),
        Warnings: '',
        Index: snap.index,
      };
    },

    /** PUT /v1/job/:id/revert: registers an earlier version again as the newest. */
    async revert(namespace: string, id: string, version: number, enforcePrior: number | null, acl: Acl): Promise<JobRegisterResponse> {
      require(acl, namespace, 'submit-job');
      const { index, result } = await state.withWrite([TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions, TABLES.evals, TABLES.deployments], async ({ tx, index, emit }) => {
        const rec = await jobStore.get(tx, namespace, id);
        if (!rec) throw new NotFoundError('job not found');
        if (version === rec.job.Version) throw new BadRequestError("can't revert to current version");
        if (enforcePrior !== null && rec.job.Version !== enforcePrior) throw new BadRequestError(`Current job has version ${rec.job.Version}; enforcing version ${enforcePrior}`);
        const target = (await jobStore.versions(tx, namespace, id)).find((v) => v.Version === version);
        if (!target) throw new BadRequestError(`job ${JSON.stringify(id)} in namespace ${JSON.stringify(namespace)} at version ${version} not found`);
        return writeVersion({ tx, index, emit }, rec, target, 'job-register');
      });
      return registerResponse(index, result.ev, result.job.JobModifyIndex);
    },

    /** PUT /v1/job/:id/evaluate: a new evaluation; ForceReschedule marks failed allocations. */
    async evaluate(namespace: string, id: string, forceReschedule: boolean, acl: Acl): Promise<JsonObject> {
      require(acl, namespace, 'submit-job');
      const existing = await mustGet(namespace, id);
      if (isPeriodic(existing.job)) throw new BadRequestError("can't evaluate periodic job");
      if (isParameterized(existing.job)) throw new BadRequestError("can't evaluate parameterized job");
      const { index, result } = await state.withWrite([TABLES.evals, TABLES.allocs, TABLES.jobs, TABLES.jobSummary], async ({ tx, index, emit }) => {
        const rec = await jobStore.get(tx, namespace, id);
        if (!rec) throw new NotFoundError('job not found');
        if (forceReschedule) {
          for (const a of await deps.allocStore.where(tx, { namespace, jobId: id })) {
            if (a.ClientStatus !== 'failed' || a.DesiredStatus !== 'run') continue;
            const next: Allocation = { ...a, DesiredTransition: { ...asObject(a.DesiredTransition), ForceReschedule: true }, ModifyIndex: index, ModifyTime: nowNanos(deps.clock) };
            await deps.allocStore.put(tx, next);
            emit(allocEvent('AllocationUpdateDesiredStatus', next));
          }
        }
        const ev = newEval(rec.job, index, 'job-register');
        await evalStore.put(tx, ev);
        emit(evalEvent('EvaluationUpdated', ev));
        await refreshJobState(stateDeps, { tx, index, emit }, namespace, id, 'EvaluationUpdated');
        return { ev, jobModifyIndex: rec.job.JobModifyIndex };
      });
      return { EvalID: result.ev.ID, EvalCreateIndex: index, JobModifyIndex: result.jobModifyIndex, Index: index, LastContact: 0, KnownLeader: false, NextToken: '' };
    },

    /** PUT /v1/validate/job: always 200; problems are in the body (JobValidateResponse). */
    validate(body: JsonObject, namespace: string, acl: Acl): JsonObject {
      const raw = checkRegisterRequest(body, null);
      const job = canonicalizeJob(raw, { namespace, region: deps.region });
      require(acl, job.Namespace, 'read-job', 'submit-job');
      const problems = validateJob(job);
      const list = problems === null ? [] : problems.replace(/^\d+ errors? occurred:\n\t/, '').replace(/\n\n$/, '').split(/\n\t(?=\* )/).map((e) => e.replace(/^\* /, ''));
      return { DriverConfigValidated: false, ValidationErrors: list, Error: problems ?? '', Warnings: '' };
    },

    /** POST /v1/jobs/parse: HCL2 to the API's Job JSON (canonicalised on request). */
    async parse(hcl: string, variables: string, canonicalize: boolean, namespace: string, acl: Acl): Promise<JsonObject> {
      require(acl, namespace, 'parse-job', 'submit-job', 'read-job');
      const job = await parseJobHcl(hcl, variables);
      return canonicalize ? (canonicalizeJob(job, { namespace, region: deps.region }) as JsonObject) : job;
    },
  };
}

export type JobOperationsService = ReturnType<typeof createJobOperationsService>;
