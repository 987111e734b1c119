// /v1/allocations and /v1/allocation/:id[/stop] (reference §3).
import type { AnyPathSpec } from '@selfstack/http-kit';
import { goBool, pathParam } from '../../http/fields';
import { LIST_QUERY, listQuery, READ_QUERY, readOptions, WRITE_QUERY } from '../../http/query';
import { readReply, writeReply } from '../../http/reply';
import { schedulerPath, type RequestExtra } from '../../http/request-context';
import type { AllocationService } from './allocations.service';

export function allocationPaths(allocs: AllocationService): AnyPathSpec<RequestExtra>[] {
  const id = { id: pathParam('allocation ID') };
  return [
    schedulerPath({
      pattern: 'allocations',
      summary: 'List allocation stubs',
      fields: {
        ...LIST_QUERY,
        resources: goBool('add AllocatedResources'),
        task_states: goBool('`false` omits TaskStates', true),
      },
      operations: {
        async read(ctx) {
          const flags = { resources: ctx.query.resources, taskStates: ctx.query.task_states };
          return readReply(await allocs.list(listQuery(ctx), ctx.extra.identity.acl, flags, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'allocation/:id',
      summary: 'Read an allocation',
      fields: { ...READ_QUERY, ...id },
      operations: {
        async read(ctx) {
          return readReply(await allocs.get(ctx.params.id, ctx.extra.identity.acl, readOptions(ctx)));
        },
      },
    }),
    schedulerPath({
      pattern: 'allocation/:id/stop',
      summary: 'Stop (migrate) an allocation',
      // `no_shutdown_delay` is parsed as Nomad does; a stop here has no shutdown delay to skip.
      fields: { ...WRITE_QUERY, ...id, no_shutdown_delay: goBool('skip the shutdown delay') },
      operations: {
        async update(ctx) {
          const r = await allocs.stop(ctx.params.id, ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
