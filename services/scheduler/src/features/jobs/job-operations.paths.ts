// Job operations (issue 25 item 5; reference §1.2's sub-routes): scale, dispatch,
// periodic/force, plan, revert, evaluate, validate/job and jobs/parse. Fields are declared
// with the types the handlers read (Nomad's wire rules and texts: http/fields.ts); each
// operation checks the capability the anchor requires (job-operations.service.ts).
import { z } from 'zod';
import { BadRequestError } from '@selfstack/errors';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { jsonMember, jsonObject, pathParam } from '../../http/fields';
import { namespaceScope, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { plainReply, readReply, writeReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import type { JobOperationsService } from './job-operations.service';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_JOB_HCL = 1_000_000;

export function jobOperationPaths(ops: JobOperationsService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathParam('job ID') };
  const jobBody = (request: string) => ({ Job: jsonMember(jsonObject, `${request}.Job`, 'api.Job', 'the job, as for PUT /v1/jobs') });
  return [
    schedulerPath({
      pattern: 'job/+id/scale',
      summary: 'Scaling status of a job; scale a task group',
      description:
        'GET: JobScaleStatusResponse (Desired/Placed/Running/Healthy/Unhealthy and the last scaling events per group; read-job-scaling). ' +
        'PUT/POST: {"Count", "Target": {"Group"}, "Message", "Error", "Meta"} registers a new version with the count and a job-scaling evaluation, and records a scaling event (scale-job).',
      fields: {
        ...READ_QUERY,
        ...id,
        Count: jsonMember(z.number().int(), 'ScalingRequest.Count', 'int64', 'new count of the group (absent or null: only record the event)'),
        Target: jsonMember(z.record(z.string(), z.string()), 'ScalingRequest.Target', 'map[string]string', '{"Group": "<task group>"}'),
        Message: jsonMember(z.string(), 'ScalingRequest.Message', 'string', 'why the job is scaled (at most 4096 characters)'),
        Error: jsonMember(z.boolean(), 'ScalingRequest.Error', 'bool', 'the event reports an error (no count change)'),
        Meta: jsonMember(jsonObject, 'ScalingRequest.Meta', 'map[string]interface {}', 'free-form event metadata'),
        PolicyOverride: jsonMember(z.boolean(), 'ScalingRequest.PolicyOverride', 'bool', 'accepted for compatibility (Sentinel is enterprise)'),
        EnforceIndex: jsonMember(z.boolean(), 'ScalingRequest.EnforceIndex', 'bool', 'check-and-set on JobModifyIndex'),
        JobModifyIndex: jsonMember(z.number().int().min(0), 'ScalingRequest.JobModifyIndex', 'uint64', 'expected JobModifyIndex with EnforceIndex'),
      },
      operations: {
        async read(ctx) {
          return readReply(await ops.scaleStatus(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
        async update(ctx) {
          const b = ctx.body;
          if (b.Message !== undefined && b.Message.length > 4096) throw new BadRequestError('Message must be at most 4096 characters');
          const r = await ops.scale(
            namespaceScope(ctx).namespace,
            ctx.params.id,
            { Count: b.Count, Target: b.Target, Message: b.Message, Error: b.Error, Meta: b.Meta, EnforceIndex: b.EnforceIndex, JobModifyIndex: b.JobModifyIndex },
            ctx.extra.identity.acl,
          );
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/dispatch',
      summary: 'Dispatch a parameterized job',
      description: 'Creates the child job `<id>/dispatch-<unix>-<8 hex>` with the payload (base64, at most 16 KiB) and meta (dispatch-job).',
      fields: {
        ...WRITE_QUERY,
        ...id,
        Payload: jsonMember(z.string(), 'JobDispatchRequest.Payload', '[]uint8', 'payload, base64'),
        Meta: jsonMember(z.record(z.string(), z.string()), 'JobDispatchRequest.Meta', 'map[string]string', 'meta keys the parameterized block allows'),
        IdempotencyToken: jsonMember(z.string(), 'JobDispatchRequest.IdempotencyToken', 'string', 'a repeated token returns the earlier child (at most 256 characters)'),
        Priority: jsonMember(z.number().int(), 'JobDispatchRequest.Priority', 'int', "priority of the child, 0-100 (default: the parent's)"),
      },
      operations: {
        async update(ctx) {
          const b = ctx.body;
          // Go decodes []byte from base64 and refuses anything else.
          if (b.Payload !== undefined && !BASE64.test(b.Payload)) throw new BadRequestError('illegal base64 data in Payload');
          if (b.IdempotencyToken !== undefined && b.IdempotencyToken.length > 256) throw new BadRequestError('IdempotencyToken must be at most 256 characters');
          if (b.Priority !== undefined && (b.Priority < 0 || b.Priority > 100)) throw new BadRequestError('job priority must be between [0, 100]');
          const r = await ops.dispatch(
            namespaceScope(ctx).namespace,
            ctx.params.id,
            { Payload: b.Payload, Meta: b.Meta, IdempotencyToken: b.IdempotencyToken, Priority: b.Priority },
            ctx.extra.identity.acl,
          );
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/periodic/force',
      summary: 'Launch a periodic job now',
      description: 'Creates the child `<id>/periodic-<unix>` and its evaluation, whatever the schedule (submit-job).',
      fields: { ...WRITE_QUERY, ...id },
      operations: {
        async update(ctx) {
          const r = await ops.forcePeriodic(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/plan',
      summary: 'Plan a job: what registering it would place, stop and update',
      description:
        'A dry run of the scheduler over the current state: Annotations.DesiredTGUpdates, FailedTGAllocs, JobModifyIndex (for EnforceIndex), Diff with "Diff": true, NextPeriodicLaunch (submit-job).',
      fields: {
        ...WRITE_QUERY,
        ...id,
        ...jobBody('JobPlanRequest'),
        Diff: jsonMember(z.boolean(), 'JobPlanRequest.Diff', 'bool', 'include the diff against the current version'),
        PolicyOverride: jsonMember(z.boolean(), 'JobPlanRequest.PolicyOverride', 'bool', 'accepted for compatibility'),
      },
      operations: {
        async update(ctx) {
          const r = await ops.plan(namespaceScope(ctx).namespace, ctx.params.id, { Job: ctx.body.Job ?? null }, ctx.body.Diff === true, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/revert',
      summary: 'Revert a job to an earlier version',
      description: 'Registers version JobVersion again as the newest version (submit-job); EnforcePriorVersion checks the current one.',
      fields: {
        ...WRITE_QUERY,
        ...id,
        JobID: jsonMember(z.string(), 'JobRevertRequest.JobID', 'string', 'must equal the path ID when given'),
        JobVersion: jsonMember(z.number().int().min(0), 'JobRevertRequest.JobVersion', 'uint64', 'the version to revert to (required)'),
        EnforcePriorVersion: jsonMember(z.number().int().min(0), 'JobRevertRequest.EnforcePriorVersion', 'uint64', 'the current version must be this'),
        ConsulToken: jsonMember(z.string(), 'JobRevertRequest.ConsulToken', 'string', 'accepted for compatibility'),
        VaultToken: jsonMember(z.string(), 'JobRevertRequest.VaultToken', 'string', 'accepted for compatibility'),
      },
      operations: {
        async update(ctx) {
          const b = ctx.body;
          if (b.JobID !== undefined && b.JobID !== '' && b.JobID !== ctx.params.id) throw new BadRequestError('Job ID does not match');
          // The anchor decodes a missing JobVersion as 0 and reverts to the first version;
          // a revert that names no version is refused here instead.
          if (b.JobVersion === undefined) throw new BadRequestError('JobVersion is required');
          const r = await ops.revert(namespaceScope(ctx).namespace, ctx.params.id, b.JobVersion, b.EnforcePriorVersion ?? null, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/evaluate',
      summary: 'Create a new evaluation of a job',
      description: '{"EvalOptions": {"ForceReschedule": true}} also reschedules failed allocations now (submit-job).',
      fields: {
        ...WRITE_QUERY,
        ...id,
        JobID: jsonMember(z.string(), 'JobEvaluateRequest.JobID', 'string', 'the job ID (optional)'),
        EvalOptions: jsonMember(z.object({ ForceReschedule: z.boolean().optional() }).passthrough(), 'JobEvaluateRequest.EvalOptions', 'api.EvalOptions', '{"ForceReschedule": bool}'),
      },
      operations: {
        async update(ctx) {
          const r = await ops.evaluate(namespaceScope(ctx).namespace, ctx.params.id, ctx.body.EvalOptions?.ForceReschedule === true, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    schedulerPath({
      pattern: 'validate/job',
      summary: 'Validate a job without registering it',
      description: 'Always 200: {"DriverConfigValidated", "ValidationErrors": [...], "Error", "Warnings"} (read-job).',
      fields: { ...WRITE_QUERY, ...jobBody('JobValidateRequest') },
      operations: {
        update(ctx) {
          return plainReply(ops.validate({ Job: ctx.body.Job ?? null }, namespaceScope(ctx).namespace, ctx.extra.identity.acl));
        },
      },
    }),
    schedulerPath({
      pattern: 'jobs/parse',
      summary: 'Parse an HCL2 job specification into JSON',
      description: '{"JobHCL": "<hcl>", "Canonicalize": bool, "Variables": "<var-file HCL>"} -> the Job as JSON (parse-job).',
      fields: {
        ...WRITE_QUERY,
        JobHCL: jsonMember(z.string(), 'JobsParseRequest.JobHCL', 'string', 'the job file (at most 1,000,000 characters)'),
        Canonicalize: jsonMember(z.boolean(), 'JobsParseRequest.Canonicalize', 'bool', 'apply the defaults of a register'),
        Variables: jsonMember(z.string(), 'JobsParseRequest.Variables', 'string', 'input variables in HCL var-file syntax'),
        HCLv1: jsonMember(z.boolean(), 'JobsParseRequest.HCLv1', 'bool', 'HCL1 is not supported (ignored)'),
      },
      operations: {
        async update(ctx) {
          const b = ctx.body;
          if (b.JobHCL === undefined || b.JobHCL === '') throw new BadRequestError('Job spec is empty');
          if (b.JobHCL.length > MAX_JOB_HCL || (b.Variables ?? '').length > MAX_JOB_HCL) throw new BadRequestError(`JobHCL and Variables must be at most ${MAX_JOB_HCL} characters`);
          return plainReply(await ops.parse(b.JobHCL, b.Variables ?? '', b.Canonicalize === true, namespaceScope(ctx).namespace, ctx.extra.identity.acl));
        },
      },
    }),
  ];
}
