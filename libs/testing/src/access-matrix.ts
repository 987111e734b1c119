// Access-control matrices (issue 33, item 2): who may call what, as data. Each service's
// `test/access-matrix.itest.ts` states, for every route x method its app declares (the
// PathSpec tables recorded by http-kit's mountPaths / recordMountedTable, the same list the
// hostile-input sweep walks), the status each kind of caller gets. A declared route with
// no row fails the test, so no route can be added without saying who may call it; a row
// naming no declared route fails too, so the table cannot rot silently.
//
// A row is one concrete request (a path, a body) with one expected status per caller
// kind. `runAccessMatrix` sends every cell (row x method x caller) over a real socket, a
// few at a time, and reports each cell whose status differs, and each denial whose body
// is not the API's own error shape.
import http from 'node:http';
import { rawRequest, type SweepResponse, type SweepRoute } from './hostile-sweep';

/** Expected status per caller kind; `other` stands for every caller the row does not name. */
export type AccessExpectations<C extends string> = Partial<Record<C | 'other', number>>;

/** What a cell's request is made of (functions get the cell's caller and method). */
export interface AccessCellInput<C extends string> {
  caller: C;
  method: string;
  /** The status the row expects for this caller (a setup may skip work for denials). */
  expected: number;
}

export type PerCell<C extends string, T> = T | ((cell: AccessCellInput<C>) => T);

/** A request body: JSON values are serialised, strings and Buffers sent as they are. */
export type AccessBody = string | Buffer | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };

/** Changes `setup` makes to one cell (e.g. a disposable token for a self-revoking route). */
export interface AccessCellOverride {
  headers?: Record<string, string>;
  path?: string;
  body?: AccessBody;
}

export interface AccessRow<C extends string> {
  /**
   * The declared route(s) this row exercises: `[table ]METHOD[,METHOD...] pattern`, with
   * the methods and the full pattern as `sweepRoutes` lists them, e.g.
   * `GET,HEAD /v1/sys/mounts` or `kv-v2 PUT,POST /v1/:mount/data/*path` (the table label
   * is needed only where two tables declare the same pattern).
   */
  route: string;
  /** The raw request path (query included); default: the pattern filled from `params`. */
  path?: PerCell<C, string>;
  /** A JSON body (objects are serialised; strings and Buffers are sent as they are). */
  body?: PerCell<C, AccessBody | undefined>;
  headers?: PerCell<C, Record<string, string>>;
  expect: AccessExpectations<C>;
  /** Prepares what this cell needs before it is sent (a disposable object, a fresh token). */
  setup?: (cell: AccessCellInput<C>) => Promise<AccessCellOverride | void>;
  /** Cells that change what every other cell sees (sealing): sent one at a time after the
   * others, each followed by `heal`. */
  serial?: boolean;
  /** Why the row expects what it does (shown in failures). */
  note?: string;
}

export interface AccessMatrix<C extends string> {
  /** Every declared (route, method): `sweepRoutes(app)`. */
  routes: readonly SweepRoute[];
  callers: readonly C[];
  rows: readonly AccessRow<C>[];
  /** Values for the pattern's `:name` / `*name` parameters of rows without a `path`. */
  params?: Readonly<Record<string, string>>;
}

export interface AccessCell<C extends string> {
  row: AccessRow<C>;
  caller: C;
  method: string;
  pattern: string;
  expected: number;
  /** The route answers an endless stream (`response: 'stream'`): a 2xx is taken from its head. */
  streamsResponse?: boolean;
}

interface ParsedRoute {
  label: string | undefined;
  methods: string[];
  pattern: string;
}

export function parseRouteKey(key: string): ParsedRoute {
  const parts = key.trim().split(/\s+/);
  if (parts.length < 2 || parts.length > 3) throw new Error(`access row route ${JSON.stringify(key)}: expected "[table ]METHOD[,METHOD] pattern"`);
  const [first, second, third] = parts as [string, string, string | undefined];
  const label = third === undefined ? undefined : first;
  const methods = (third === undefined ? first : second).split(',').map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
  const pattern = third ?? second;
  if (methods.length === 0) throw new Error(`access row route ${JSON.stringify(key)}: no method`);
  return { label, methods, pattern };
}

/**
 * The routes of a listener that serves no PathSpec table (the controller's ops listener),
 * written as row keys (`METHOD[,METHOD] pattern`), so its matrix is checked the same way.
 */
export function declaredRoutes(label: string, keys: readonly string[]): SweepRoute[] {
  return keys.flatMap((key) => {
    const { methods, pattern } = parseRouteKey(key);
    return methods.map((method) => ({ method, pattern, label, params: [], dataFields: [], stream: false, streamsResponse: false, unauthenticated: false }));
  });
}

const routeName = (r: SweepRoute, ambiguous: boolean): string => `route ${r.pattern} ${r.method}${ambiguous ? ` (table ${r.label})` : ''}`;

function matches(parsed: ParsedRoute, r: SweepRoute): boolean {
  return parsed.pattern === r.pattern && parsed.methods.includes(r.method) && (parsed.label === undefined || parsed.label === r.label);
}

/**
 * What is wrong with the matrix as data, before anything is sent: declared routes without
 * a row ("route X METHOD has no access rule"), rows naming no declared route, rows without
 * an expected status for some caller, expectations for callers that do not exist.
 */
export function matrixProblems<C extends string>(matrix: AccessMatrix<C>): string[] {
  const problems: string[] = [];
  const parsed = matrix.rows.map((row) => ({ row, route: parseRouteKey(row.route) }));
  const patternLabels = new Map<string, Set<string>>();
  for (const r of matrix.routes) {
    const key = `${r.method} ${r.pattern}`;
    patternLabels.set(key, (patternLabels.get(key) ?? new Set()).add(r.label));
  }
  for (const r of matrix.routes) {
    if (!parsed.some((p) => matches(p.route, r))) {
      problems.push(`${routeName(r, (patternLabels.get(`${r.method} ${r.pattern}`)?.size ?? 0) > 1)} has no access rule`);
    }
  }
  if (matrix.callers.includes('other' as C)) problems.push('caller name "other" is reserved (it stands for every caller a row does not name)');
  const known = new Set<string>(['other', ...matrix.callers]);
  for (const { row, route } of parsed) {
    for (const method of route.methods) {
      const declared = matrix.routes.some((r) => r.pattern === route.pattern && r.method === method && (route.label === undefined || route.label === r.label));
      if (!declared) problems.push(`row "${row.route}": ${method} ${route.pattern}${route.label ? ` (table ${route.label})` : ''} is not a declared route`);
    }
    for (const caller of matrix.callers) {
      if (row.expect[caller] === undefined && row.expect.other === undefined) problems.push(`row "${row.route}": no expected status for caller ${caller}`);
    }
    for (const key of Object.keys(row.expect)) if (!known.has(key)) problems.push(`row "${row.route}": unknown caller ${key}`);
  }
  return [...new Set(problems)];
}

/** Rows by group (`groupOf` their route pattern), in first-seen order: a large matrix runs
 * as several tests, each well inside the per-test timeout on a busy machine. */
export function groupRows<C extends string>(rows: readonly AccessRow<C>[], groupOf: (pattern: string) => string): [string, AccessRow<C>[]][] {
  const groups = new Map<string, AccessRow<C>[]>();
  for (const row of rows) {
    const g = groupOf(parseRouteKey(row.route).pattern);
    groups.set(g, [...(groups.get(g) ?? []), row]);
  }
  return [...groups.entries()];
}

/** One cell per row x method x caller. */
export function matrixCells<C extends string>(matrix: AccessMatrix<C>): AccessCell<C>[] {
  const cells: AccessCell<C>[] = [];
  const streaming = new Set(matrix.routes.filter((r) => r.streamsResponse).map((r) => `${r.method} ${r.pattern}`));
  for (const row of matrix.rows) {
    const route = parseRouteKey(row.route);
    for (const method of route.methods) {
      const streams = streaming.has(`${method} ${route.pattern}`);
      for (const caller of matrix.callers) {
        const expected = row.expect[caller] ?? row.expect.other;
        if (expected === undefined) continue;
        cells.push({ row, caller, method, pattern: route.pattern, expected, ...(streams ? { streamsResponse: true } : {}) });
      }
    }
  }
  return cells;
}

/**
 * A row `setup` that builds its object only for cells expected to succeed: where the check
 * comes before the lookup, a denied cell never reaches the object (the row's own `path`
 * serves it), and the matrix stays cheap. (Where a lookup comes first, that `path` must
 * name an object that exists.)
 */
export function forAllowed<C extends string>(
  make: (cell: AccessCellInput<C>) => Promise<AccessCellOverride | void>,
): (cell: AccessCellInput<C>) => Promise<AccessCellOverride | void> {
  return async (cell) => (cell.expected < 300 ? make(cell) : undefined);
}

/** `pattern` with its `:name` / `*name` parameters replaced by `values` (sent as they are). */
export function fillPattern(pattern: string, values: Readonly<Record<string, string>>): string {
  return pattern.replace(/[:*+]([A-Za-z_][A-Za-z0-9_]*)/g, (token, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for parameter ${token} of ${pattern}`);
    return value;
  });
}

function resolve<C extends string, T>(value: PerCell<C, T> | undefined, cell: AccessCellInput<C>): T | undefined {
  return typeof value === 'function' ? (value as (c: AccessCellInput<C>) => T)(cell) : value;
}

export interface AccessRunOptions<C extends string> {
  /** Where to send; per caller when callers stand for differently configured apps
   * (the scheduler with ACLs on and off). */
  baseUrl: string | ((caller: C) => string);
  /** The headers a caller of this kind sends (read when its cell is sent). */
  auth: (caller: C) => Record<string, string>;
  /** A problem with a denial's body (not the API's error shape), or undefined. */
  denialShape: (res: SweepResponse) => string | undefined;
  /** Further per-cell checks (e.g. the exact message of a refused token). */
  check?: (cell: AccessCell<C>, res: SweepResponse) => string | undefined;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Runs after each serial cell (unseal, ...). */
  heal?: () => Promise<void>;
}

export interface AccessRunResult {
  cells: number;
  failures: string[];
  /** How many cells answered each status. */
  statuses: Record<string, number>;
}

const clip = (text: string, n = 160): string => (text.length > n ? `${text.slice(0, n - 3)}...` : text);

/** Sends every cell of `matrix`; returns each cell that did not answer as the row says. */
export async function runAccessMatrix<C extends string>(matrix: AccessMatrix<C>, options: AccessRunOptions<C>): Promise<AccessRunResult> {
  const cells = matrixCells(matrix);
  const concurrency = options.concurrency ?? 4;
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const failures: string[] = [];
  const statuses: Record<string, number> = {};

  const one = async (cell: AccessCell<C>): Promise<void> => {
    const input = { caller: cell.caller, method: cell.method, expected: cell.expected };
    const where = `${cell.method} ${cell.pattern} as ${cell.caller}`;
    try {
      const override = (await cell.row.setup?.(input)) ?? {};
      const path = override.path ?? resolve(cell.row.path, input) ?? fillPattern(cell.pattern, matrix.params ?? {});
      const rawBody = override.body !== undefined ? override.body : resolve(cell.row.body, input);
      const body = rawBody === undefined ? undefined : typeof rawBody === 'string' || Buffer.isBuffer(rawBody) ? rawBody : JSON.stringify(rawBody);
      const headers = {
        ...(body !== undefined && typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody) ? { 'Content-Type': 'application/json' } : {}),
        ...options.auth(cell.caller),
        ...resolve(cell.row.headers, input),
        ...override.headers,
      };
      const baseUrl = typeof options.baseUrl === 'string' ? options.baseUrl : options.baseUrl(cell.caller);
      const res = await rawRequest(baseUrl, agent, { method: cell.method, path, headers, ...(body !== undefined ? { body } : {}) }, 10_000, cell.streamsResponse === true);
      statuses[String(res.status)] = (statuses[String(res.status)] ?? 0) + 1;
      const problems: string[] = [];
      if (res.status !== cell.expected) problems.push(`expected ${cell.expected}, got ${res.status}`);
      if (res.status >= 400 && cell.method !== 'HEAD') {
        const shape = options.denialShape(res);
        if (shape) problems.push(`${res.status} not in the error shape: ${shape}`);
      }
      const extra = options.check?.(cell, res);
      if (extra) problems.push(extra);
      if (problems.length > 0) {
        const note = cell.row.note ? ` [${cell.row.note}]` : '';
        failures.push(`${where} (${path.length > 100 ? `${path.slice(0, 97)}...` : path}): ${problems.join('; ')}${note}: ${JSON.stringify(clip(res.text))}`);
      }
    } catch (err) {
      failures.push(`${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const shared = cells.filter((c) => c.row.serial !== true);
  const serial = cells.filter((c) => c.row.serial === true);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < shared.length) await one(shared[next++] as AccessCell<C>);
    }),
  );
  for (const cell of serial) {
    await one(cell);
    await options.heal?.();
  }
  agent.destroy();
  failures.sort();
  return { cells: cells.length, failures, statuses };
}
