// Routes of the scheduling engine (issue 25): allocation updates from client agents.
// Nomad's clients use the Node.UpdateAlloc RPC; here it is
// POST /v1/internal/node/:id/allocations, authenticated by the node's SecretID sent as the
// request token (X-Scheduler-Token / X-Nomad-Token / Authorization: Bearer), or a
// management token when ACLs are enabled.
import { z } from 'zod';
import { definePath, type AnyPathSpec } from '@selfstack/http-kit';
import { writeReply } from '../http/reply';
import type { RequestExtra } from '../http/request-context';
import { requestToken } from '../features/query/query.parser';
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
    definePath({
      pattern: 'internal/node/:id/allocations',
      summary: 'Report the client status of allocations on a node (client agents)',
      description:
        'Body {"Allocs": [{ID, ClientStatus, ClientDescription, TaskStates, DeploymentStatus: {Healthy, Timestamp}}]}. ' +
        "Authenticated by the node's SecretID as the request token, or a management token with ACLs enabled. Emits AllocationUpdated.",
      fields: {
        id: { in: 'path', schema: z.string().min(1), required: true, description: 'node ID' },
        Allocs: { in: 'body', schema: z.array(allocUpdate).min(1).max(1000), required: true, description: 'allocation updates (1 to 1000)' },
      },
      operations: {
        async update(ctx) {
          const r = await clientUpdates.update(ctx.data.id, ctx.data.Allocs, requestToken(ctx.req.headers), ctx.extra.identity.acl);
          return writeReply(r, r.Index);
        },
      },
    }),
  ];
}
