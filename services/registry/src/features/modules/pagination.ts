// Pagination of the registry's list endpoints (spec part B "Limits" and "Pagination
// response meta"; reference B.4, Terraform's response/pagination.go):
//   - `offset`: non-negative integer, default 0; `limit`: positive integer with a
//     per-endpoint default and maximum; a larger limit is served with the maximum;
//   - meta: `limit` (applied), `current_offset`, `next_offset` only when more results
//     exist, `prev_offset` only when offset > 0 (clamped at 0), `next_url` (relative,
//     the same path and query with the next offset) only when more results exist.

export interface PageRule {
  defaultLimit: number;
  maxLimit: number;
}

/** Per-endpoint defaults and maxima (docs/registry.md). */
export const PAGE_RULES = {
  list: { defaultLimit: 15, maxLimit: 100 },
  search: { defaultLimit: 15, maxLimit: 100 },
  latestForAllProviders: { defaultLimit: 15, maxLimit: 50 },
} as const satisfies Record<string, PageRule>;

export interface Page {
  limit: number;
  offset: number;
}

export interface PaginationMeta {
  limit: number;
  current_offset: number;
  next_offset?: number;
  prev_offset?: number;
  next_url?: string;
}

/** Applies the rule to the validated query values (`limit` >= 1, `offset` >= 0). */
export function resolvePage(rule: PageRule, limit: number | undefined, offset: number | undefined): Page {
  return { limit: Math.min(limit ?? rule.defaultLimit, rule.maxLimit), offset: offset ?? 0 };
}

/**
 * Builds `meta`. `hasMore` comes from fetching limit+1 rows. `path` is the request path
 * as the client sent it and `query` its query parameters (order kept); `offset` and
 * `limit` are replaced by the next page's values.
 */
export function paginationMeta(page: Page, hasMore: boolean, path: string, query: [string, string][]): PaginationMeta {
  const meta: PaginationMeta = { limit: page.limit, current_offset: page.offset };
  if (hasMore) meta.next_offset = page.offset + page.limit;
  if (page.offset > 0) meta.prev_offset = Math.max(0, page.offset - page.limit);
  if (hasMore) {
    const params = new URLSearchParams();
    for (const [k, v] of query) if (k !== 'offset' && k !== 'limit') params.append(k, v);
    params.set('limit', String(page.limit));
    params.set('offset', String(page.offset + page.limit));
    meta.next_url = `${path}?${params.toString()}`;
  }
  return meta;
}
