// The scheduler's raw-SQL client on its own node-postgres pool (docs/scheduler.md,
// "Performance"): the state store's raw writes (a job register, the engine's plans and
// settlements: libs/state withWrite with `raw`), the event log reads of the streams, and
// the engine's reads go through it instead of Prisma's raw query path. Prisma spent ~5 ms
// of CPU on a 100-allocation plan statement that costs 1.8 ms here, and ~1.4 ms per job
// register (six statements) — much of it while holding the state store's counter lock,
// which every other write of the cluster waits on.
//
// It implements the slice of PrismaClient that libs/state and the stores use
// ($queryRawUnsafe, $executeRawUnsafe, $transaction), with Prisma's result types for what
// those statements return (int8 as bigint). Only raw SQL: a client answers any other
// property (a model API such as `tx.schedulerDeployment`) with an error, so a code path
// that needs Prisma's model API writes through Prisma (withWrite without `raw`).
//
// Statements run prepared: each text gets a name the first time it is sent, so
// PostgreSQL parses it once per connection and, after a few runs, reuses its plan (a
// register's statements spent more time in parse and bind than in execution). The
// scheduler's statements are constant texts with parameters; the names are capped
// (STATEMENT_NAMES) so that a text built at run time could never grow every
// connection's prepared statements without bound: texts past the cap run unnamed.
//
// A transaction also offers $batchUnsafe (libs/state RawSqlClient): several statements,
// and optionally COMMIT, in one round trip, which node-postgres' extended protocol cannot
// pipeline. They go out as one simple query of `EXECUTE`s of statements the connection
// has `PREPARE`d under SQL-level names of their own (`<name>_batch`), parameters as
// escaped literals; BEGIN rides along with a transaction's first batch. withWrite uses it
// to hold the counter lock for two round trips per job register.
import { createPgPool, guardCheckout, namedQuery } from '@selfstack/db';
import { escapeLiteral, types, type Pool, type PoolClient, type QueryResult } from 'pg';
import type { RawSqlClient } from '@selfstack/state';
import type { Db } from '../shared/common.types';

interface RawSql {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export interface SqlClient extends RawSql {
  $transaction<R>(fn: (tx: Db) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
  /** This client as the stores' `Db` (raw statements only, see above). */
  readonly db: Db;
  end(): Promise<void>;
}

/** An interactive transaction that outlived its budget (isTransactionTimeout recognises it as Prisma's P2028). */
export class SqlTransactionTimeoutError extends Error {
  readonly code = 'P2028';
  constructor(message: string) {
    super(message);
    this.name = 'SqlTransactionTimeoutError';
  }
}

/** Distinct statement texts that get a prepared-statement name (per client). */
export const STATEMENT_NAMES = 256;

const INT8_OID = 20;
const parseInt8 = (v: string): bigint => BigInt(v);
// Per pool, not global: other pg users of the process keep node-postgres' defaults.
const typeOverrides = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && (format ?? 'text') === 'text') return parseInt8;
    return types.getTypeParser(oid, format ?? 'text');
  },
};

/** A client that only allows the raw statements (see the header). */
function rawOnly(target: RawSql, what: string): Db {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === '$queryRawUnsafe' || prop === '$executeRawUnsafe' || prop === '$batchUnsafe' || prop === 'then' || typeof prop === 'symbol') return Reflect.get(t, prop, receiver) as unknown;
      throw new Error(`${what} runs raw SQL only; ${String(prop)} needs the Prisma-backed client`);
    },
  }) as unknown as Db;
}

function runner(query: (sql: string, values: unknown[]) => Promise<{ rows: unknown[]; rowCount: number | null }>): RawSql {
  return {
    async $queryRawUnsafe<T = unknown>(sql: string, ...values: unknown[]): Promise<T> {
      return (await query(sql, values)).rows as T;
    },
    async $executeRawUnsafe(sql: string, ...values: unknown[]): Promise<number> {
      return (await query(sql, values)).rowCount ?? 0;
    },
  };
}

/** A parameter as an SQL literal (batched statements go out as one simple query). */
function literal(value: unknown, n: string): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return escapeLiteral(value);
  if (typeof value === 'bigint') return `(${value.toString()})`;
  if (typeof value === 'number' && Number.isFinite(value)) return `(${String(value)})`;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  throw new TypeError(`$${n} of a batched statement: strings, numbers, bigints, booleans and null only`);
}

/**
 * `text` with its `$n` parameters as literals (strings escaped by node-postgres'
 * escapeLiteral). The scheduler's statements hold `$` only in their parameters.
 */
export function inlineParameters(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i >= values.length) throw new RangeError(`$${n} of a batched statement has no value (${values.length} given)`);
    return literal(values[i], n);
  });
}

export function createSqlClient(options: { databaseUrl: string; max: number; onIdleError?: (err: Error) => void }): SqlClient {
  // An idle client's error (the server closed it) never ends the process; the pool drops it.
  const pool = createPgPool({
    url: options.databaseUrl,
    max: options.max,
    applicationName: 'selfstack-scheduler-sql',
    types: typeOverrides,
    ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
  });
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < STATEMENT_NAMES) {
      name = `scheduler_${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  };
  const send = (db: Pool | PoolClient, text: string, values: unknown[]) => {
    const name = nameOf(text);
    return name === undefined ? db.query(text, values) : namedQuery(db, name, text, values);
  };
  const direct = runner((sql, values) => send(pool, sql, values));
  // Statements a connection has PREPAREd for batches (SQL-level, under `<name>_batch`).
  const preparedOn = new WeakMap<PoolClient, Set<string>>();

  async function checkout(maxWaitMs: number): Promise<PoolClient> {
    let timer: NodeJS.Timeout | undefined;
    let late = false;
    const connecting = pool.connect();
    try {
      return await Promise.race([
        connecting,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            late = true;
            reject(new SqlTransactionTimeoutError(`Transaction API error: unable to start a transaction in the given time (${maxWaitMs} ms)`));
          }, maxWaitMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      // A connection that arrives after we gave up goes back to the pool.
      if (late) connecting.then((c) => c.release(), () => undefined);
    }
  }

  async function transaction<R>(fn: (tx: Db) => Promise<R>, txOptions?: { maxWait?: number; timeout?: number }): Promise<R> {
    const timeoutMs = txOptions?.timeout ?? 5_000;
    const client = await checkout(txOptions?.maxWait ?? 2_000);
    let expired = false;
    let closed = false;
    // BEGIN goes out with the first statement of the callback (in a batch, in its round trip).
    let begun = false;
    let committed = false;
    const timer = setTimeout(() => {
      expired = true;
    }, timeoutMs);
    const guard = guardCheckout(client);
    const usable = (): void => {
      if (closed || expired || committed) throw new SqlTransactionTimeoutError(`Transaction already closed: ${committed ? 'committed' : 'expired transaction'} (timeout ${timeoutMs} ms)`);
    };
    const tx: RawSql & Pick<RawSqlClient, '$batchUnsafe'> = {
      ...runner(async (sql, values) => {
        usable();
        if (!begun) {
          await client.query('BEGIN');
          begun = true;
        }
        return send(client, sql, values);
      }),
      async $batchUnsafe(statements, batchOptions) {
        usable();
        const parts: string[] = begun ? [] : ['BEGIN'];
        // Which part answers each statement (a PREPARE answers too).
        const answers: number[] = [];
        let prepared = preparedOn.get(client);
        if (!prepared) preparedOn.set(client, (prepared = new Set()));
        let preparing = false;
        for (const st of statements) {
          const name = nameOf(st.text);
          if (name === undefined) {
            answers.push(parts.push(inlineParameters(st.text, st.values)) - 1);
            continue;
          }
          // SQL-level names of their own: the protocol-level ones belong to node-postgres.
          const sqlName = `${name}_batch`;
          if (!prepared.has(sqlName)) {
            parts.push(`PREPARE ${sqlName} AS ${st.text}`);
            prepared.add(sqlName);
            preparing = true;
          }
          answers.push(parts.push(st.values.length === 0 ? `EXECUTE ${sqlName}` : `EXECUTE ${sqlName}(${st.values.map((v, i) => literal(v, String(i + 1))).join(', ')})`) - 1);
        }
        if (batchOptions?.commit) parts.push('COMMIT');
        begun = true;
        if (parts.length === 0) return [];
        let all: QueryResult[];
        try {
          const results = await client.query(parts.join(';\n'));
          // One Result per part (a single one when there was one part).
          all = Array.isArray(results) ? (results as QueryResult[]) : [results];
        } catch (err) {
          // Which PREPAREs ran before the failure is unknown (they outlive a rollback):
          // the connection is closed rather than pooled with a wrong account of them.
          if (preparing) guard.fail(err);
          throw err;
        }
        if (batchOptions?.commit) {
          // COMMIT of a failed transaction answers ROLLBACK rather than an error.
          if (all[all.length - 1]?.command !== 'COMMIT') throw new Error('the transaction was rolled back at commit');
          committed = true;
        }
        return answers.map((i) => (all[i] as QueryResult).rows);
      },
    };
    try {
      const result = await fn(rawOnly(tx, 'this transaction'));
      if (committed) return result;
      if (expired) throw new SqlTransactionTimeoutError(`Transaction already closed: expired transaction (timeout ${timeoutMs} ms)`);
      closed = true;
      if (begun) await client.query('COMMIT');
      return result;
    } catch (err) {
      closed = true;
      // A failed ROLLBACK leaves the connection unusable: closed, not pooled.
      if (begun && !committed) await client.query('ROLLBACK').catch(guard.fail);
      throw err;
    } finally {
      clearTimeout(timer);
      guard.release();
    }
  }

  const self: SqlClient = {
    $queryRawUnsafe: direct.$queryRawUnsafe,
    $executeRawUnsafe: direct.$executeRawUnsafe,
    $transaction: transaction,
    db: rawOnly(direct, 'the scheduler SQL client'),
    end: () => pool.end(),
  };
  return self;
}
