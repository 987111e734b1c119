// One parser for the query conventions (reference §0.1 `parse()`), with Nomad's exact
// 400 messages. Spec wins over the anchor on the wait cap: default 5 min, max 10 min.
import { BadRequestError } from '@selfstack/errors';
import { DEFAULT_WAIT_MS, MAX_WAIT_MS, type QueryOptions } from './query.types';

export type RawQuery = Readonly<Record<string, unknown>>;
export type RawHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** First value of a query parameter as a string; undefined when absent. */
export function queryString(query: RawQuery, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return v.length > 0 ? String(v[0]) : undefined;
  if (typeof v === 'object' && v !== null) return undefined;
  return String(v);
}

/** Present in the query string at all (`?stale` with no value counts). */
export function hasParam(query: RawQuery, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(query, name);
}

function header(headers: RawHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

const GO_DURATION = /^[+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration (a bare number other than 0 needs a unit); NaN when invalid. */
export function parseGoDuration(input: string): number {
  if (input === '0' || input === '+0') return 0;
  if (!GO_DURATION.test(input)) return NaN;
  let total = 0;
  for (const m of input.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return total;
}

export interface ParseQueryDefaults {
  region: string;
}

export function parseQueryOptions(query: RawQuery, headers: RawHeaders, defaults: ParseQueryDefaults): QueryOptions {
  // wait / index (reference §0.2; spec "Blocking queries")
  let waitMs = DEFAULT_WAIT_MS;
  const wait = queryString(query, 'wait');
  if (wait !== undefined) {
    const ms = parseGoDuration(wait);
    if (!Number.isFinite(ms)) throw new BadRequestError('Invalid wait time');
    waitMs = Math.min(ms, MAX_WAIT_MS);
  }
  let minIndex = 0;
  const index = queryString(query, 'index');
  if (index !== undefined) {
    if (!/^\d+$/.test(index) || !Number.isSafeInteger(Number(index))) throw new BadRequestError('Invalid index');
    minIndex = Number(index);
  }

  // stale: present-and-empty or `true` allow stale reads, `false` does not, else 400.
  let stale = false;
  if (hasParam(query, 'stale')) {
    const v = queryString(query, 'stale') ?? '';
    if (v === '' || v === 'true') stale = true;
    else if (v === 'false') stale = false;
    else throw new BadRequestError('Expect `true` or `false` for `stale` query string parameter');
  }

  // pretty: any value except 0, including empty.
  const pretty = hasParam(query, 'pretty') && queryString(query, 'pretty') !== '0';

  let perPage = 0;
  const pp = queryString(query, 'per_page');
  if (pp !== undefined) {
    if (!/^[+-]?\d+$/.test(pp) || Math.abs(Number(pp)) > 2147483647 || Number(pp) < 0) {
      throw new BadRequestError('Expect a number for `per_page` query string parameter');
    }
    perPage = Number(pp);
  }

  const nsRaw =
    queryString(query, 'namespace') ?? header(headers, 'x-scheduler-namespace') ?? header(headers, 'x-nomad-namespace') ?? '';
  const namespace = nsRaw === '' ? 'default' : nsRaw;

  const regionRaw = queryString(query, 'region') ?? '';
  return {
    region: regionRaw === '' ? defaults.region : regionRaw,
    namespace,
    allNamespaces: namespace === '*',
    minIndex,
    waitMs,
    stale,
    pretty,
    prefix: queryString(query, 'prefix') ?? '',
    filter: queryString(query, 'filter') ?? '',
    perPage,
    nextToken: queryString(query, 'next_token') ?? '',
    reverse: queryString(query, 'reverse') === 'true',
  };
}

/**
 * The ACL token of a request (reference §0 `parseToken`): X-Scheduler-Token, then the
 * anchor's X-Nomad-Token (trimmed), then `Authorization: Bearer <secret>`.
 */
export function requestToken(headers: RawHeaders): string {
  const direct = header(headers, 'x-scheduler-token') ?? header(headers, 'x-nomad-token');
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  const auth = header(headers, 'authorization');
  if (auth !== undefined) {
    const parts = auth.trim().split(/\s+/);
    if (parts.length >= 2 && (parts[0] ?? '').toLowerCase() === 'bearer') return parts[1] ?? '';
  }
  return '';
}

/** Boolean query flags such as `purge`, `all`, `diffs` (strconv.ParseBool; absent = false). */
export function parseBoolParam(query: RawQuery, name: string): boolean | 'invalid' {
  const v = queryString(query, name);
  if (v === undefined || v === '') return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return 'invalid';
}
