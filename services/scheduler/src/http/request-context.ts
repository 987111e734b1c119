// Per-request data every scheduler route gets as `ctx.extra`: the parsed query
// conventions and the caller's identity (ACL).
import type { Request } from 'express';
import type { Identity } from '../features/acl/acl.service';
import type { ReadOptions } from '../features/common/common.types';
import { parseQueryOptions, requestToken } from '../features/query/query.parser';
import type { QueryOptions } from '../features/query/query.types';

export interface RequestExtra {
  query: QueryOptions;
  identity: Identity;
}

export interface ExtraDeps {
  region: string;
  resolveIdentity(secret: string): Promise<Identity>;
}

export async function buildExtra(deps: ExtraDeps, req: Request): Promise<RequestExtra> {
  const query = parseQueryOptions(req.query as Record<string, unknown>, req.headers, { region: deps.region });
  const identity = await deps.resolveIdentity(requestToken(req.headers));
  return { query, identity };
}

export function readOptions(q: QueryOptions, signal: AbortSignal): ReadOptions {
  return { minIndex: q.minIndex, waitMs: q.waitMs, signal };
}
