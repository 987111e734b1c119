// /v1/evaluations and /v1/evaluation/:id[/allocations] (reference §3).
import { z } from 'zod';
import type { AnyPathSpec } from '@selfstack/http-kit';
import { flag, LIST_QUERY, param, pathField, READ_QUERY, route } from '../../http/fields';
import { readReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import { bool } from '../jobs/jobs.paths';
import { queryString } from '../query/query.parser';
import type { EvaluationService } from './evaluations.service';

export function evaluationPaths(evals: EvaluationService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathField('evaluation ID') };
  return [
    route({
      pattern: 'evaluations',
      summary: 'List evaluations',
      fields: {
        ...LIST_QUERY,
        status: { schema: z.string().optional(), in: 'query', description: 'dedicated filter on Status (not with `filter`)' },
        job: { schema: z.string().optional(), in: 'query', description: 'dedicated filter on JobID (not with `filter`)' },
      },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          const query = ctx.req.query as Record<string, unknown>;
          const legacy = { status: queryString(query, 'status') ?? '', job: queryString(query, 'job') ?? '' };
          return readReply(await evals.list(q, legacy, ctx.extra.identity.acl, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'evaluation/:id',
      summary: 'Read an evaluation',
      fields: { ...READ_QUERY, ...id, related: flag('`true` adds RelatedEvals') },
      operations: {
        async read(ctx) {
          const related = bool(ctx.req.query as Record<string, unknown>, 'related');
          return readReply(await evals.get(param(ctx, 'id'), related, ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'evaluation/:id/allocations',
      summary: 'Allocations an evaluation created',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await evals.allocations(param(ctx, 'id'), ctx.extra.query.namespace, ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
  ];
}
