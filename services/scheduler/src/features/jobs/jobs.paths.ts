// /v1/jobs and /v1/job/:id/* (reference §1). Routes are data: one PathSpec per path, each
// field declared with the type its handler reads.
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { goBool, jsonMember, jsonObject, pathParam } from '../../http/fields';
import { LIST_QUERY, listQuery, namespaceScope, READ_QUERY, readOptions } from '../../http/query';
import { readReply, writeReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import type { JobService } from './jobs.service';

/** api.JobRegisterRequest, as far as registration reads it (reference §1.1). */
const REGISTER_BODY = {
  Job: jsonMember(jsonObject, 'JobRegisterRequest.Job', 'api.Job', 'the job (ID, TaskGroups, ...)'),
  EnforceIndex: jsonMember(z.boolean(), 'JobRegisterRequest.EnforceIndex', 'bool', 'register only if JobModifyIndex matches'),
  JobModifyIndex: jsonMember(z.number().int().min(0), 'JobRegisterRequest.JobModifyIndex', 'uint64', 'the JobModifyIndex EnforceIndex expects (0: the job must not exist)'),
  EvalPriority: jsonMember(z.number().int(), 'JobRegisterRequest.EvalPriority', 'int', 'priority of the evaluation (default: the job priority)'),
};

export function jobPaths(jobs: JobService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathParam('job ID') };
  return [
    schedulerPath({
      pattern: 'jobs',
      summary: 'List job stubs; register a job',
      fields: { ...LIST_QUERY, meta: goBool('`true` adds Meta to each stub'), ...REGISTER_BODY },
      operations: {
        async read(ctx) {
          return readReply(await jobs.list(listQuery(ctx), ctx.extra.identity.acl, ctx.query.meta, readOptions(ctx)));
        },
        async update(ctx) {
          const r = await jobs.register(ctx.body, null, namespaceScope(ctx), ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/versions',
      summary: 'Versions of a job',
      fields: { ...READ_QUERY, ...id, diffs: goBool('include diffs') },
      operations: {
        async read(ctx) {
          const ns = namespaceScope(ctx).namespace;
          return readReply(await jobs.versions(ns, ctx.params.id, ctx.query.diffs, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/allocations',
      summary: 'Allocations of a job',
      fields: { ...READ_QUERY, ...id, all: goBool('include allocations of earlier job instances') },
      operations: {
        async read(ctx) {
          const ns = namespaceScope(ctx).namespace;
          return readReply(await jobs.allocations(ns, ctx.params.id, ctx.query.all, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/evaluations',
      summary: 'Evaluations of a job',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await jobs.evaluations(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/deployments',
      summary: 'Deployments of a job, newest first',
      // `all` is parsed (a bad value answers as Nomad does) but changes nothing: a job's
      // deployments are all listed.
      fields: { ...READ_QUERY, ...id, all: goBool('include deployments of earlier job instances') },
      operations: {
        async read(ctx) {
          return readReply(await jobs.deployments(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/deployment',
      summary: 'Latest deployment of a job (null when none)',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await jobs.latestDeployment(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'job/+id/summary',
      summary: 'Summary of a job',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await jobs.summary(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    // Last: `+id` takes slashes (a periodic or dispatched child's ID), so the routes with a
    // known suffix must be tried first (Nomad's jobSpecificRequest matches suffixes too).
    schedulerPath({
      pattern: 'job/+id',
      summary: 'Read, update or deregister a job',
      fields: {
        ...READ_QUERY,
        ...id,
        purge: goBool('delete the job and its history instead of stopping it'),
        global: goBool('deregister in every region (multiregion jobs)'),
        ...REGISTER_BODY,
      },
      operations: {
        async read(ctx) {
          return readReply(await jobs.get(namespaceScope(ctx).namespace, ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
        async update(ctx) {
          const r = await jobs.register(ctx.body, ctx.params.id, namespaceScope(ctx), ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
        async delete(ctx) {
          const r = await jobs.deregister(namespaceScope(ctx).namespace, ctx.params.id, ctx.query.purge, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
