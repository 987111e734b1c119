// /v1/evaluations and /v1/evaluation/:id[/allocations] (reference §3).
import type { AnyPathSpec } from '@selfstack/http-kit';
import { goBool, pathParam, queryString } from '../../http/fields';
import { LIST_QUERY, listQuery, namespaceScope, READ_QUERY, readOptions } from '../../http/query';
import { readReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import type { EvaluationService } from './evaluations.service';

export function evaluationPaths(evals: EvaluationService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathParam('evaluation ID') };
  return [
    schedulerPath({
      pattern: 'evaluations',
      summary: 'List evaluations',
      fields: {
        ...LIST_QUERY,
        status: queryString('dedicated filter on Status (not with `filter`)'),
        job: queryString('dedicated filter on JobID (not with `filter`)'),
      },
      operations: {
        async read(ctx) {
          const legacy = { status: ctx.query.status, job: ctx.query.job };
          return readReply(await evals.list(listQuery(ctx), legacy, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'evaluation/:id',
      summary: 'Read an evaluation',
      fields: { ...READ_QUERY, ...id, related: goBool('`true` adds RelatedEvals') },
      operations: {
        async read(ctx) {
          return readReply(await evals.get(ctx.params.id, ctx.query.related, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'evaluation/:id/allocations',
      summary: 'Allocations an evaluation created',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await evals.allocations(ctx.params.id, namespaceScope(ctx).namespace, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
  ];
}
