// The query conventions the scheduler's reads share (spec "Query parameters common to
// endpoints"; reference §0.1-0.3), declared once as typed fields that every route spreads
// into its own, and the helpers that turn their validated values into what services take.
// The spec wins over the anchor on the wait cap: default 5 min, max 10 min.
import { parseDuration } from '@selfstack/config';
import type { ReadOptions } from '../shared/common.types';
import { indexQuery, optionalQueryString, perPageQuery, presenceFlag, queryString, staleQuery, waitQuery } from './fields';

export const DEFAULT_WAIT_MS = 5 * 60_000;
export const MAX_WAIT_MS = 10 * 60_000;

/** Go's time.ParseDuration, which does not trim: ` 10s` is not a duration. */
export function isGoDuration(value: string): boolean {
  if (value !== value.trim()) return false;
  try {
    parseDuration(value, { bareSeconds: false });
    return true;
  } catch {
    return false;
  }
}

// Declared in the order Nomad checks them (wait, index, stale, then per_page): a request
// with several bad values is answered for the first, as Nomad's parse() does.
export const READ_QUERY = {
  wait: waitQuery('blocking query: maximum wait, a Go duration (`10s`, `1m30s`); default 5m, at most 10m', isGoDuration),
  index: indexQuery('blocking query: answer once the index is greater than this (0: at once)'),
  stale: staleQuery('allow a stale read: present and empty, or `true`'),
  pretty: presenceFlag('indented JSON output: any value but `0`', (v) => v !== '0'),
  namespace: optionalQueryString(
    'target namespace; `*` for all (lists). Default: the X-Scheduler-Namespace or X-Nomad-Namespace header, else `default`',
  ),
  region: optionalQueryString('target region; another region is forwarded to its configured peer'),
};

export const LIST_QUERY = {
  ...READ_QUERY,
  prefix: queryString('ID prefix'),
  filter: queryString('go-bexpr filter expression, evaluated on the full object'),
  per_page: perPageQuery('page size (0: everything)'),
  next_token: queryString('token from X-Scheduler-Nexttoken: the first item of the page'),
  reverse: presenceFlag('exactly `true` reverses the order', (v) => v === 'true'),
};

export const WRITE_QUERY = {
  namespace: READ_QUERY.namespace,
  region: READ_QUERY.region,
  pretty: READ_QUERY.pretty,
};

/** The namespace a request targets. */
export interface NamespaceScope {
  namespace: string;
  /** `namespace=*`: every namespace the token may read. */
  allNamespaces: boolean;
}

/** What every paginated list needs (reference §0.3). */
export interface ListQuery extends NamespaceScope {
  prefix: string;
  filter: string;
  /** 0 = not paginated. */
  perPage: number;
  nextToken: string;
  reverse: boolean;
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `namespace=`, else the spec's X-Scheduler-Namespace, else the anchor's X-Nomad-Namespace. */
export function namespaceScope(ctx: { query: { namespace?: string | undefined }; req: { headers: Headers } }): NamespaceScope {
  const raw = ctx.query.namespace ?? header(ctx.req.headers, 'x-scheduler-namespace') ?? header(ctx.req.headers, 'x-nomad-namespace') ?? '';
  const namespace = raw === '' ? 'default' : raw;
  return { namespace, allNamespaces: namespace === '*' };
}

interface ListValues {
  namespace?: string | undefined;
  prefix: string;
  filter: string;
  per_page: number;
  next_token: string;
  reverse: boolean;
}

export function listQuery(ctx: { query: ListValues; req: { headers: Headers } }): ListQuery {
  const q = ctx.query;
  return { ...namespaceScope(ctx), prefix: q.prefix, filter: q.filter, perPage: q.per_page, nextToken: q.next_token, reverse: q.reverse };
}

/** The blocking-query handle of a read (spec "Blocking queries"); the state store adds jitter. */
export function readOptions(ctx: { query: { wait?: string | undefined; index: number }; signal: AbortSignal }): ReadOptions {
  const wait = ctx.query.wait;
  const waitMs = wait === undefined ? DEFAULT_WAIT_MS : Math.min(parseDuration(wait, { bareSeconds: false }), MAX_WAIT_MS);
  // The signal only matters to a read that may wait (index > 0); it is created on first
  // use (an AbortController and a close hook per request), so other reads never touch it.
  return ctx.query.index > 0 ? { minIndex: ctx.query.index, waitMs, signal: ctx.signal } : { minIndex: ctx.query.index, waitMs };
}
