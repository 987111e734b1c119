// The engine's own PostgreSQL pool (issue 25, placement throughput): the plan applier's
// writes and the broker's reads go through node-postgres directly instead of Prisma's raw
// query path. A plan's statements carry ~400 KB of JSON per 100 allocations (the rows and
// their events), and Prisma spent ~5 ms of CPU per such statement on top of node-postgres
// (measured: 100-allocation insert, 8.3 ms of Node CPU through Prisma, 1.8 ms through pg,
// 1.5 ms of which is JSON.stringify) — while holding the state store's counter lock, which
// every other write of the cluster waits on.
//
// It implements the slice of PrismaClient that libs/state and engine.store.ts use
// ($queryRawUnsafe, $executeRawUnsafe, $transaction), with Prisma's result types for what
// those statements return (int8 as bigint). Only raw SQL: a transaction client answers any
// other property (a model API such as `tx.schedulerDeployment`) with an error, so a code
// path that needs Prisma's model API must run through the Prisma-backed state store
// (plan-applier.ts chooses per plan).
import { createPgPool, guardCheckout } from '@selfstack/db';
import { types, type PoolClient } from 'pg';
import type { Db } from '../shared/common.types';

export interface SqlClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export interface EngineSql extends SqlClient {
  $transaction<R>(fn: (tx: Db) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
  /** This client as the engine store's `Db` (raw statements only, see above). */
  readonly db: Db;
  end(): Promise<void>;
}

/** An interactive transaction that outlived its budget (isTransactionTimeout recognises it as Prisma's P2028). */
export class EngineTransactionTimeoutError extends Error {
  readonly code = 'P2028';
  constructor(message: string) {
    super(message);
    this.name = 'EngineTransactionTimeoutError';
  }
}

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
function rawOnly(target: SqlClient, what: string): Db {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === '$queryRawUnsafe' || prop === '$executeRawUnsafe' || prop === 'then' || typeof prop === 'symbol') return Reflect.get(t, prop, receiver) as unknown;
      throw new Error(`${what} runs raw SQL only; ${String(prop)} needs the Prisma-backed client`);
    },
  }) as unknown as Db;
}

function runner(query: (sql: string, values: unknown[]) => Promise<{ rows: unknown[]; rowCount: number | null }>): SqlClient {
  return {
    async $queryRawUnsafe<T = unknown>(sql: string, ...values: unknown[]): Promise<T> {
      return (await query(sql, values)).rows as T;
    },
    async $executeRawUnsafe(sql: string, ...values: unknown[]): Promise<number> {
      return (await query(sql, values)).rowCount ?? 0;
    },
  };
}

export function createEngineSql(options: { databaseUrl: string; max: number }): EngineSql {
  // An idle client's error (the server closed it) never ends the process; the pool drops it.
  const pool = createPgPool({ url: options.databaseUrl, max: options.max, applicationName: 'selfstack-scheduler-engine', types: typeOverrides });
  const direct = runner((sql, values) => pool.query(sql, values));

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
            reject(new EngineTransactionTimeoutError(`Transaction API error: unable to start a transaction in the given time (${maxWaitMs} ms)`));
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
    const timer = setTimeout(() => {
      expired = true;
    }, timeoutMs);
    const tx = runner(async (sql, values) => {
      if (closed || expired) throw new EngineTransactionTimeoutError(`Transaction already closed: expired transaction (timeout ${timeoutMs} ms)`);
      return client.query(sql, values);
    });
    const guard = guardCheckout(client);
    try {
      await client.query('BEGIN');
      const result = await fn(rawOnly(tx, 'the engine transaction'));
      if (expired) throw new EngineTransactionTimeoutError(`Transaction already closed: expired transaction (timeout ${timeoutMs} ms)`);
      closed = true;
      await client.query('COMMIT');
      return result;
    } catch (err) {
      closed = true;
      // A failed ROLLBACK leaves the connection unusable: closed, not pooled.
      await client.query('ROLLBACK').catch(guard.fail);
      throw err;
    } finally {
      clearTimeout(timer);
      guard.release();
    }
  }

  const self: EngineSql = {
    $queryRawUnsafe: direct.$queryRawUnsafe,
    $executeRawUnsafe: direct.$executeRawUnsafe,
    $transaction: transaction,
    db: rawOnly(direct, 'the engine pool'),
    end: () => pool.end(),
  };
  return self;
}
