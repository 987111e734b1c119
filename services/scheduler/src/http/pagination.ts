// Nomad's paginator (reference §0.3, nomad/state/paginator): walk items in key order (or
// reverse), skip those before `next_token`, apply the filter on the full object, emit up
// to per_page, and hand back the token of the first item of the next page. Comparing keys
// (not offsets) keeps pages correct while rows are inserted concurrently, and the token is
// always the *next* item's (hashicorp/nomad#25435).
import { BadRequestError } from '@selfstack/errors';
import { BexprError, Evaluator } from '@selfstack/bexpr';
import { NOMAD_SCHEMA } from './nomad-schema';
import type { ListQuery } from './query';

export type TokenKind = 'namespace-id' | 'create-index' | 'id';

export type PageKey = readonly (string | number)[];

export function pageToken(key: PageKey): string {
  return key.map(String).join('.');
}

/** Parses a next_token of the given kind into a comparable key. */
export function parseToken(kind: TokenKind, token: string): PageKey {
  if (kind === 'id') return [token];
  const dot = token.indexOf('.');
  const head = dot < 0 ? token : token.slice(0, dot);
  const tail = dot < 0 ? '' : token.slice(dot + 1);
  if (kind === 'create-index') {
    const n = /^\d+$/.test(head) ? Number(head) : 0;
    return [n, tail];
  }
  return [head, tail];
}

export function compareKeys(a: PageKey, b: PageKey): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (typeof x === 'number' && typeof y === 'number') return x < y ? -1 : 1;
    const sx = String(x);
    const sy = String(y);
    return sx < sy ? -1 : sx > sy ? 1 : 0;
  }
  return 0;
}

/** Compiles `filter=`; a parse error answers Nomad's 400 (reference §0.3). */
export function compileFilter(filter: string): Evaluator | null {
  if (filter === '') return null;
  try {
    return Evaluator.create(filter);
  } catch (e) {
    if (e instanceof BexprError) {
      throw new BadRequestError(`failed to create result paginator: failed to read filter expression: ${e.message}`);
    }
    throw e;
  }
}

/** Runs a compiled filter on a full object; evaluation errors answer 400. */
export function matchesFilter(evaluator: Evaluator | null, datum: unknown): boolean {
  if (evaluator === null) return true;
  try {
    return evaluator.evaluate(datum, NOMAD_SCHEMA);
  } catch (e) {
    if (e instanceof BexprError) throw new BadRequestError(`failed to read result page: ${e.message}`);
    throw e;
  }
}

export interface PaginateOptions<T> {
  /** Items in ascending key order. */
  items: Iterable<T>;
  keyOf: (item: T) => PageKey;
  tokenKind: TokenKind;
  perPage: number;
  nextToken: string;
  reverse: boolean;
  filter: Evaluator | null;
  /** The full object the filter is evaluated on. */
  datumOf: (item: T) => unknown;
  /** Namespace / ACL selector, applied after the filter as Nomad does. */
  accept?: (item: T) => boolean;
}

export interface Page<T> {
  items: T[];
  nextToken: string;
}

export function paginate<T>(opts: PaginateOptions<T>): Page<T> {
  const list = opts.reverse ? [...opts.items].reverse() : opts.items;
  const start = opts.nextToken === '' ? null : parseToken(opts.tokenKind, opts.nextToken);
  const out: T[] = [];
  for (const item of list) {
    const key = opts.keyOf(item);
    if (start !== null) {
      const c = compareKeys(key, start);
      if ((!opts.reverse && c < 0) || (opts.reverse && c > 0)) continue;
    }
    if (!matchesFilter(opts.filter, opts.datumOf(item))) continue;
    if (opts.accept && !opts.accept(item)) continue;
    if (opts.perPage > 0 && out.length === opts.perPage) {
      return { items: out, nextToken: pageToken(key) };
    }
    out.push(item);
  }
  return { items: out, nextToken: '' };
}

/**
 * Allocations, evaluations, deployments and ACL tokens (reference 0.3): CreateIndex order
 * with token `<CreateIndex>.<ID>`, or ID order with token `<ID>` when `prefix` is set; the
 * filter runs on the full object (`datumOf`, default the item), then `accept` (the
 * namespace ACL selector). `idOf` names the ID (an ACL token's is its AccessorID).
 */
export function paginateByCreateIndex<T extends { CreateIndex: number }>(
  items: Iterable<T>,
  q: Pick<ListQuery, 'prefix' | 'perPage' | 'nextToken' | 'reverse'>,
  filter: Evaluator | null,
  options: { idOf: (item: T) => string; accept?: (item: T) => boolean; datumOf?: (item: T) => unknown },
): Page<T> {
  const byId = q.prefix !== '';
  const { idOf } = options;
  return paginate({
    items,
    keyOf: (item) => (byId ? [idOf(item)] : [item.CreateIndex, idOf(item)]),
    tokenKind: byId ? 'id' : 'create-index',
    perPage: q.perPage,
    nextToken: q.nextToken,
    reverse: q.reverse,
    filter,
    datumOf: options.datumOf ?? ((item) => item),
    ...(options.accept ? { accept: options.accept } : {}),
  });
}
