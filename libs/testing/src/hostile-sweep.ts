// Table-driven hostile-input sweep (integration tests): walks every route an app declares
// (the PathSpec tables recorded by http-kit's mountPaths / recordMountedTable), sends
// malformed and hostile requests over a real socket (raw paths: no URL normalisation) and
// collects every answer that is a 5xx, a transport failure or not in the service's error
// shape. Each service's hostile-input.itest.ts supplies the shape check, authentication and
// valid-looking parameter values.
import http from 'node:http';
import { DEFAULT_MAX_BODY_DEPTH, mountedPathTables, type CompiledField, type MountedTable } from '@selfstack/http-kit';
import { MUST_REFUSE, hostileBodies } from './hostile-bodies';

export interface SweepRoute {
  /** HTTP method (`LIST` included). */
  method: string;
  /** Full route pattern: mount prefix + table pattern (the prefix may hold `:params`). */
  pattern: string;
  label: string;
  /** Table pattern parameters (`:name` / `*name`), in order. */
  params: { name: string; glob: boolean }[];
  /** Declared query/body fields. */
  dataFields: CompiledField[];
  /** `body: 'stream'` routes read the raw body themselves (uploads, archives). */
  stream: boolean;
  /** `response: 'stream'` routes answer with an endless stream (event stream): a request
   * is done once the head and the first bytes of a 2xx body arrived. */
  streamsResponse: boolean;
  /** PathSpec metadata (e.g. `unauthenticated`). */
  unauthenticated: boolean;
}

export interface SweepResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface SweepCase {
  route: SweepRoute;
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Extra expectation for this case; returns a problem description or undefined. */
  expect?: (res: SweepResponse) => string | undefined;
}

const METHODS_BY_OPERATION: Record<string, string[]> = {
  read: ['GET', 'HEAD'],
  list: ['LIST'],
  create: ['PUT', 'POST'],
  update: ['PUT', 'POST'],
  patch: ['PATCH'],
  delete: ['DELETE'],
};

/** Every (route, method) of every table recorded on `app`. */
export function sweepRoutes(app: object, tables: readonly MountedTable[] = mountedPathTables(app)): SweepRoute[] {
  const out: SweepRoute[] = [];
  for (const t of tables) {
    for (const entry of t.table.entries) {
      const methods = new Set<string>();
      for (const [op, fn] of Object.entries(entry.spec.operations)) {
        if (typeof fn === 'function') for (const m of METHODS_BY_OPERATION[op] ?? []) methods.add(m);
      }
      const prefix = t.prefix.replace(/\/+$/, '');
      const pattern = entry.compiled.pattern === '' ? prefix || '/' : `${prefix}/${entry.compiled.pattern}`;
      const params = entry.compiled.pattern
        .split('/')
        .filter((s) => s.startsWith(':') || s.startsWith('*') || s.startsWith('+'))
        .map((s) => ({ name: s.slice(1), glob: s.startsWith('*') || s.startsWith('+') }));
      for (const method of methods) {
        out.push({
          method,
          pattern,
          label: t.label ?? t.prefix,
          params,
          dataFields: entry.dataFields,
          stream: entry.spec.body === 'stream',
          streamsResponse: entry.spec.response === 'stream',
          unauthenticated: entry.spec.unauthenticated === true,
        });
      }
    }
  }
  return out;
}

/** Hostile values for one `:param` segment (raw URL text, sent verbatim). */
export const HOSTILE_SEGMENTS: readonly string[] = [
  '..',
  '%2e%2e',
  'a%2Fb',
  '%2F',
  'x'.repeat(5000),
  encodeURIComponent('ünï©ødé-☃-𝄞'),
  'a%00b',
  'trailing.',
  '.',
  '%zz',
];

/** Hostile values for a trailing `*glob` (may span segments). */
export const HOSTILE_GLOBS: readonly string[] = [...HOSTILE_SEGMENTS, 'a/../b', 'a/./b', 'a/b/.', 'a//b', 'a/..'];

export const HOSTILE_QUERIES: readonly string[] = [
  'index=abc&wait=zzz',
  'per_page=-1&page=-1&next_token=%00',
  'limit=abc&offset=-1&version=abc',
  'list=maybe&help=2&prefix=%00&filter=%22unterminated',
  // `wait` bounds a blocking query should the index be taken as valid.
  'index=1&index=2&wait=10ms&per_page=1e309&reverse=perhaps',
];

/** Values of the wrong type for every declared field at once. */
export const WRONG_TYPE_VALUES: readonly unknown[] = [[{ x: 1 }], 'zz', -1, { a: { b: [] } }, null, true, 1e308, 'a\u0000b'];

export interface CaseOptions {
  /** Valid-looking value for a path parameter (path params substituted in non-path cases). */
  paramValue: (route: SweepRoute, name: string, glob: boolean) => string;
  /** Valid privileged auth headers. */
  auth: Record<string, string>;
  /** Headers of the wrong/absent/malformed-token cases. */
  badAuth: Record<string, Record<string, string>>;
  /** Whether the bad-auth case `authCase` (a key of badAuth) must be refused (401/403). */
  requiresAuth: (route: SweepRoute, authCase: string) => boolean;
  /** Size over the JSON body limit (an expected 413 for JSON-body writes). */
  oversizeBytes: number;
  /** Headers every case of the route carries (e.g. a required request header). */
  extraHeaders?: (route: SweepRoute) => Record<string, string>;
  /** Statuses accepted for a body over the limit (default [413]). */
  oversizeStatuses?: (route: SweepRoute) => number[];
  /** Property-based hostile bodies (hostile-bodies.ts): mixed draws per route beyond one per
   * kind (default 2), or false to leave them out. */
  bodyDraws?: number | false;
  /** The body nesting limit the app was built with (default the kit's). */
  maxBodyDepth?: number;
}

const WRITES = new Set(['PUT', 'POST', 'PATCH']);

function fillPath(route: SweepRoute, options: CaseOptions, override?: { name: string; value: string }): string {
  let out = route.pattern;
  const all = [...(route.pattern.match(/[:*+][A-Za-z_][A-Za-z0-9_]*/g) ?? [])];
  for (const token of all) {
    const name = token.slice(1);
    const glob = token.startsWith('*') || token.startsWith('+');
    const value = override && override.name === name ? override.value : options.paramValue(route, name, glob);
    out = out.replace(token, value);
  }
  return out;
}

/** The hostile cases of one route. */
export function buildCases(route: SweepRoute, options: CaseOptions): SweepCase[] {
  const cases: SweepCase[] = [];
  const write = WRITES.has(route.method);
  const base = fillPath(route, options);
  const json = { 'Content-Type': route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' };
  const extra = options.extraHeaders?.(route) ?? {};
  const good = { ...options.auth, ...extra, ...(write ? json : {}) };
  const okBody = write ? '{}' : undefined;
  const add = (c: Omit<SweepCase, 'route'>) => cases.push({ route, ...c });

  // Path parameters filled with tricky values.
  for (const p of route.params) {
    for (const value of p.glob ? HOSTILE_GLOBS : HOSTILE_SEGMENTS) {
      add({ name: `path ${p.name}=${value.slice(0, 24)}`, method: route.method, path: fillPath(route, options, { name: p.name, value }), headers: good, ...(okBody ? { body: okBody } : {}) });
    }
  }
  // Wrong query parameter types (generic ones and every declared field).
  const queries = [...HOSTILE_QUERIES];
  const declared = route.dataFields.map((f) => f.name);
  if (declared.length > 0) {
    queries.push(declared.map((n) => `${n}=abc`).join('&'));
    queries.push(declared.map((n) => `${n}=-1&${n}=%00`).join('&'));
  }
  for (const q of queries) add({ name: `query ${q.slice(0, 40)}`, method: route.method, path: `${base}?${q}`, headers: good, ...(okBody ? { body: okBody } : {}) });
  // Wrong, absent and malformed tokens.
  for (const [name, headers] of Object.entries(options.badAuth)) {
    add({
      name: `auth ${name}`,
      method: route.method,
      path: base,
      headers: { ...headers, ...extra, ...(write ? json : {}) },
      ...(okBody ? { body: okBody } : {}),
      expect: (res) => (options.requiresAuth(route, name) && res.status !== 401 && res.status !== 403 ? `expected 401/403, got ${res.status}` : undefined),
    });
  }
  if (!write) return cases;
  // Bodies: malformed JSON, wrong JSON types, unknown fields, wrong field types, too large.
  add({
    name: 'body malformed JSON',
    method: route.method,
    path: base,
    headers: good,
    body: '{"a":',
    expect: (res) => (!route.stream && (res.status < 400 || res.status >= 500) ? `expected a 4xx, got ${res.status}` : undefined),
  });
  for (const body of ['[]', '"a string"', '42', 'null', '[{"a":1}]']) add({ name: `body ${body}`, method: route.method, path: base, headers: good, body });
  add({
    name: 'body unknown fields',
    method: route.method,
    path: base,
    headers: good,
    body: '{"zz_unknown":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
  });
  const bodyFields = route.dataFields.filter((f) => f.spec.in === 'body').map((f) => f.name);
  if (bodyFields.length > 0) {
    for (const v of WRONG_TYPE_VALUES) {
      add({
        name: `body fields=${JSON.stringify(v).slice(0, 20)}`,
        method: route.method,
        path: base,
        headers: good,
        body: JSON.stringify(Object.fromEntries(bodyFields.map((n) => [n, v]))),
      });
    }
  }
  // Property-based bodies over the declared fields (JSON routes only: a streamed body is the
  // handler's own bytes). What the body policy refuses must be a 4xx, whatever the route.
  if (!route.stream && options.bodyDraws !== false) {
    const draws = hostileBodies(route, bodyFields, {
      maxDepth: options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH,
      oversizeBytes: options.oversizeBytes,
      numRuns: options.bodyDraws ?? 2,
    });
    for (const draw of draws) {
      add({
        name: `body ${draw.kind} at ${draw.at}`,
        method: route.method,
        path: base,
        headers: good,
        body: draw.text,
        expect: (res) => (MUST_REFUSE.has(draw.kind) && (res.status < 400 || res.status >= 500) ? `a ${draw.kind} body must be refused with a 4xx, got ${res.status}` : undefined),
      });
    }
  }
  const allowed = options.oversizeStatuses?.(route) ?? [413];
  add({
    name: 'body over the limit',
    method: route.method,
    path: base,
    headers: good,
    body: Buffer.from(`{"a":"${'x'.repeat(options.oversizeBytes)}"}`),
    expect: (res) => (!route.stream && !allowed.includes(res.status) ? `expected ${allowed.join('/')}, got ${res.status}` : undefined),
  });
  return cases;
}

/** One raw HTTP request: the path goes on the wire verbatim. */
export function rawRequest(
  baseUrl: string,
  agent: http.Agent,
  c: { method: string; path: string; headers: Record<string, string>; body?: string | Buffer },
  timeoutMs = 10_000,
  /** A 2xx answer is an endless stream: resolve with its first bytes and close it. */
  streamsResponse = false,
): Promise<SweepResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const body = c.body === undefined ? undefined : Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: c.method,
        path: c.path,
        agent,
        headers: { ...c.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const endless = streamsResponse && (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
        res.on('data', (d: Buffer) => {
          chunks.push(d);
          if (!endless) return;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
          req.destroy();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    // The server may answer (413) and close before the whole body is written.
    req.on('error', reject);
    req.end(body);
  });
}

export interface SweepOptions {
  baseUrl: string;
  /** Returns a problem with an error response's body (the service's error shape), or undefined. */
  checkShape: (res: SweepResponse) => string | undefined;
  concurrency?: number;
  /** Cases that disturb shared state (seal, revoke-self): run one at a time, then `heal`. */
  isolate?: (c: SweepCase) => boolean;
  heal?: () => Promise<void>;
  /** Rewrites an isolated case just before it is sent (e.g. a disposable token). */
  prepare?: (c: SweepCase) => Promise<SweepCase>;
}

export interface SweepResult {
  requests: number;
  failures: string[];
  statuses: Record<string, number>;
}

function describeCase(c: SweepCase, problem: string): string {
  const shown = c.path.length > 120 ? `${c.path.slice(0, 117)}...` : c.path;
  return `${c.route.method} ${c.route.pattern} [${c.name}] ${c.method} ${shown}: ${problem}`;
}

/** Sends every case (limited concurrency), returns the problems found. */
export async function runSweep(cases: readonly SweepCase[], options: SweepOptions): Promise<SweepResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency ?? 8 });
  const failures: string[] = [];
  const statuses: Record<string, number> = {};
  let seq = 0;
  const one = async (c: SweepCase) => {
    let res: SweepResponse;
    const requestId = `sweep-${++seq}`;
    try {
      res = await rawRequest(options.baseUrl, agent, { ...c, headers: { ...c.headers, 'X-Request-Id': requestId } }, 10_000, c.route.streamsResponse);
    } catch (err) {
      // A 413 may close the connection before the client finished writing the body.
      if (c.name === 'body over the limit' && /EPIPE|ECONNRESET/.test(String(err))) {
        statuses['reset'] = (statuses['reset'] ?? 0) + 1;
        return;
      }
      failures.push(describeCase(c, `transport error ${String(err)}`));
      return;
    }
    statuses[String(res.status)] = (statuses[String(res.status)] ?? 0) + 1;
    if (res.headers['x-request-id'] !== requestId) failures.push(describeCase(c, `answered with request id ${String(res.headers['x-request-id'])}, sent ${requestId}`));
    if (res.status >= 500 || res.status < 100) failures.push(describeCase(c, `status ${res.status}: ${res.text.slice(0, 200)}`));
    else if (res.status >= 400 && c.method !== 'HEAD') {
      const problem = options.checkShape(res);
      if (problem) failures.push(describeCase(c, `${res.status} not in the error shape: ${problem}: ${JSON.stringify(res.text.slice(0, 200))}`));
    }
    const extra = c.expect?.(res);
    if (extra) failures.push(describeCase(c, `${extra}: ${res.text.slice(0, 200)}`));
  };
  const isolated = cases.filter((c) => options.isolate?.(c) ?? false);
  const shared = cases.filter((c) => !(options.isolate?.(c) ?? false));
  let next = 0;
  const workers = Array.from({ length: options.concurrency ?? 8 }, async () => {
    while (next < shared.length) {
      const c = shared[next++] as SweepCase;
      await one(c);
    }
  });
  await Promise.all(workers);
  for (const c of isolated) {
    await one(options.prepare ? await options.prepare(c) : c);
    if (options.heal) await options.heal();
  }
  agent.destroy();
  return { requests: cases.length, failures, statuses };
}

/** A JSON `{"errors":[string...]}` body (plus `extra` keys checked for equality). */
export function checkJsonErrors(res: SweepResponse, extra: Record<string, unknown> = {}): string | undefined {
  const ct = String(res.headers['content-type'] ?? '');
  if (!ct.startsWith('application/json')) return `content-type ${ct || '(none)'}`;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return 'body is not JSON';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body is not an object';
  const errors = (body as Record<string, unknown>).errors;
  if (!Array.isArray(errors) || !errors.every((e) => typeof e === 'string')) return '`errors` is not an array of strings';
  for (const [k, v] of Object.entries(extra)) if ((body as Record<string, unknown>)[k] !== v) return `\`${k}\` is not ${JSON.stringify(v)}`;
  return undefined;
}
