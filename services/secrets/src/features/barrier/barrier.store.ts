// The physical layer over PostgreSQL (tables `secrets.barrier` and `secrets.entries`,
// declared in prisma/schema/secrets.prisma and migrated by Prisma's migration folders).
// The only file of the service that talks to the database. Every statement is one round
// trip; a KV v2 read is one statement, a KV v2 write two (a read, then `applyIf`; under
// load the `applyIf` of concurrent writes share one statement, apply-batcher.ts). The
// entry store implements the storage contract (storage.types.ts) over opaque bytes.
import { createPgPool, guardCheckout, namedQuery, type PrismaClient } from '@selfstack/db';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { AlreadyInitializedError, type BarrierRecord, type BarrierStore } from './barrier.types';
import {
  assertDisjointPaths,
  EntryConflictError,
  guardOfStored,
  retryOnConflict,
  storedOfGuard,
  type Storage,
  type StorageEntry,
  type StorageTx,
} from './storage.types';
import { createApplyBatcher, type ApplyBatcher, type ApplyItem } from './apply-batcher';

interface SqlRunner {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

interface Row {
  path: string;
  value: Uint8Array;
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 60_000 };

const toBuffer = (u8: Uint8Array): Buffer => (Buffer.isBuffer(u8) ? u8 : Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength));

/**
 * The least string above every string that starts with `prefix`, in code point order
 * (UTF-8 byte order, the "C" collation of `entries.path`): `prefix` with its last code
 * point incremented (dropped first while it is U+10FFFF). The paths that start with
 * `prefix` are exactly those in [prefix, bound); null: there is no bound (every path from
 * `prefix` on starts with it).
 */
export function prefixBound(prefix: string): string | null {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    // The next code point, skipping the surrogates (not characters: UTF-8 has no bytes for them).
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    if (next <= 0x10ffff) return points.join('') + String.fromCodePoint(next);
  }
  return null;
}

// The entry store's fixed statements, run as named (prepared) statements through
// node-postgres, the driver @prisma/adapter-pg wraps. Measured on the 2-core CI box at 32
// concurrent callers: Prisma raw queries ~1.2k/s, pg prepared statements ~7.5k/s; the KV
// hot path is one such statement (docs/secrets.md, "Design notes").
const SQL = {
  get: 'SELECT "path", "value" FROM "secrets"."entries" WHERE "path" = $1',
  getForUpdate: 'SELECT "path", "value" FROM "secrets"."entries" WHERE "path" = $1 FOR UPDATE',
  getForShare: 'SELECT "path", "value" FROM "secrets"."entries" WHERE "path" = $1 FOR SHARE',
  put: 'INSERT INTO "secrets"."entries" ("path", "value") VALUES ($1, $2) ON CONFLICT ("path") DO UPDATE SET "value" = EXCLUDED."value"',
  insert: 'INSERT INTO "secrets"."entries" ("path", "value") VALUES ($1, $2) ON CONFLICT ("path") DO NOTHING',
  delete: 'DELETE FROM "secrets"."entries" WHERE "path" = $1',
  // Everything under a prefix, as a range of the primary key ([prefix, prefixBound)):
  // `path` has the "C" collation (byte order), so the range is exactly the paths that start
  // with the prefix, and it is an index range under any plan. (A LIKE pattern could not use
  // the index under another collation, nor in a generic plan: every token revocation and
  // KV list read the whole table.) The *From variants: no upper bound.
  deletePrefix: `DELETE FROM "secrets"."entries" WHERE "path" >= $1 COLLATE "C" AND "path" < $2 COLLATE "C"`,
  deletePrefixFrom: `DELETE FROM "secrets"."entries" WHERE "path" >= $1 COLLATE "C"`,
  listPaths: `SELECT "path" FROM "secrets"."entries" WHERE "path" >= $1 COLLATE "C" AND "path" < $2 COLLATE "C" ORDER BY "path" COLLATE "C"`,
  listPathsFrom: `SELECT "path" FROM "secrets"."entries" WHERE "path" >= $1 COLLATE "C" ORDER BY "path" COLLATE "C"`,
  // KV v2 writes: prune old versions, add the new one and save the metadata in one
  // statement (data-modifying CTEs always run to completion; the paths are disjoint).
  // Several values in one statement travel as one binary bytea (a Buffer parameter is sent
  // in binary) cut by 1-based offsets and lengths (int arrays), not as a bytea[]: node-pg
  // sent arrays as text, so every byte went as two hex digits that Postgres's array
  // parser then decoded, which was most of the statement's own CPU (docs/secrets.md,
  // "Eighth round"). Array parameters now go in binary too (binaryArray).
  replace: `WITH "gone" AS (DELETE FROM "secrets"."entries" WHERE "path" = ANY($1::text[]))
     INSERT INTO "secrets"."entries" ("path", "value")
        SELECT "u"."p", substring($3::bytea from "u"."o" for "u"."n") FROM unnest($2::text[], $4::int[], $5::int[]) AS "u"("p", "o", "n")
     ON CONFLICT ("path") DO UPDATE SET "value" = EXCLUDED."value"`,
  // Optimistic writes (Storage.applyIf), autocommit: "cur" is the guard (the stored value
  // is still $3, the bytes the guard saw); the other CTEs run only when it matched. Under READ COMMITTED
  // an UPDATE that waited for a concurrent writer re-checks the guard on the committed row
  // and matches nothing; an INSERT ... ON CONFLICT DO NOTHING that waited sees the
  // committed row and skips.
  applyIfEqual: `WITH "cur" AS (UPDATE "secrets"."entries" SET "value" = $2
        WHERE "path" = $1 AND "value" = $3::bytea RETURNING 1),
     "gone" AS (DELETE FROM "secrets"."entries" WHERE "path" = ANY($4::text[]) AND EXISTS (SELECT 1 FROM "cur")),
     "put" AS (INSERT INTO "secrets"."entries" ("path", "value")
        SELECT "u"."p", substring($6::bytea from "u"."o" for "u"."n") FROM unnest($5::text[], $7::int[], $8::int[]) AS "u"("p", "o", "n")
        WHERE EXISTS (SELECT 1 FROM "cur")
        ON CONFLICT ("path") DO UPDATE SET "value" = EXCLUDED."value")
     SELECT 1 AS "applied" FROM "cur"`,
  applyIfAbsent: `WITH "cur" AS (INSERT INTO "secrets"."entries" ("path", "value") VALUES ($1, $2) ON CONFLICT ("path") DO NOTHING RETURNING 1),
     "gone" AS (DELETE FROM "secrets"."entries" WHERE "path" = ANY($3::text[]) AND EXISTS (SELECT 1 FROM "cur")),
     "put" AS (INSERT INTO "secrets"."entries" ("path", "value")
        SELECT "u"."p", substring($5::bytea from "u"."o" for "u"."n") FROM unnest($4::text[], $6::int[], $7::int[]) AS "u"("p", "o", "n")
        WHERE EXISTS (SELECT 1 FROM "cur")
        ON CONFLICT ("path") DO UPDATE SET "value" = EXCLUDED."value")
     SELECT 1 AS "applied" FROM "cur"`,
  // Several optimistic writes in one statement (apply-batcher.ts): item i (1-based, in
  // the order of $1, $2) applies when its guard holds (the stored value is "expected";
  // NULL: the guard path must not exist), as applyIfEqual / applyIfAbsent
  // would, and then gets its next value ($3 cut by $9, $10); only applied items' deletes
  // ($4, $5: item, path) and puts ($6, $7: item, path; values $8 cut by $11, $12) run.
  // Paths are disjoint across items. `"path" = ANY($1)` in "upd" has the guarded rows
  // found through the primary key: joined to "g" alone (an unnest the planner guesses at
  // 10 rows) they were found by a sequential scan of the whole table while it was small
  // enough (~1,000 rows in the benchmark), most of the statement's cost (docs/secrets.md,
  // "Ninth round"; a plan test in kv-concurrency.itest.ts).
  applyMany: `WITH "g" AS (SELECT "t"."path", "t"."expected", substring($3::bytea from "t"."o" for "t"."n") AS "next", "t"."i"
        FROM unnest($1::text[], $2::bytea[], $9::int[], $10::int[]) WITH ORDINALITY AS "t"("path", "expected", "o", "n", "i")),
     "upd" AS (UPDATE "secrets"."entries" AS "e" SET "value" = "g"."next" FROM "g"
        WHERE "e"."path" = ANY($1::text[]) AND "g"."expected" IS NOT NULL AND "e"."path" = "g"."path" AND "e"."value" = "g"."expected"
        RETURNING "g"."i"),
     "ins" AS (INSERT INTO "secrets"."entries" ("path", "value") SELECT "g"."path", "g"."next" FROM "g" WHERE "g"."expected" IS NULL
        ON CONFLICT ("path") DO NOTHING RETURNING "path"),
     "ok" AS (SELECT "upd"."i" FROM "upd" UNION ALL SELECT "g"."i" FROM "g" JOIN "ins" ON "ins"."path" = "g"."path"),
     "gone" AS (DELETE FROM "secrets"."entries" WHERE "path" IN
        (SELECT "d"."p" FROM unnest($4::int[], $5::text[]) AS "d"("i", "p") JOIN "ok" ON "ok"."i" = "d"."i")),
     "put" AS (INSERT INTO "secrets"."entries" ("path", "value")
        SELECT "u"."p", substring($8::bytea from "u"."o" for "u"."n")
        FROM unnest($6::int[], $7::text[], $11::int[], $12::int[]) AS "u"("i", "p", "o", "n") JOIN "ok" ON "ok"."i" = "u"."i"
        ON CONFLICT ("path") DO UPDATE SET "value" = EXCLUDED."value")
     SELECT "i"::int AS "i" FROM "ok"`,
  getMany: 'SELECT "path", "value" FROM "secrets"."entries" WHERE "path" = ANY($1::text[])',
  // A path and the greatest path under a prefix (KV v2: the metadata row and the newest
  // version row, version suffixes being 16 decimal digits): the prefix's primary-key range
  // in byte order, as the prefix statements above, read backwards for one row.
  getWithLast: `(SELECT 0 AS "k", "path", "value" FROM "secrets"."entries" WHERE "path" = $1)
     UNION ALL
     (SELECT 1 AS "k", "path", "value" FROM "secrets"."entries"
        WHERE "path" >= $2 COLLATE "C" AND "path" < $3 COLLATE "C"
        ORDER BY "path" COLLATE "C" DESC LIMIT 1)`,
  getWithLastFrom: `(SELECT 0 AS "k", "path", "value" FROM "secrets"."entries" WHERE "path" = $1)
     UNION ALL
     (SELECT 1 AS "k", "path", "value" FROM "secrets"."entries"
        WHERE "path" >= $2 COLLATE "C"
        ORDER BY "path" COLLATE "C" DESC LIMIT 1)`,
} as const;

type SqlName = keyof typeof SQL;

/** The entry store's statements (for tests that check their plans). */
export const ENTRY_SQL: Readonly<Record<SqlName, string>> = SQL;

/**
 * Where entry statements run: the node-postgres pool or one of its clients (array
 * parameters in binary, binaryArray), or Prisma at init (every parameter as text, so arrays
 * as literals, arrayLiteral). Each runner encodes the array parameters its own way.
 */
interface Queryable {
  query<R extends QueryResultRow>(name: SqlName, values: readonly unknown[]): Promise<QueryResult<R>>;
}

/** Type OIDs of the array elements the statements use (`pg_type`: text, int4, bytea). */
const ELEMENT_OID = { text: 25, int: 23, bytea: 17 } as const;

/**
 * The element type of each array parameter of `sql`, by its `$n::T[]` casts (1-based n):
 * the type PostgreSQL infers for the parameter, which its binary array must name.
 */
export function arrayParameterTypes(sql: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of sql.matchAll(/\$(\d+)::(text|int|bytea)\[\]/g)) {
    const n = Number(m[1]);
    const oid = ELEMENT_OID[m[2] as keyof typeof ELEMENT_OID];
    if ((out.get(n) ?? oid) !== oid) throw new Error(`$${n} is cast to two array types`);
    out.set(n, oid);
  }
  return out;
}

const ARRAY_PARAMETERS = Object.fromEntries(Object.entries(SQL).map(([name, text]) => [name, arrayParameterTypes(text)])) as Record<SqlName, Map<number, number>>;

/**
 * An array parameter in PostgreSQL's binary array format (what array_send writes and
 * array_recv reads): dimensions, a has-nulls flag, the element type OID, then each element
 * as a length (-1: NULL) and its bytes (text as UTF-8, int4 big-endian, bytea as is).
 * node-postgres sends a Buffer parameter in binary, so the server reads the array with no
 * text parsing (no quoting, no hex digits for bytea) and the driver copies bytes instead
 * of encoding a long concatenated literal (docs/secrets.md, "Fifteenth round").
 */
export function binaryArray(items: readonly unknown[], elementOid: number): Buffer {
  const n = items.length;
  let size = n === 0 ? 12 : 20;
  let hasNull = 0;
  for (let i = 0; i < n; i++) {
    const item = items[i];
    size += 4;
    if (item === null || item === undefined) hasNull = 1;
    else if (elementOid === ELEMENT_OID.text && typeof item === 'string') size += Buffer.byteLength(item);
    else if (elementOid === ELEMENT_OID.int && Number.isInteger(item) && (item as number) >= -0x80000000 && (item as number) <= 0x7fffffff) size += 4;
    else if (elementOid === ELEMENT_OID.bytea && Buffer.isBuffer(item)) size += item.length;
    else throw new TypeError(`binaryArray: element ${i} (${typeof item}) does not fit type ${elementOid}`);
  }
  const buf = Buffer.allocUnsafe(size);
  buf.writeInt32BE(n === 0 ? 0 : 1, 0);
  buf.writeInt32BE(hasNull, 4);
  buf.writeUInt32BE(elementOid, 8);
  let at = 12;
  if (n > 0) {
    buf.writeInt32BE(n, 12);
    buf.writeInt32BE(1, 16);
    at = 20;
  }
  for (let i = 0; i < n; i++) {
    const item = items[i];
    if (item === null || item === undefined) {
      buf.writeInt32BE(-1, at);
      at += 4;
    } else if (typeof item === 'string') {
      const len = buf.write(item, at + 4, 'utf8');
      buf.writeInt32BE(len, at);
      at += 4 + len;
    } else if (typeof item === 'number') {
      buf.writeInt32BE(4, at);
      buf.writeInt32BE(item, at + 4);
      at += 8;
    } else {
      const b = item as Buffer;
      buf.writeInt32BE(b.length, at);
      b.copy(buf, at + 4);
      at += 4 + b.length;
    }
  }
  return buf;
}

/** The node-postgres pool, or one of its clients (a transaction), as a Queryable. */
function pgQueryable(db: Pool | PoolClient): Queryable {
  return {
    query<R extends QueryResultRow>(name: SqlName, values: readonly unknown[]): Promise<QueryResult<R>> {
      const types = ARRAY_PARAMETERS[name];
      // An array parameter without a recognised cast goes as a literal (text reads as any type).
      const params = values.map((v, i) => {
        if (!Array.isArray(v)) return v;
        const oid = types.get(i + 1);
        return oid === undefined ? arrayLiteral(v) : binaryArray(v, oid);
      });
      return namedQuery<R>(db, `secrets_${name}`, SQL[name], params);
    },
  };
}

/**
 * An array parameter as a PostgreSQL array literal: text elements double-quoted (only `"`
 * and `\` escaped), numbers as they are, Buffers as bytea hex (`\x...`, its backslash
 * escaped), null as NULL. node-postgres builds the same text, but with two
 * regular-expression replaces and its prepareValue per element (docs/secrets.md,
 * "Thirteenth round"). Used where parameters go as text (Prisma, at init); the pool sends
 * binary arrays (binaryArray).
 */
export function arrayLiteral(items: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (i > 0) out += ',';
    if (item === null || item === undefined) out += 'NULL';
    else if (typeof item === 'number') out += String(item);
    else if (Buffer.isBuffer(item)) out += `"\\\\x${item.toString('hex')}"`;
    else if (typeof item === 'string') out += item.includes('"') || item.includes('\\') ? `"${item.replace(/["\\]/g, '\\$&')}"` : `"${item}"`;
    else throw new TypeError(`arrayLiteral: unsupported element ${typeof item}`);
  }
  return `${out}}`;
}


/** Values as one binary parameter plus their 1-based offsets and lengths in it. */
function packed(values: readonly Buffer[]): { bytes: Buffer; offsets: number[]; lengths: number[] } {
  const offsets: number[] = [];
  const lengths: number[] = [];
  let at = 1;
  for (const v of values) {
    offsets.push(at);
    lengths.push(v.length);
    at += v.length;
  }
  return { bytes: values.length === 1 ? (values[0] as Buffer) : Buffer.concat(values as Buffer[]), offsets, lengths };
}

/** The statement (its bounded form, or the *From one) and parameters for the paths under `prefix`. */
function underPrefix(name: 'deletePrefix' | 'listPaths', prefix: string): [SqlName, string[]] {
  const bound = prefixBound(prefix);
  return bound === null ? [`${name}From`, [prefix]] : [name, [prefix, bound]];
}

function txOps(db: Queryable): StorageTx {
  return {
    async get(path, options) {
      const r = await db.query<Row>(options?.forUpdate ? 'getForUpdate' : options?.forShare ? 'getForShare' : 'get', [path]);
      const row = r.rows[0];
      return row ? toBuffer(row.value) : null;
    },
    async put(path, value) {
      await db.query('put', [path, value]);
    },
    async insert(path, value) {
      const r = await db.query('insert', [path, value]);
      if (r.rowCount === 0) throw new EntryConflictError(path);
    },
    async delete(path) {
      await db.query('delete', [path]);
    },
    async replace(deletes, puts) {
      for (const p of puts) if (deletes.includes(p.path)) throw new Error(`replace: ${p.path} is both deleted and written`);
      const values = packed(puts.map((p) => p.value));
      await db.query('replace', [[...deletes], puts.map((p) => p.path), values.bytes, values.offsets, values.lengths]);
    },
    async deletePrefix(prefix) {
      const r = await db.query(...underPrefix('deletePrefix', prefix));
      return r.rowCount ?? 0;
    },
    async list(prefix) {
      const r = await db.query<{ path: string }>(...underPrefix('listPaths', prefix));
      return r.rows.map((row) => row.path);
    },
  };
}

export interface EntryPoolOptions {
  url: string;
  max?: number;
  applicationName?: string;
  /** Told when an idle connection dies (Postgres restarted, an admin terminated it). */
  onIdleError?: (err: Error) => void;
}

/** What every entry-store session sets (see entryPoolConnection). */
const ENTRY_SESSION_OPTIONS = '-c enable_seqscan=off';

/**
 * Where the entry pool connects, and with which session settings. Every statement of the
 * entry store finds its rows by key or key range, so a plan that reads the whole table is
 * never the one wanted; but a plan cached while the table was a few pages (a fresh
 * install's first writes, its index already bigger than its heap) read it whole on every
 * grouped write until autovacuum analysed the table (docs/secrets.md, "Thirteenth round").
 * With enable_seqscan off the planner takes the index whenever there is one, whatever the
 * statistics say at planning time. Sent as the startup `options` parameter (no statement
 * of its own); node-postgres lets an `options` in the URL replace the one in its config,
 * so a URL that has one gets this one appended to it.
 */
export function entryPoolConnection(url: string): { connectionString: string; options?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL node-postgres reads options from (a socket path form): the config's own.
    return { connectionString: url, options: ENTRY_SESSION_OPTIONS };
  }
  const own = parsed.searchParams.get('options');
  if (own === null) return { connectionString: url, options: ENTRY_SESSION_OPTIONS };
  parsed.searchParams.set('options', `${own} ${ENTRY_SESSION_OPTIONS}`);
  return { connectionString: parsed.toString() };
}

/**
 * The node-postgres pool behind the entry store; its sessions plan with enable_seqscan
 * off (entryPoolConnection). An idle connection that the server ends (a restart,
 * pg_terminate_backend) makes the pool emit 'error'; without a listener that event would
 * crash the process, so one is always attached. The pool drops the dead client and the
 * next query opens a new connection.
 */
export function createEntryPool(options: EntryPoolOptions): Pool {
  const c = entryPoolConnection(options.url);
  return createPgPool({
    url: c.connectionString,
    ...(c.options !== undefined ? { options: c.options } : {}),
    ...(options.max !== undefined ? { max: options.max } : {}),
    applicationName: options.applicationName ?? 'selfstack-secrets',
    ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
  });
}

/** The parameters of the `applyMany` statement for `items` (exported for the plan test). */
export function applyManyValues(items: readonly ApplyItem[]): unknown[] {
  const delItem: number[] = [];
  const delPath: string[] = [];
  const putItem: number[] = [];
  const putPath: string[] = [];
  const putValue: Buffer[] = [];
  items.forEach((item, n) => {
    for (const d of item.deletes) {
      delItem.push(n + 1);
      delPath.push(d);
    }
    for (const p of item.puts) {
      putItem.push(n + 1);
      putPath.push(p.path);
      putValue.push(p.value);
    }
  });
  const next = packed(items.map((i) => i.next));
  const values = packed(putValue);
  return [
    items.map((i) => i.guardPath),
    items.map((i) => i.expected),
    next.bytes,
    delItem,
    delPath,
    putItem,
    putPath,
    values.bytes,
    next.offsets,
    next.lengths,
    values.offsets,
    values.lengths,
  ];
}

/** Runs several applyIf items as one `applyMany` statement; whether each applied. */
async function applyMany(db: Queryable, items: readonly ApplyItem[]): Promise<boolean[]> {
  const r = await db.query<{ i: number }>('applyMany', applyManyValues(items));
  const applied = items.map(() => false);
  for (const row of r.rows) applied[Number(row.i) - 1] = true;
  return applied;
}

export interface EntryStoreOptions {
  pool: Pool;
  /**
   * Conditional-write statements in flight at most; concurrent writes wait and go together
   * in one statement (apply-batcher.ts). Default: 2 (at most half the pool, at least 1).
   */
  applyInFlight?: number;
}

export function createEntryStore(deps: EntryStoreOptions): Storage & { readonly applyStats: ApplyBatcher['stats'] } {
  const { pool } = deps;
  const db = pgQueryable(pool);
  const base = txOps(db);
  const poolMax = pool.options.max ?? 10;
  const batcher = createApplyBatcher({
    maxInFlight: deps.applyInFlight ?? Math.max(1, Math.min(2, Math.floor(poolMax / 2))),
    // One statement at a time; another beside it once 8 writes wait or it has run 5 ms
    // (a lock wait, say). A statement costs PostgreSQL ~200 µs of CPU on its own (planning,
    // the commit's WAL flush) against ~20-35 µs per item on the 2-core bench box, so the
    // larger the groups, the less it spends per write: with 2 statements always in flight
    // groups averaged 6.4 items (docs/secrets.md, "Fourteenth round").
    stallMs: 5,
    minGroup: 8,
    maxItems: 64,
    runOne: async (item) => {
      const paths = item.puts.map((p) => p.path);
      const values = packed(item.puts.map((p) => p.value));
      const r =
        item.expected === null
          ? await db.query('applyIfAbsent', [item.guardPath, item.next, item.deletes, paths, values.bytes, values.offsets, values.lengths])
          : await db.query('applyIfEqual', [item.guardPath, item.next, item.expected, item.deletes, paths, values.bytes, values.offsets, values.lengths]);
      return r.rowCount === 1;
    },
    runMany: (items) => applyMany(db, items),
  });
  return {
    applyStats: batcher.stats,
    get: (path) => base.get(path),
    put: base.put,
    delete: base.delete,
    deletePrefix: base.deletePrefix,
    list: base.list,
    async getMany(paths) {
      const out = new Map<string, Buffer>();
      if (paths.length === 0) return out;
      const r = await db.query<Row>('getMany', [[...paths]]);
      for (const row of r.rows) out.set(row.path, toBuffer(row.value));
      return out;
    },
    async getWithLast(path, prefix) {
      const bound = prefixBound(prefix);
      const r = await db.query<Row & { k: number }>(bound === null ? 'getWithLastFrom' : 'getWithLast', bound === null ? [path, prefix] : [path, prefix, bound]);
      let entry: Buffer | null = null;
      let last: StorageEntry | null = null;
      for (const row of r.rows) {
        if (Number(row.k) === 0) entry = toBuffer(row.value);
        else last = { path: row.path, value: toBuffer(row.value) };
      }
      return { entry, last };
    },
    async getGuarded(path) {
      const value = await base.get(path);
      return { value, guard: guardOfStored(path, value) };
    },
    async applyIf(path, guard, value, deletes, puts) {
      const expected = storedOfGuard(guard, path);
      assertDisjointPaths(path, deletes, puts);
      const applied = await batcher.apply({ guardPath: path, expected, next: value, deletes, puts });
      return applied ? guardOfStored(path, value) : null;
    },
    transaction: (fn) =>
      retryOnConflict(async () => {
        const client = await pool.connect();
        const guard = guardCheckout(client);
        try {
          await client.query('BEGIN');
          const result = await fn(txOps(pgQueryable(client)));
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(guard.fail);
          throw err;
        } finally {
          guard.release();
        }
      }),
  };
}

/** Runs the entry statements inside a Prisma interactive transaction (init only). */
function prismaQueryable(sql: SqlRunner): Queryable {
  return {
    async query<R extends QueryResultRow>(name: SqlName, values: readonly unknown[]): Promise<QueryResult<R>> {
      const text = SQL[name];
      const params = values.map((v) => (Array.isArray(v) ? arrayLiteral(v) : v));
      if (/^\s*\(?\s*SELECT/i.test(text)) {
        const rows = await sql.$queryRawUnsafe<R[]>(text, ...params);
        return { rows, rowCount: rows.length } as unknown as QueryResult<R>;
      }
      const n = await sql.$executeRawUnsafe(text, ...params);
      return { rows: [], rowCount: n } as unknown as QueryResult<R>;
    },
  };
}

export function createBarrierStore(deps: { prisma: PrismaClient }): BarrierStore {
  const db = deps.prisma as unknown as SqlRunner & PrismaClient;
  return {
    async load() {
      const rows = await db.$queryRawUnsafe<{ secret_shares: number; secret_threshold: number; keyring: Uint8Array }[]>(
        'SELECT "secret_shares", "secret_threshold", "keyring" FROM "secrets"."barrier" WHERE "id" = 1',
      );
      const row = rows[0];
      if (!row) return null;
      return { secretShares: Number(row.secret_shares), secretThreshold: Number(row.secret_threshold), keyring: toBuffer(row.keyring) };
    },
    async create(record: BarrierRecord, setup) {
      await db.$transaction(async (tx) => {
        const sql = tx as unknown as SqlRunner;
        const n = await sql.$executeRawUnsafe(
          'INSERT INTO "secrets"."barrier" ("id", "secret_shares", "secret_threshold", "keyring") VALUES (1, $1, $2, $3) ON CONFLICT ("id") DO NOTHING',
          record.secretShares,
          record.secretThreshold,
          record.keyring,
        );
        if (n === 0) throw new AlreadyInitializedError();
        await setup(txOps(prismaQueryable(sql)));
      }, TX_OPTIONS);
    },
  };
}
