// Routes of the scheduling engine (issue 25): allocation updates from client agents.
// Nomad's clients use the Node.UpdateAlloc RPC; here it is
// POST /v1/internal/node/:id/allocations, authenticated by the node's SecretID sent as the
// request token (X-Scheduler-Token / X-Nomad-Token / Authorization: Bearer), or a
// management token when ACLs are enabled.
import { z } from 'zod';
import { BadRequestError } from '@selfstack/errors';
import { requestToken, type AnyPathSpec } from '@selfstack/http-kit';
import { jsonMember, pathParam } from '../http/fields';
import { READ_QUERY, readOptions, WRITE_QUERY } from '../http/query';
import { readReply, writeReply } from '../http/reply';
import { schedulerPath, TOKEN_HEADERS, type RequestExtra } from '../http/request-context';
import type { ClientUpdatesService } from './client-updates.service';

const allocUpdate = z
  .object({
    ID: z.string().min(1),
    ClientStatus: z.enum(['pending', 'running', 'complete', 'failed', 'unknown']),
    ClientDescription: z.string().optional(),
    TaskStates: z.record(z.string(), z.unknown()).nullable().optional(),
    DeploymentStatus: z
      .object({ Healthy: z.boolean().nullable().optional(), Timestamp: z.string().optional() })
      .passthrough()
      .nullable()
      .optional(),
    NetworkStatus: z.unknown().optional(),
  })
  .passthrough();

export function enginePaths(clientUpdates: ClientUpdatesService): AnyPathSpec<RequestExtra>[] {
  return [
    schedulerPath({
      pattern: 'internal/node/:id/allocations',
      summary: 'Read (GET) or report the client status of (PUT/POST) the allocations on a node (client agents)',
      description:
        'GET: the node\'s allocations with their jobs, a blocking query (index, wait); the client agent\'s watch (issue 26). PUT/POST: body {"Allocs": [{ID, ClientStatus, ClientDescription, TaskStates, DeploymentStatus: {Healthy, Timestamp}}]}. ' +
        "Authenticated by the node's SecretID as the request token, or a management token with ACLs enabled. Emits AllocationUpdated.",
      fields: {
        ...READ_QUERY,
        ...WRITE_QUERY,
        id: pathParam('node ID'),
        Allocs: jsonMember(z.array(allocUpdate), 'AllocUpdateRequest.Alloc', '[]*structs.Allocation', 'allocation updates (1 to 1000)'),
      },
      operations: {
        async read(ctx) {
          return readReply(await clientUpdates.allocationsFor(ctx.params.id, requestToken(ctx.req.headers, TOKEN_HEADERS) ?? '', ctx.extra.identity.acl, readOptions(ctx)));
        },
        async update(ctx) {
          const allocs = ctx.body.Allocs ?? [];
          if (allocs.length === 0 || allocs.length > 1000) throw new BadRequestError('Allocs must hold 1 to 1000 allocation updates');
          const r = await clientUpdates.update(ctx.params.id, allocs, requestToken(ctx.req.headers, TOKEN_HEADERS) ?? '', ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
