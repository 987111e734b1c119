// Per-request data every scheduler route gets as `ctx.extra`: the caller's identity (ACL),
// resolved after the kit validated the query and body (MountOptions.validateFirst: Nomad
// parses every parameter before its RPC checks the token).
import type { IncomingHttpHeaders } from 'node:http';
import { definePathFor, requestToken } from '@selfstack/http-kit';
import type { Identity } from '../features/acl/acl.service';

export interface RequestExtra {
  identity: Identity;
}

/** definePath for the scheduler's tables: handlers read their own validated fields. */
export const schedulerPath = definePathFor<RequestExtra>();

/** The spec's X-Scheduler-Token, the anchor's X-Nomad-Token, then `Authorization: Bearer`
 * (reference §0 `parseToken`). */
export const TOKEN_HEADERS = ['x-scheduler-token', 'x-nomad-token', 'authorization'] as const;

export function requestExtra(resolveIdentity: (secret: string) => Promise<Identity>) {
  return async (req: { headers: IncomingHttpHeaders }): Promise<RequestExtra> => ({ identity: await resolveIdentity(requestToken(req.headers, TOKEN_HEADERS) ?? '') });
}
