// Field declarations shared by the PathSpec tables (documentation, ?help=1 and OpenAPI);
// the values themselves are parsed once by features/query/query.parser.ts.
import { z } from 'zod';
import { definePath, type AnyPathSpec, type FieldMap, type FieldSpec, type PathSpec } from '@selfstack/http-kit';
import type { RequestExtra } from './request-context';

const q = (description: string): FieldSpec => ({ schema: z.string().optional(), in: 'query', description });

export const READ_QUERY = {
  index: q('blocking query: wait for an index greater than this'),
  wait: q('blocking query: maximum wait (Go duration; default 5m, max 10m)'),
  stale: q('allow a stale read'),
  pretty: q('indented JSON output'),
  namespace: q('target namespace; `*` for all'),
  region: q('target region (forwarded to a configured peer)'),
} satisfies Record<string, FieldSpec>;

export const LIST_QUERY = {
  ...READ_QUERY,
  prefix: q('ID prefix'),
  filter: q('go-bexpr filter expression, evaluated on the full object'),
  per_page: q('page size'),
  next_token: q('token from X-Scheduler-Nexttoken'),
  reverse: q('`true` reverses the order'),
} satisfies Record<string, FieldSpec>;

export const WRITE_QUERY = {
  namespace: q('target namespace'),
  region: q('target region'),
  pretty: q('indented JSON output'),
} satisfies Record<string, FieldSpec>;

export function pathField(description: string): FieldSpec {
  return { schema: z.string().min(1), in: 'path', description, required: true };
}

export function flag(description: string): FieldSpec {
  return q(description);
}

/** A path parameter by name (validated non-empty by the kit before handlers run). */
export function param(ctx: { rawParams: Record<string, string> }, name: string): string {
  return ctx.rawParams[name] ?? '';
}

/** definePath for the scheduler's tables (handlers read params through `param`). */
export function route(spec: PathSpec<FieldMap, RequestExtra>): AnyPathSpec<RequestExtra> {
  return definePath<FieldMap, RequestExtra>(spec);
}
