// /v1/jobs and /v1/job/:id/* (reference §1). Routes are data: one PathSpec per path.
import { InternalError } from '@selfstack/errors';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { flag, LIST_QUERY, param, pathField, READ_QUERY, route } from '../../http/fields';
import { readReply, writeReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import { parseBoolParam, queryString } from '../query/query.parser';
import type { JobService } from './jobs.service';

export function bool(query: Record<string, unknown>, name: string): boolean {
  const v = parseBoolParam(query, name);
  if (v === 'invalid') {
    // Nomad answers a bad boolean with a plain 500 (reference §1.3); the text is kept.
    throw new InternalError(`Failed to parse value of ${JSON.stringify(name)} (${queryString(query, name) ?? ''}) as a bool: strconv.ParseBool: parsing ${JSON.stringify(queryString(query, name) ?? '')}: invalid syntax`, { expose: true });
  }
  return v;
}

export function jobPaths(jobs: JobService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathField('job ID') };
  return [
    route({
      pattern: 'jobs',
      summary: 'List job stubs; register a job',
      fields: { ...LIST_QUERY, meta: flag('`true` adds Meta to each stub') },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          const r = await jobs.list(q, ctx.extra.identity.acl, bool(ctx.req.query as Record<string, unknown>, 'meta'), readOptions(q, ctx.signal));
          return readReply(r);
        },
        async update(ctx) {
          const r = await jobs.register(ctx.input, null, ctx.extra.query, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'job/:id',
      summary: 'Read, update or deregister a job',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await jobs.get(q.namespace, param(ctx, 'id'), ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
        async update(ctx) {
          const r = await jobs.register(ctx.input, param(ctx, 'id'), ctx.extra.query, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
        async delete(ctx) {
          const query = ctx.req.query as Record<string, unknown>;
          const purge = bool(query, 'purge');
          bool(query, 'global');
          const r = await jobs.deregister(ctx.extra.query.namespace, param(ctx, 'id'), purge, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
    route({
      pattern: 'job/:id/versions',
      summary: 'Versions of a job',
      fields: { ...READ_QUERY, ...id, diffs: flag('include diffs') },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          const diffs = bool(ctx.req.query as Record<string, unknown>, 'diffs');
          return readReply(await jobs.versions(q.namespace, param(ctx, 'id'), diffs, ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'job/:id/allocations',
      summary: 'Allocations of a job',
      fields: { ...READ_QUERY, ...id, all: flag('include allocations of earlier job instances') },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          const all = bool(ctx.req.query as Record<string, unknown>, 'all');
          return readReply(await jobs.allocations(q.namespace, param(ctx, 'id'), all, ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'job/:id/evaluations',
      summary: 'Evaluations of a job',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await jobs.evaluations(q.namespace, param(ctx, 'id'), ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'job/:id/deployments',
      summary: 'Deployments of a job, newest first',
      fields: { ...READ_QUERY, ...id, all: flag('include deployments of earlier job instances') },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          bool(ctx.req.query as Record<string, unknown>, 'all');
          return readReply(await jobs.deployments(q.namespace, param(ctx, 'id'), ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'job/:id/deployment',
      summary: 'Latest deployment of a job (null when none)',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await jobs.latestDeployment(q.namespace, param(ctx, 'id'), ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'job/:id/summary',
      summary: 'Summary of a job',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          return readReply(await jobs.summary(q.namespace, param(ctx, 'id'), ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
  ];
}

