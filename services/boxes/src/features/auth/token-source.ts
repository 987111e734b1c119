// Where a token may come from (spec "Authentication" 2; reference A.1, A.10):
// `Authorization: Bearer` (preferred), `X-Atlas-Token` and `X-Legacy-Token` (legacy
// headers), and the deprecated `access_token` query parameter (vagrant sends it with
// VAGRANT_SERVER_ACCESS_TOKEN_BY_URL=1).
import type { IncomingHttpHeaders } from 'node:http';

function single(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  const t = v?.trim();
  return t ? t : undefined;
}

export function extractToken(headers: IncomingHttpHeaders, query: Record<string, unknown>): string | undefined {
  const auth = single(headers.authorization);
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m?.[1]) return m[1];
  }
  const legacy = single(headers['x-atlas-token']) ?? single(headers['x-legacy-token']);
  if (legacy) return legacy;
  const q = query.access_token;
  const fromQuery = Array.isArray(q) ? q[0] : q;
  return typeof fromQuery === 'string' && fromQuery.trim() !== '' ? fromQuery.trim() : undefined;
}
