// Job operations (issue 25 item 5; reference §1.2's sub-routes), declared with typed
// fields: scale, dispatch, periodic/force, plan, revert, evaluate, validate/job and
// jobs/parse. Each checks the capability the anchor requires (job-operations.service.ts).
import { z } from 'zod';
import { BadRequestError } from '@selfstack/errors';
import { definePath, type AnyPathSpec } from '@selfstack/http-kit';
import { readReply, writeReply, plainReply } from '../../http/reply';
import type { RequestExtra } from '../../http/request-context';
import type { JobOperationsService } from './job-operations.service';

const query = (description: string) => ({ in: 'query' as const, schema: z.string().optional(), description });

/** The query conventions every scheduler route accepts (parsed once in http/request-context). */
const conventions = {
  namespace: query('target namespace (default `default`)'),
  region: query('target region (forwarded to a configured peer)'),
  pretty: query('indented JSON output'),
};

const readConventions = {
  ...conventions,
  index: query('blocking query: wait for an index greater than this'),
  wait: query('blocking query: maximum wait (Go duration)'),
  stale: query('allow a stale read'),
};

const jobId = { id: { in: 'path' as const, schema: z.string().min(1), required: true as const, description: 'job ID' } };

const jobBody = { in: 'body' as const, schema: z.record(z.string(), z.unknown()).nullable().optional(), description: 'the job, as for PUT /v1/jobs' };

export function jobOperationPaths(ops: JobOperationsService): AnyPathSpec<RequestExtra>[] {
  return [
    definePath({
      pattern: 'job/:id/scale',
      summary: 'Scaling status of a job; scale a task group',
      description:
        'GET: JobScaleStatusResponse (Desired/Placed/Running/Healthy/Unhealthy and the last scaling events per group; read-job-scaling). ' +
        'PUT/POST: {"Count", "Target": {"Group"}, "Message", "Error", "Meta"} registers a new version with the count and a job-scaling evaluation, and records a scaling event (scale-job).',
      fields: {
        ...readConventions,
        ...jobId,
        Count: { in: 'body', schema: z.number().int().nullable().optional(), description: 'new count of the group (null: only record the event)' },
        Target: { in: 'body', schema: z.record(z.string(), z.string()).optional(), description: '{"Group": "<task group>"}' },
        Message: { in: 'body', schema: z.string().max(4096).optional(), description: 'why the job is scaled' },
        Error: { in: 'body', schema: z.boolean().optional(), description: 'the event reports an error (no count change)' },
        Meta: { in: 'body', schema: z.record(z.string(), z.unknown()).nullable().optional(), description: 'free-form event metadata' },
        PolicyOverride: { in: 'body', schema: z.boolean().optional(), description: 'accepted for compatibility (Sentinel is enterprise)' },
        EnforceIndex: { in: 'body', schema: z.boolean().optional(), description: 'check-and-set on JobModifyIndex' },
        JobModifyIndex: { in: 'body', schema: z.number().int().min(0).optional(), description: 'expected JobModifyIndex with EnforceIndex' },
      },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await ops.scaleStatus(q.namespace, ctx.data.id, ctx.extra.identity.acl, { minIndex: q.minIndex, waitMs: q.waitMs, signal: ctx.signal }));
        },
        async update(ctx) {
          const d = ctx.data;
          const r = await ops.scale(ctx.extra.query.namespace, d.id, { Count: d.Count, Target: d.Target, Message: d.Message, Error: d.Error, Meta: d.Meta, EnforceIndex: d.EnforceIndex, JobModifyIndex: d.JobModifyIndex }, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    definePath({
      pattern: 'job/:id/dispatch',
      summary: 'Dispatch a parameterized job',
      description: 'Creates the child job `<id>/dispatch-<unix>-<8 hex>` with the payload (base64, at most 16 KiB) and meta (dispatch-job).',
      fields: {
        ...conventions,
        ...jobId,
        Payload: { in: 'body', schema: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').nullable().optional(), description: 'payload, base64' },
        Meta: { in: 'body', schema: z.record(z.string(), z.string()).nullable().optional(), description: 'meta keys the parameterized block allows' },
        IdempotencyToken: { in: 'body', schema: z.string().max(256).optional(), description: 'a repeated token returns the earlier child' },
        Priority: { in: 'body', schema: z.number().int().min(0).max(100).optional(), description: 'priority of the child (default: the parent\'s)' },
      },
      operations: {
        async update(ctx) {
          const d = ctx.data;
          const r = await ops.dispatch(ctx.extra.query.namespace, d.id, { Payload: d.Payload, Meta: d.Meta, IdempotencyToken: d.IdempotencyToken, Priority: d.Priority }, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    definePath({
      pattern: 'job/:id/periodic/force',
      summary: 'Launch a periodic job now',
      description: 'Creates the child `<id>/periodic-<unix>` and its evaluation, whatever the schedule (submit-job).',
      fields: { ...conventions, ...jobId },
      operations: {
        async update(ctx) {
          const r = await ops.forcePeriodic(ctx.extra.query.namespace, ctx.data.id, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    definePath({
      pattern: 'job/:id/plan',
      summary: 'Plan a job: what registering it would place, stop and update',
      description: 'A dry run of the scheduler over the current state: Annotations.DesiredTGUpdates, FailedTGAllocs, JobModifyIndex (for EnforceIndex), Diff with "Diff": true, NextPeriodicLaunch (submit-job).',
      fields: {
        ...conventions,
        ...jobId,
        Job: jobBody,
        Diff: { in: 'body', schema: z.boolean().optional(), description: 'include the diff against the current version' },
        PolicyOverride: { in: 'body', schema: z.boolean().optional(), description: 'accepted for compatibility' },
      },
      operations: {
        async update(ctx) {
          const r = await ops.plan(ctx.extra.query.namespace, ctx.data.id, { Job: ctx.data.Job }, ctx.data.Diff === true, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    definePath({
      pattern: 'job/:id/revert',
      summary: 'Revert a job to an earlier version',
      description: 'Registers version JobVersion again as the newest version (submit-job); EnforcePriorVersion checks the current one.',
      fields: {
        ...conventions,
        ...jobId,
        JobID: { in: 'body', schema: z.string().optional(), description: 'must equal the path ID when given' },
        JobVersion: { in: 'body', schema: z.number().int().min(0), required: true, description: 'the version to revert to' },
        EnforcePriorVersion: { in: 'body', schema: z.number().int().min(0).nullable().optional(), description: 'the current version must be this' },
        ConsulToken: { in: 'body', schema: z.string().optional(), description: 'accepted for compatibility' },
        VaultToken: { in: 'body', schema: z.string().optional(), description: 'accepted for compatibility' },
      },
      operations: {
        async update(ctx) {
          const d = ctx.data;
          if (d.JobID !== undefined && d.JobID !== '' && d.JobID !== d.id) throw new BadRequestError('Job ID does not match');
          const r = await ops.revert(ctx.extra.query.namespace, d.id, d.JobVersion, d.EnforcePriorVersion ?? null, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    definePath({
      pattern: 'job/:id/evaluate',
      summary: 'Create a new evaluation of a job',
      description: '{"EvalOptions": {"ForceReschedule": true}} also reschedules failed allocations now (submit-job).',
      fields: {
        ...conventions,
        ...jobId,
        JobID: { in: 'body', schema: z.string().optional(), description: 'the job ID (optional)' },
        EvalOptions: { in: 'body', schema: z.object({ ForceReschedule: z.boolean().optional() }).passthrough().nullable().optional(), description: '{"ForceReschedule": bool}' },
      },
      operations: {
        async update(ctx) {
          const r = await ops.evaluate(ctx.extra.query.namespace, ctx.data.id, ctx.data.EvalOptions?.ForceReschedule === true, ctx.extra.identity.acl);
          return writeReply(r, Number(r['Index']));
        },
      },
    }),
    definePath({
      pattern: 'validate/job',
      summary: 'Validate a job without registering it',
      description: 'Always 200: {"DriverConfigValidated", "ValidationErrors": [...], "Error", "Warnings"} (read-job).',
      fields: { ...conventions, Job: jobBody },
      operations: {
        update(ctx) {
          return plainReply(ops.validate({ Job: ctx.data.Job }, ctx.extra.query.namespace, ctx.extra.identity.acl));
        },
      },
    }),
    definePath({
      pattern: 'jobs/parse',
      summary: 'Parse an HCL2 job specification into JSON',
      description: '{"JobHCL": "<hcl>", "Canonicalize": bool, "Variables": "<var-file HCL>"} -> the Job as JSON (parse-job).',
      fields: {
        ...conventions,
        JobHCL: { in: 'body', schema: z.string().min(1).max(1_000_000), required: true, description: 'the job file' },
        Canonicalize: { in: 'body', schema: z.boolean().optional(), description: 'apply the defaults of a register' },
        Variables: { in: 'body', schema: z.string().max(1_000_000).optional(), description: 'input variables in HCL var-file syntax' },
        HCLv1: { in: 'body', schema: z.boolean().optional(), description: 'HCL1 is not supported (ignored)' },
      },
      operations: {
        async update(ctx) {
          return plainReply(await ops.parse(ctx.data.JobHCL, ctx.data.Variables ?? '', ctx.data.Canonicalize === true, ctx.extra.query.namespace, ctx.extra.identity.acl));
        },
      },
    }),
  ];
}
