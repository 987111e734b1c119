// Listener `custom_response_headers` (spec "Response header customization"; reference
// §8.1): `default` first, then the `Nxx` class, then the exact code, each overriding the
// previous for the same header name; values joined with "; "; X-Vault-* names ignored;
// `Strict-Transport-Security: max-age=31536000; includeSubDomains` added to `default`
// unless configured.
import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

export type RawCustomHeaders = Record<string, Record<string, unknown>>;

export interface CustomHeaders {
  forStatus(status: number): readonly (readonly [string, string])[];
  /** Configuration warnings (ignored X-Vault-* headers). */
  readonly warnings: readonly string[];
}

export class CustomHeadersError extends Error {
  override readonly name = 'CustomHeadersError';
}

const KEY_RE = /^(default|[1-5]xx|[1-5]\d\d)$/;
const DEFAULT_HSTS = 'max-age=31536000; includeSubDomains';

/** Go's textproto.CanonicalMIMEHeaderKey: `x-custom-header` -> `X-Custom-Header`. */
export function canonicalHeaderName(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  return name
    .split('-')
    .map((p) => (p.length === 0 ? p : p[0]!.toUpperCase() + p.slice(1).toLowerCase()))
    .join('-');
}

export function compileCustomHeaders(raw: RawCustomHeaders | undefined): CustomHeaders {
  const warnings: string[] = [];
  const groups = new Map<string, Map<string, string>>();
  for (const [key, headers] of Object.entries(raw ?? {})) {
    if (!KEY_RE.test(key)) throw new CustomHeadersError(`invalid status code found in the server configuration: ${key}`);
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      throw new CustomHeadersError(`custom_response_headers ${JSON.stringify(key)}: headers must be a map`);
    }
    const group = new Map<string, string>();
    for (const [name, values] of Object.entries(headers)) {
      if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) {
        throw new CustomHeadersError('headers must be given in a list of strings');
      }
      const canonical = canonicalHeaderName(name);
      if (canonical.toLowerCase().startsWith('x-vault-')) {
        warnings.push(`custom header ${canonical} is ignored: X-Vault- headers cannot be configured`);
        continue;
      }
      const joined = (values as string[]).filter((v) => v.trim() !== '').join('; ');
      if (/[\r\n]/.test(joined)) throw new CustomHeadersError(`custom header ${canonical} contains a line break`);
      group.set(canonical, joined);
    }
    groups.set(key, group);
  }
  const defaults = groups.get('default') ?? new Map<string, string>();
  if (!defaults.has('Strict-Transport-Security')) defaults.set('Strict-Transport-Security', DEFAULT_HSTS);
  groups.set('default', defaults);

  const cache = new Map<number, (readonly [string, string])[]>();
  return {
    warnings,
    forStatus(status) {
      const hit = cache.get(status);
      if (hit) return hit;
      const merged = new Map<string, string>(groups.get('default'));
      for (const key of [`${Math.floor(status / 100)}xx`, String(status)]) {
        for (const [k, v] of groups.get(key) ?? []) merged.set(k, v);
      }
      const list = [...merged.entries()];
      cache.set(status, list);
      return list;
    },
  };
}

const CONFIGURED = Symbol('selfstack.customHeaders');
const WRITE_HEAD = Symbol('selfstack.writeHead');
type Customised = ServerResponse & { [CONFIGURED]: CustomHeaders; [WRITE_HEAD]: ServerResponse['writeHead'] };

// One function for every response (no closure per request): the headers and the writeHead
// it replaced are kept on the response.
function writeHeadWithCustomHeaders(this: Customised, ...args: unknown[]): ServerResponse {
  const list = this[CONFIGURED].forStatus(args[0] as number);
  for (let i = 0; i < list.length; i++) {
    const pair = list[i] as readonly [string, string];
    this.setHeader(pair[0], pair[1]);
  }
  return (this[WRITE_HEAD] as (...a: unknown[]) => ServerResponse).apply(this, args);
}

/** Adds the configured headers when the status line is written, whatever wrote it. */
export function customHeadersMiddleware(headers: CustomHeaders): RequestHandler {
  return (_req, res, next) => {
    const r = res as unknown as Customised;
    r[CONFIGURED] = headers;
    r[WRITE_HEAD] = res.writeHead;
    res.writeHead = writeHeadWithCustomHeaders as typeof res.writeHead;
    next();
  };
}
