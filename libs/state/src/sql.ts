// SQL for the state tables (prisma/schema/state.prisma). Raw SQL rather than the model
// API because the Postgres schema is a store parameter (tests and future deployments may
// use another one); identifiers are validated and quoted, values are always parameters.
import type { RawSqlClient, SqlStatement, StateEventInput, StoredEvent, EventFrame } from './types';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StateSql {
  // Takes the next index. Runs first in every write transaction: the row lock it takes is
  // held until commit, so the next writer's UPDATE waits and indexes follow commit order.
  // `set_config(..., true)` in RETURNING runs once the lock is held and applies to the
  // rest of the transaction only (SET LOCAL semantics): no statement of the write may
  // outlive the transaction budget while it holds the counter lock that every other
  // writer queues on. Folded into this statement to save a round trip per write.
  nextIndex: string;
  upsertTableIndex: string;
  insertEvents: string;
  // Both of the above in one statement (one round trip while the counter lock is held).
  recordWrite: string;
  currentIndex: string;
  globalIndex: string;
  eventsAfter: string;
  framesAfter: string;
  // Retention (issue 27): the index of the event `$1` places from the newest (events
  // older than that frame go), the newest index older than a cut-off time, and a bounded
  // delete of everything below an index (frames are never cut: a frame's rows share
  // their index and their transaction's timestamp).
  nthNewestIndex: string;
  newestIndexBefore: string;
  deleteBelow: string;
  oldestIndex: string;
}

export function buildStateSql(schema: string): StateSql {
  if (!IDENTIFIER.test(schema)) throw new Error(`invalid Postgres schema name: ${JSON.stringify(schema)}`);
  const s = `"${schema}"`;
  const eventColumns = `e."index", e."seq", e."topic", e."type", e."key", e."namespace", e."filter_keys", e."payload", e."created_at"`;
  return {
    nextIndex: `UPDATE ${s}."state_index" SET "value" = "value" + 1 WHERE "id" = 1 RETURNING "value", set_config('statement_timeout', $1, true) AS "statement_timeout"`,
    // jsonb parameters rather than Postgres arrays: one portable parameter type through
    // the driver adapter, whatever the number of rows.
    upsertTableIndex: `INSERT INTO ${s}."table_index" ("table", "index")
      SELECT t, $2::bigint FROM jsonb_array_elements_text($1::jsonb) AS t
      ON CONFLICT ("table") DO UPDATE SET "index" = EXCLUDED."index"`,
    // Payloads travel as JSON inside the rows' JSON (parsed once); jsonb_to_recordset turns
    // a JSON null into SQL NULL, which COALESCE turns back into the JSON null it was.
    insertEvents: `INSERT INTO ${s}."event_log" ("index", "seq", "topic", "type", "key", "namespace", "filter_keys", "payload")
      SELECT $1::bigint, x."seq", x."topic", x."type", x."key", x."namespace", x."filter_keys", COALESCE(x."payload", 'null'::jsonb)
      FROM jsonb_to_recordset($2::jsonb) AS x("seq" int, "topic" text, "type" text, "key" text, "namespace" text, "filter_keys" text[], "payload" jsonb)`,
    // $1 index, $2 tables (jsonb array), $3 events (as insertEvents' $2).
    recordWrite: `WITH "t" AS (
        INSERT INTO ${s}."table_index" ("table", "index")
        SELECT t, $1::bigint FROM jsonb_array_elements_text($2::jsonb) AS t
        ON CONFLICT ("table") DO UPDATE SET "index" = EXCLUDED."index"
        RETURNING 1)
      INSERT INTO ${s}."event_log" ("index", "seq", "topic", "type", "key", "namespace", "filter_keys", "payload")
      SELECT $1::bigint, x."seq", x."topic", x."type", x."key", x."namespace", x."filter_keys", COALESCE(x."payload", 'null'::jsonb)
      FROM jsonb_to_recordset($3::jsonb) AS x("seq" int, "topic" text, "type" text, "key" text, "namespace" text, "filter_keys" text[], "payload" jsonb)`,
    // Indexes start at 1 (a new cluster is at index 1; reference 0.2).
    currentIndex: `SELECT COALESCE(MAX("index"), 1)::bigint AS "index" FROM ${s}."table_index" WHERE "table" IN (SELECT jsonb_array_elements_text($1::jsonb))`,
    globalIndex: `SELECT "value" AS "index" FROM ${s}."state_index" WHERE "id" = 1`,
    eventsAfter: `SELECT ${eventColumns} FROM ${s}."event_log" e WHERE e."index" > $1::bigint ORDER BY e."index", e."seq" LIMIT $2`,
    // Up to $2 complete frames after $1, plus the horizon: the counter value seen by the
    // same statement snapshot. Writers commit in index order, so every index <= horizon is
    // committed and visible in this snapshot and nothing above it is: a reader that moves
    // its position to the horizon can never skip an event committed later. A frame is
    // never cut in half (the LIMIT counts distinct indexes, not rows).
    framesAfter: `WITH "h" AS (SELECT "value" FROM ${s}."state_index" WHERE "id" = 1),
      "idx" AS (SELECT DISTINCT "index" FROM ${s}."event_log" WHERE "index" > $1::bigint ORDER BY "index" LIMIT $2)
      SELECT (SELECT "value" FROM "h") AS "horizon", (SELECT COUNT(*) FROM "idx")::int AS "frames", ${eventColumns}
      FROM (SELECT 1) AS "one"
      LEFT JOIN ${s}."event_log" e ON e."index" > $1::bigint AND e."index" <= (SELECT MAX("index") FROM "idx")
      ORDER BY e."index", e."seq"`,
    nthNewestIndex: `SELECT "index" FROM ${s}."event_log" ORDER BY "index" DESC, "seq" DESC OFFSET $1 LIMIT 1`,
    // Walks the primary key from the newest row back to the first one older than the
    // cut-off: after the count limit, at most that many rows.
    newestIndexBefore: `SELECT "index" FROM ${s}."event_log" WHERE "created_at" < $1::timestamptz ORDER BY "index" DESC, "seq" DESC LIMIT 1`,
    deleteBelow: `DELETE FROM ${s}."event_log" WHERE ("index", "seq") IN (SELECT "index", "seq" FROM ${s}."event_log" WHERE "index" < $1::bigint ORDER BY "index", "seq" LIMIT $2)`,
    oldestIndex: `SELECT MIN("index") AS "index" FROM ${s}."event_log"`,
  };
}

interface EventRow {
  index: bigint | number | string;
  seq: number;
  topic: string;
  type: string;
  key: string;
  namespace: string;
  filter_keys: string[] | null;
  payload: unknown;
  created_at: Date | string;
}

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    index: Number(row.index),
    seq: Number(row.seq),
    topic: row.topic,
    type: row.type,
    key: row.key,
    namespace: row.namespace,
    filterKeys: row.filter_keys,
    payload: row.payload,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  };
}

// The statement of nextIndex (first in every write transaction).
export function nextIndexStatement(sql: StateSql, statementTimeoutMs: number): SqlStatement {
  return { text: sql.nextIndex, values: [`${statementTimeoutMs}ms`] };
}

export function parseNextIndex(rows: unknown[]): number {
  const row = rows[0] as { value: bigint | number | string } | undefined;
  if (!row) throw new Error('state_index has no row id=1: the state migration has not been applied');
  return Number(row.value);
}

// The bookkeeping statement of a write: its tables' indexes and its events (none when
// it has neither).
export function recordWriteStatement(sql: StateSql, index: number, tables: readonly string[], events: readonly StateEventInput[]): SqlStatement | null {
  const rows = events.map((event, seq) => ({
    seq,
    topic: event.topic,
    type: event.type,
    key: event.key,
    namespace: event.namespace,
    filter_keys: event.filterKeys ?? null,
    payload: event.payload ?? null,
  }));
  if (tables.length > 0 && rows.length > 0) return { text: sql.recordWrite, values: [BigInt(index), JSON.stringify(tables), JSON.stringify(rows)] };
  if (tables.length > 0) return { text: sql.upsertTableIndex, values: [JSON.stringify(tables), BigInt(index)] };
  if (rows.length > 0) return { text: sql.insertEvents, values: [BigInt(index), JSON.stringify(rows)] };
  return null;
}

export async function readCurrentIndex(db: RawSqlClient, sql: StateSql, tables: readonly string[]): Promise<number> {
  const rows = tables.length === 0
    ? await db.$queryRawUnsafe<{ index: bigint }[]>(sql.globalIndex)
    : await db.$queryRawUnsafe<{ index: bigint }[]>(sql.currentIndex, JSON.stringify(tables));
  return rows[0] ? Number(rows[0].index) : 1;
}

export async function readEventsAfter(db: RawSqlClient, sql: StateSql, index: number, limit: number): Promise<StoredEvent[]> {
  const rows = await db.$queryRawUnsafe<EventRow[]>(sql.eventsAfter, BigInt(Math.max(0, Math.floor(index))), limit);
  return rows.map(toStoredEvent);
}

export interface FramesPage {
  frames: EventFrame[];
  // Counter value in the same snapshot: every event with index <= horizon was readable.
  horizon: number;
  // True when the page hit the frame limit: more frames may follow right away.
  full: boolean;
}

export async function readFramesAfter(db: RawSqlClient, sql: StateSql, index: number, maxFrames: number): Promise<FramesPage> {
  type Row = { horizon: bigint | number | string | null; frames: number } & { [K in keyof EventRow]: EventRow[K] | null };
  const rows = await db.$queryRawUnsafe<Row[]>(sql.framesAfter, BigInt(Math.max(0, Math.floor(index))), maxFrames);
  const first = rows[0];
  const horizon = first?.horizon == null ? 1 : Number(first.horizon);
  const frames: EventFrame[] = [];
  for (const row of rows) {
    if (row.index === null) continue; // the LEFT JOIN's empty row
    const event = toStoredEvent(row as EventRow);
    const last = frames[frames.length - 1];
    if (last && last.index === event.index) last.events.push(event);
    else frames.push({ index: event.index, events: [event] });
  }
  return { frames, horizon, full: (first?.frames ?? 0) >= maxFrames };
}

// Groups an ordered event list into frames (one per index).
export function groupIntoFrames(events: readonly StoredEvent[]): EventFrame[] {
  const frames: EventFrame[] = [];
  for (const event of events) {
    const last = frames[frames.length - 1];
    if (last && last.index === event.index) last.events.push(event);
    else frames.push({ index: event.index, events: [event] });
  }
  return frames;
}

export interface PruneEventsOptions {
  // Keep at least this many (at least 1) of the newest events (whole frames: a few more may stay).
  keepEvents: number;
  // Drop frames written longer ago than this (0: no age limit).
  maxAgeMs: number;
  // Rows deleted per statement, so no single statement holds many row locks for long.
  batchRows?: number;
}

export async function pruneEvents(db: RawSqlClient, sql: StateSql, options: PruneEventsOptions, now: Date): Promise<number> {
  const keep = Math.max(1, Math.floor(options.keepEvents));
  let cutoff = 0;
  // The frame holding the keep-th newest event stays whole; everything below it goes.
  const byCount = await db.$queryRawUnsafe<{ index: bigint | number | string }[]>(sql.nthNewestIndex, keep - 1);
  if (byCount[0]) cutoff = Number(byCount[0].index);
  if (options.maxAgeMs > 0) {
    const before = new Date(now.getTime() - options.maxAgeMs).toISOString();
    const byAge = await db.$queryRawUnsafe<{ index: bigint | number | string }[]>(sql.newestIndexBefore, before);
    // Frames at or below the newest too-old index are all too old (indexes follow commit
    // order and a frame shares one timestamp): delete below the next index.
    if (byAge[0]) cutoff = Math.max(cutoff, Number(byAge[0].index) + 1);
  }
  if (cutoff <= 0) return 0;
  const batch = options.batchRows ?? 5000;
  let deleted = 0;
  for (;;) {
    const n = await db.$executeRawUnsafe(sql.deleteBelow, BigInt(cutoff), batch);
    deleted += n;
    if (n < batch) return deleted;
  }
}

export async function readOldestIndex(db: RawSqlClient, sql: StateSql): Promise<number | null> {
  const rows = await db.$queryRawUnsafe<{ index: bigint | number | string | null }[]>(sql.oldestIndex);
  const v = rows[0]?.index;
  return v === null || v === undefined ? null : Number(v);
}
