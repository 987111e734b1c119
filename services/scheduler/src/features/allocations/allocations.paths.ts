// /v1/allocations and /v1/allocation/:id[/stop] (reference §3).
import type { AnyPathSpec } from '@selfstack/http-kit';
import { flag, LIST_QUERY, param, pathField, READ_QUERY, route, WRITE_QUERY } from '../../http/fields';
import { readReply, writeReply } from '../../http/reply';
import { readOptions, type RequestExtra } from '../../http/request-context';
import { bool } from '../jobs/jobs.paths';
import { parseBoolParam } from '../query/query.parser';
import type { AllocationService } from './allocations.service';

export function allocationPaths(allocs: AllocationService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathField('allocation ID') };
  return [
    route({
      pattern: 'allocations',
      summary: 'List allocation stubs',
      fields: { ...LIST_QUERY, resources: flag('add AllocatedResources'), task_states: flag('`false` omits TaskStates') },
      operations: {
        async read(ctx) {
          const q = ctx.extra.query;
          const query = ctx.req.query as Record<string, unknown>;
          const ts = parseBoolParam(query, 'task_states');
          const flags = { resources: bool(query, 'resources'), taskStates: query['task_states'] === undefined || ts === true };
          return readReply(await allocs.list(q, ctx.extra.identity.acl, flags, readOptions(q, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'allocation/:id',
      summary: 'Read an allocation',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await allocs.get(param(ctx, 'id'), ctx.extra.identity.acl, readOptions(ctx.extra.query, ctx.signal)));
        },
      },
    }),
    route({
      pattern: 'allocation/:id/stop',
      summary: 'Stop (migrate) an allocation',
      fields: { ...WRITE_QUERY, ...id, no_shutdown_delay: flag('skip the shutdown delay') },
      operations: {
        async update(ctx) {
          const r = await allocs.stop(param(ctx, 'id'), ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
