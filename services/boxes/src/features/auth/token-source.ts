// Where a token may come from (spec "Authentication" 2; reference A.1, A.10):
// `Authorization: Bearer` (preferred), `X-Atlas-Token` and `X-Legacy-Token` (legacy
// headers), and the deprecated `access_token` query parameter (vagrant sends it with
// VAGRANT_SERVER_ACCESS_TOKEN_BY_URL=1).
import type { IncomingHttpHeaders } from 'node:http';
import { requestToken } from '@selfstack/http-kit';

const TOKEN_HEADERS = ['authorization', 'x-atlas-token', 'x-legacy-token'] as const;

export function extractToken(headers: IncomingHttpHeaders, query: Record<string, unknown>): string | undefined {
  const fromHeaders = requestToken(headers, TOKEN_HEADERS);
  if (fromHeaders !== undefined) return fromHeaders;
  const q = query.access_token;
  const fromQuery = Array.isArray(q) ? q[0] : q;
  return typeof fromQuery === 'string' && fromQuery.trim() !== '' ? fromQuery.trim() : undefined;
}
