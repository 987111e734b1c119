// The scheduler's hot reads on a node-postgres pool with prepared statements (issue 30):
// a table index, and a job or an allocation together with the index of its table, in one
// statement. Through Prisma each was two queries (the index, then the row) at several times
// the CPU of a prepared statement (docs/scheduler.md, "Performance").
//
// One statement reads the row and the index in one snapshot: the index answered is exactly
// the state the row comes from (a write commits its rows and its table_index entry
// together), so a blocking reader that waits past that index never misses a write and never
// sees one twice.
//
// Rows already read are kept (a bounded map) with their row version: the tuple's `xmin`
// (the transaction that wrote this version of the row) and its modify_index. The statement
// sends the version it holds and PostgreSQL answers the data only when the row's version
// differs, so an unchanged row costs neither the transfer nor the JSON parse, and the answer
// is the same object as before (reply.ts keeps its serialised form: no JSON.stringify
// either). Every read still asks PostgreSQL: nothing is answered that the database does not
// confirm is current.
import { createPgPool, namedQuery } from '@selfstack/db';
import type { Pool } from 'pg';
import type { Allocation } from '../features/allocations/allocations.types';
import type { JobRecord } from '../features/jobs/jobs.store';
import type { Indexed } from './common.types';

/** A row version: the writing transaction and the row's modify_index (NULL: no row). */
const version = (t: string): string => `(${t}."xmin"::text || ':' || ${t}."modify_index"::text)`;

/** The highest table index of the tables in `param` (a text[]), 1 when none was written. */
const indexOf = (param: string): string =>
  `(SELECT COALESCE(MAX(t."index"), 1) FROM "scheduler"."table_index" t WHERE t."table" = ANY(${param}::text[]))::text`;

export const POINT_READ_SQL = {
  index: `SELECT ${indexOf('$1')} AS "i"`,
  // LEFT JOIN from one row: the index comes back when the row does not exist (v NULL).
  // $4 / $3: the version the caller holds ('' for none); data only when it differs.
  job: `SELECT ${indexOf('$3')} AS "i", ${version('j')} AS "v",
      CASE WHEN ${version('j')} = $4 THEN NULL ELSE j."data" END AS "d",
      CASE WHEN ${version('j')} = $4 THEN NULL ELSE j."summary" END AS "s"
    FROM (SELECT 1) AS "one" LEFT JOIN "scheduler"."jobs" j ON j."namespace" = $1 AND j."id" = $2`,
  allocation: `SELECT ${indexOf('$2')} AS "i", ${version('a')} AS "v",
      CASE WHEN ${version('a')} = $3 THEN NULL ELSE a."data" END AS "d"
    FROM (SELECT 1) AS "one" LEFT JOIN "scheduler"."allocations" a ON a."id" = $1`,
} as const;

type Name = keyof typeof POINT_READ_SQL;

/**
 * Rows held per kind (jobs, allocations): enough for every object of a typical cluster's
 * hot set; past it the oldest read goes first.
 */
export const POINT_READ_CACHE_ROWS = 4096;

/** Last read rows by key, with their version; the least recently read go first when full. */
class RowVersions<V> {
  private readonly rows = new Map<string, { version: string; value: V }>();

  constructor(private readonly max: number) {}

  held(key: string): { version: string; value: V } | undefined {
    return this.rows.get(key);
  }

  /**
   * The value PostgreSQL answered: `fresh` when it sent the data, else the `held` row it was
   * asked about (taken before the query: concurrent reads may replace the map's entry).
   */
  settle(key: string, held: { version: string; value: V } | undefined, version: string | null, fresh: V | null): V | null {
    if (version === null) {
      this.rows.delete(key);
      return null;
    }
    let value: V;
    if (fresh !== null) value = fresh;
    else if (held && held.version === version) value = held.value;
    else throw new Error(`scheduler point read: no data for ${key} at version ${version}`);
    this.rows.delete(key);
    this.rows.set(key, { version, value });
    if (this.rows.size > this.max) this.rows.delete(this.rows.keys().next().value as string);
    return value;
  }
}

export interface PointReads {
  /** The current index of `tables` (their highest table index). */
  index(tables: readonly string[]): Promise<number>;
  /** A job and its summary, with the index of `tables` in the same snapshot. */
  job(namespace: string, id: string, tables: readonly string[]): Promise<Indexed<JobRecord | null>>;
  /** An allocation, with the index of `tables` in the same snapshot. */
  allocation(id: string, tables: readonly string[]): Promise<Indexed<Allocation | null>>;
}

export function createPointReads(pool: Pool, options: { cacheRows?: number } = {}): PointReads {
  const jobs = new RowVersions<JobRecord>(options.cacheRows ?? POINT_READ_CACHE_ROWS);
  const allocations = new RowVersions<Allocation>(options.cacheRows ?? POINT_READ_CACHE_ROWS);
  async function one<R extends Record<string, unknown>>(name: Name, values: unknown[]): Promise<R> {
    const r = await namedQuery<R>(pool, `scheduler_${name}`, POINT_READ_SQL[name], values);
    const row = r.rows[0];
    if (!row) throw new Error(`scheduler point read ${name}: no row`);
    return row;
  }
  return {
    async index(tables) {
      return Number((await one<{ i: string }>('index', [tables])).i);
    },
    async job(namespace, id, tables) {
      const key = `${namespace}\0${id}`;
      const held = jobs.held(key);
      const row = await one<{ i: string; v: string | null; d: JobRecord['job'] | null; s: JobRecord['summary'] | null }>('job', [namespace, id, tables, held?.version ?? '']);
      return { index: Number(row.i), value: jobs.settle(key, held, row.v, row.d === null || row.s === null ? null : { job: row.d, summary: row.s }) };
    },
    async allocation(id, tables) {
      const held = allocations.held(id);
      const row = await one<{ i: string; v: string | null; d: Allocation | null }>('allocation', [id, tables, held?.version ?? '']);
      return { index: Number(row.i), value: allocations.settle(id, held, row.v, row.d) };
    },
  };
}

/** The pool behind the point reads: small (reads are short), its own application name. */
export function createReadPool(url: string, options: { max?: number; onIdleError?: (err: Error) => void } = {}): Pool {
  return createPgPool({
    url,
    max: options.max ?? 8,
    applicationName: 'selfstack-scheduler-reads',
    ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
  });
}
