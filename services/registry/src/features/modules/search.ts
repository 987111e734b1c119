// Turning the `q` parameter into a Postgres full-text query (spec part B: "keyword or
// phrase search is supported"). Queries made only of words (letters, digits, spaces,
// `-`, `_`) match every word as a prefix, so `vp` finds `vpc` and `netw` finds
// `network`, as users expect from a search box; anything with quotes or operators goes
// to websearch_to_tsquery: "a phrase", `a or b`, `-word`.
import type { SearchQuery } from './modules.store';

const PLAIN = /^[\p{L}\p{N}\s_-]+$/u;

export function toSearchQuery(q: string): SearchQuery {
  const text = q.trim();
  if (PLAIN.test(text) && !/(^|\s)-/.test(text) && !/\bor\b/i.test(text)) {
    const words = text.split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
    if (words.length > 0 && words.length <= 16) return { kind: 'prefix', tsquery: words.map((w) => `${w}:*`).join(' & ') };
  }
  return { kind: 'web', text };
}
