// The box reads on the hot paths (a box by owner and name: the catalog, the box, version
// and provider routes; a box search; an owner's boxes) as prepared statements on a
// node-postgres pool (issue 30). Through Prisma's $queryRaw each read cost several times the
// CPU of the same statement prepared here, and was planned again on every request.
//
// Box documents already read are kept (a bounded map) with their version
// (boxes.read-sql.ts BOX_DOCUMENT_VERSION: the xmin of every row the document is built
// from). A read sends the version it holds and PostgreSQL builds and sends the document
// only when the box's version differs, so an unchanged box costs neither the JSON building
// nor the transfer nor the parse, and the answer is the same record object as before (the
// presenter keeps its serialised forms: no JSON.stringify either). Every read still asks
// PostgreSQL: nothing is answered that the database does not confirm is current.
//
// A search answer is held too, with the snapshot it was confirmed at. Every transaction
// that writes boxes, versions, providers or accounts leaves its id in boxes.data_changes
// (statement triggers, migration 20261127140000_boxes_data_changes); the next same search
// first asks whether any change committed since is invisible to that snapshot (an index
// probe of the few newest rows) and answers the held result when none is. Any write, a
// download count included, makes every held search run again once.
import { createPgPool, namedQuery } from '@selfstack/db';
import type { Pool, QueryResultRow } from 'pg';
import { BOX_DOCUMENT, BOX_DOCUMENT_VERSION, boxFromDocument } from './boxes.read-sql';
import type { BoxRecord, SearchParams } from './boxes.types';

/** Box documents held: enough for the hot set of a large registry; the least recently read go first. */
export const BOX_READ_CACHE_ROWS = 4096;
/** Search answers held (the last one per search), and the boxes they may hold in all. */
export const SEARCH_CACHE_KEYS = 1024;
export const SEARCH_CACHE_BOXES = 8192;

type Doc = Record<string, unknown>;
interface Held {
  version: string;
  value: BoxRecord;
}

/** Last read documents by box id, with their version; the least recently read go first when full. */
class HeldBoxes {
  private readonly rows = new Map<string, Held>();

  constructor(private readonly max: number) {}

  held(id: string): Held | undefined {
    return this.rows.get(id);
  }

  /**
   * The record PostgreSQL answered: parsed from `doc` when it sent one, else the `held`
   * entry it was asked about (taken before the query: concurrent reads may replace the
   * map's entry meanwhile).
   */
  settle(id: string, held: Held | undefined, version: string, doc: Doc | null): BoxRecord {
    // An equal version is the same document: the record already held is answered (and
    // keeps its serialised forms) even when a document was sent.
    let value: BoxRecord;
    if (held && held.version === version) value = held.value;
    else if (doc !== null) value = boxFromDocument(doc);
    else throw new Error(`boxes read: no document for box ${id} at version ${version}`);
    this.rows.delete(id);
    this.rows.set(id, { version, value });
    if (this.rows.size > this.max) this.rows.delete(this.rows.keys().next().value as string);
    return value;
  }

}

/**
 * A bounded map whose oldest-set key goes first: at most `max` keys and a total `weight`
 * (a search answer weighs its number of boxes) of at most `maxWeight`.
 */
class Recent<V> {
  private readonly map = new Map<string, { value: V; weight: number }>();
  private weight = 0;
  constructor(
    private readonly max: number,
    private readonly maxWeight = Infinity,
  ) {}
  get(key: string): V | undefined {
    return this.map.get(key)?.value;
  }
  set(key: string, value: V, weight = 0): void {
    this.delete(key);
    this.map.set(key, { value, weight });
    this.weight += weight;
    while (this.map.size > this.max || (this.weight > this.maxWeight && this.map.size > 1)) {
      this.delete(this.map.keys().next().value as string);
    }
  }
  delete(key: string): void {
    const e = this.map.get(key);
    if (!e) return;
    this.weight -= e.weight;
    this.map.delete(key);
  }
}

// One box by owner name and box name. $3: the version held ('' for none); the document
// only when the box's version differs. The version is computed once (OFFSET 0 keeps the
// lateral subquery from being inlined into both uses).
const FIND_SQL = `SELECT b.id AS "id", s.v AS "v", CASE WHEN s.v = $3 THEN NULL ELSE ${BOX_DOCUMENT} END AS "d"
  FROM "boxes"."boxes" b JOIN "boxes"."accounts" a ON a.id = b.owner_id
  CROSS JOIN LATERAL (SELECT ${BOX_DOCUMENT_VERSION} AS v OFFSET 0) s
 WHERE a.username = $1 AND b.name = $2`;

// An owner's boxes by name ($2: include private ones), documents always sent (an owner may
// have thousands of boxes: no list of held versions to compare each row with).
const OWNER_SQL = `SELECT b.id AS "id", ${BOX_DOCUMENT_VERSION} AS "v", ${BOX_DOCUMENT} AS "d"
  FROM "boxes"."boxes" b JOIN "boxes"."accounts" a ON a.id = b.owner_id
 WHERE b.owner_id = $1 AND ($2::boolean OR NOT b.is_private)
 ORDER BY b.name`;

const SORT_COLUMNS = { downloads: 'b.downloads', created: 'b.created_at', updated: 'b.updated_at' } as const;
type Visibility = { all: true } | { ownerIds: readonly string[] };

/**
 * The search statement of one shape (sort, order, which filters), so each shape is one
 * prepared statement. $1: versions held, $2: limit, $3: offset, then the filters' values.
 */
function searchStatement(params: SearchParams, visibility: Visibility): { name: string; text: string; values: (held: string[]) => unknown[] } {
  const values: unknown[] = [params.limit, (params.page - 1) * params.limit];
  const conditions: string[] = [];
  // Every hit needs a current_version (the CLI dereferences it, reference A.3); with a
  // provider filter, that provider must be usable in a released version.
  if (params.provider) {
    values.push(params.provider);
    conditions.push(`EXISTS (SELECT 1 FROM "boxes"."versions" v JOIN "boxes"."providers" p ON p.version_id = v.id
      WHERE v.box_id = b.id AND v.status = 'active' AND p.name = $${values.length + 1}
        AND (p.url IS NOT NULL OR p.blob_key IS NOT NULL))`);
  } else {
    conditions.push(`EXISTS (SELECT 1 FROM "boxes"."versions" v WHERE v.box_id = b.id AND v.status = 'active')`);
  }
  let vis = 'all';
  if (!('all' in visibility)) {
    if (visibility.ownerIds.length > 0) {
      values.push([...visibility.ownerIds]);
      conditions.push(`(NOT b.is_private OR b.owner_id = ANY($${values.length + 1}::text[]))`);
      vis = 'owners';
    } else {
      conditions.push('NOT b.is_private');
      vis = 'public';
    }
  }
  // search_text is lower-cased and trigram-indexed (boxes_search_text_idx, GIN
  // gin_trgm_ops), which serves LIKE '%q%'; %, _ and \ in q are literal.
  if (params.q) {
    values.push(`%${params.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    conditions.push(`b.search_text LIKE $${values.length + 1}`);
  }
  const name = `boxes_search_${params.sort}_${params.order}_${params.provider ? 'p' : ''}${params.q ? 'q' : ''}_${vis}`;
  let text = searchTexts.get(name);
  if (text === undefined) {
    text = searchText(conditions, `${SORT_COLUMNS[params.sort]} ${params.order === 'asc' ? 'ASC' : 'DESC'}, b.id ASC`);
    searchTexts.set(name, text);
  }
  return { name, text, values: (held) => [held, ...values] };
}

/** Statement texts by statement name (a name always goes with the same text). */
const searchTexts = new Map<string, string>();

function searchText(conditions: string[], order: string): string {
  return `SELECT b.id AS "id", s.v AS "v", CASE WHEN s.v = ANY($1::text[]) THEN NULL ELSE ${BOX_DOCUMENT} END AS "d" FROM (
      SELECT b.*, b.xmin AS "xmin" FROM "boxes"."boxes" b WHERE ${conditions.join(' AND ')}
       ORDER BY ${order} LIMIT $2 OFFSET $3
    ) b JOIN "boxes"."accounts" a ON a.id = b.owner_id
    CROSS JOIN LATERAL (SELECT ${BOX_DOCUMENT_VERSION} AS v OFFSET 0) s
    ORDER BY ${order}`;
}

// The current snapshot, and whether every change committed so far is visible in $1 (a
// snapshot taken earlier; NULL: none held). Change-log rows below the horizon were pruned,
// so an older snapshot is never confirmed.
const CONFIRM_SQL = `SELECT pg_current_snapshot()::text AS "s", COALESCE(
    pg_snapshot_xmin($1::pg_snapshot)::text::bigint >= (SELECT h.horizon FROM "boxes"."data_changes_horizon" h WHERE h.id = 1)
    AND NOT EXISTS (SELECT 1 FROM "boxes"."data_changes" c
      WHERE c.xid >= pg_snapshot_xmin($1::pg_snapshot)::text::bigint
        AND NOT pg_visible_in_snapshot(c.xid::text::xid8, $1::pg_snapshot)), false) AS "same"`;

/** Connection-level failures (the server ended the connection): a read may be sent again. */
function isConnectionLoss(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (code === '57P01' || code === '57P02' || code === '57P03') return true;
  const message = err instanceof Error ? err.message : '';
  return code === undefined && /Connection terminated|ECONNRESET|EPIPE|Client has encountered a connection error/i.test(message);
}

export interface BoxReads {
  findBox(username: string, name: string): Promise<BoxRecord | null>;
  listByOwner(ownerId: string, includePrivate: boolean): Promise<BoxRecord[]>;
  search(params: SearchParams, visibility: Visibility): Promise<BoxRecord[]>;
}

// A type alias (not an interface) so it satisfies pg's QueryResultRow.
type Row = {
  id: string;
  v: string;
  d: Doc | null;
};

export function createBoxReads(pool: Pool, options: { cacheRows?: number } = {}): BoxReads {
  const boxes = new HeldBoxes(options.cacheRows ?? BOX_READ_CACHE_ROWS);
  // Hints only (which box a name or a search answered last): the statement confirms.
  const idByName = new Recent<string>(options.cacheRows ?? BOX_READ_CACHE_ROWS);
  // Last answer per search (statement and values): its records and the snapshot confirmed.
  const answers = new Recent<{ snapshot: string; records: BoxRecord[] }>(SEARCH_CACHE_KEYS, SEARCH_CACHE_BOXES);

  // Reads are idempotent: one sent on a pooled connection the server had just ended (a
  // restart, pg_terminate_backend; the pool learns it asynchronously) is sent once more.
  async function read<R extends QueryResultRow = Row>(name: string, text: string, values: unknown[]): Promise<R[]> {
    try {
      return (await namedQuery<R>(pool, name, text, values)).rows;
    } catch (err) {
      if (!isConnectionLoss(err)) throw err;
      return (await namedQuery<R>(pool, name, text, values)).rows;
    }
  }

  /** Rows answered against `held` (the entries whose versions were sent), in order. */
  function settleAll(rows: Row[], held: Map<string, Held>): BoxRecord[] {
    return rows.map((r) => boxes.settle(r.id, held.get(r.v), r.v, r.d));
  }

  function heldOf(records: readonly BoxRecord[] | undefined): Map<string, Held> {
    const held = new Map<string, Held>();
    for (const r of records ?? []) {
      const h = boxes.held(r.id);
      if (h) held.set(h.version, h);
    }
    return held;
  }

  return {
    async findBox(username, name) {
      const key = `${username}\0${name}`;
      const heldId = idByName.get(key);
      const held = heldId === undefined ? undefined : boxes.held(heldId);
      const rows = await read('boxes_find', FIND_SQL, [username, name, held?.version ?? '']);
      const row = rows[0];
      if (!row) {
        idByName.delete(key);
        return null;
      }
      idByName.set(key, row.id);
      return boxes.settle(row.id, held, row.v, row.d);
    },

    async listByOwner(ownerId, includePrivate) {
      const rows = await read('boxes_by_owner', OWNER_SQL, [ownerId, includePrivate]);
      return rows.map((r) => boxes.settle(r.id, boxes.held(r.id), r.v, r.d));
    },

    async search(params, visibility) {
      const statement = searchStatement(params, visibility);
      const values = statement.values([]);
      const key = `${statement.name}\0${JSON.stringify(values.slice(1))}`;
      const last = answers.get(key);
      const check = (await read<{ s: string; same: boolean | null }>('boxes_confirm', CONFIRM_SQL, [last?.snapshot ?? null]))[0];
      if (!check) throw new Error('boxes read: no snapshot');
      if (last && check.same) return last.records;
      // Changed, or not held: the search runs (after the snapshot just taken, so it sees at
      // least what that snapshot does; held with it, the answer is confirmed conservatively).
      const held = heldOf(last?.records);
      values[0] = [...held.keys()];
      const rows = await read(statement.name, statement.text, values);
      const records = settleAll(rows, held);
      answers.set(key, { snapshot: check.s, records }, records.length);
      return records;
    },
  };
}

/** The pool behind the box reads: small (reads are short), its own application name. */
export function createBoxReadPool(url: string, options: { max?: number; onIdleError?: (err: Error) => void } = {}): Pool {
  return createPgPool({
    url,
    max: options.max ?? 8,
    applicationName: 'selfstack-boxes-reads',
    ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
  });
}
