// The credential of a request, read the one way every service reads it (issue 31, item 2).
// Each service names the headers it accepts, in its order of precedence: the spec's name,
// the anchor's alias (X-Vault-Token, X-Nomad-Token, X-Atlas-Token...) and `authorization`
// for `Authorization: Bearer <token>`.
// The scheme is case-insensitive (RFC 7235 §2.1). A bearer token has no white space (RFC
// 6750 §2.1, b64token), so the first word after the scheme is the token and anything after
// it is ignored, as Nomad's parseToken does.
const BEARER = /^\s*bearer\s+(\S+)/i;

/** The token of an `Authorization: Bearer <token>` value; undefined for another scheme. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

/**
 * The first credential found in `sources`, header names in lower case and in precedence
 * order: `authorization` is read as a Bearer token, any other header gives its trimmed
 * value. Absent, blank or non-Bearer values are skipped. Undefined when there is none.
 */
export function requestToken(headers: Readonly<Record<string, string | string[] | undefined>>, sources: readonly string[]): string | undefined {
  for (let i = 0; i < sources.length; i++) {
    const name = sources[i] as string;
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) continue;
    const token = name === 'authorization' ? bearerToken(value) : value.trim();
    if (token) return token;
  }
  return undefined;
}
