// Per-request data every scheduler route gets as `ctx.extra`: the caller's identity (ACL),
// resolved after the kit validated the query and body (MountOptions.validateFirst: Nomad
// parses every parameter before its RPC checks the token).
import type { IncomingHttpHeaders } from 'node:http';
import { definePathFor } from '@selfstack/http-kit';
import type { Identity } from '../features/acl/acl.service';

export interface RequestExtra {
  identity: Identity;
}

/** definePath for the scheduler's tables: handlers read their own validated fields. */
export const schedulerPath = definePathFor<RequestExtra>();

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The ACL token of a request (reference §0 `parseToken`): X-Scheduler-Token, then the
 * anchor's X-Nomad-Token (trimmed), then `Authorization: Bearer <secret>`.
 */
export function requestToken(headers: IncomingHttpHeaders): string {
  const direct = header(headers, 'x-scheduler-token') ?? header(headers, 'x-nomad-token');
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  const auth = header(headers, 'authorization');
  if (auth !== undefined) {
    const parts = auth.trim().split(/\s+/);
    if (parts.length >= 2 && (parts[0] ?? '').toLowerCase() === 'bearer') return parts[1] ?? '';
  }
  return '';
}

export function requestExtra(resolveIdentity: (secret: string) => Promise<Identity>) {
  return async (req: { headers: IncomingHttpHeaders }): Promise<RequestExtra> => ({ identity: await resolveIdentity(requestToken(req.headers)) });
}
