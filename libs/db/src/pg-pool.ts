// node-postgres pools for the hot paths that skip Prisma (docs/architecture.md, "Database"):
// the secrets entry store and the scheduler's point reads. A query through Prisma's driver
// adapter costs several times the CPU of the same query sent as a prepared statement here
// (docs/scheduler.md and docs/secrets.md, "Performance").
import { Pool, Query, type PoolClient, type PoolConfig, type QueryResult, type QueryResultRow } from 'pg';

export interface PgPoolOptions {
  /** postgresql:// connection string. */
  url: string;
  /** Maximum connections; pg's default (10) when unset. */
  max?: number;
  /** Shown in pg_stat_activity. */
  applicationName: string;
  /** Startup `options` (e.g. `-c enable_seqscan=off`), unless the URL carries its own. */
  options?: string;
  /**
   * An idle connection the server ended (a restart, pg_terminate_backend). The pool drops
   * it and the next query opens a new one; without a listener node-postgres' 'error' event
   * would end the process, so one is always attached.
   */
  onIdleError?: (err: Error) => void;
  /** Type parsers of this pool's clients (node-postgres' `types`); the global ones when unset. */
  types?: PoolConfig['types'];
}

export function createPgPool(o: PgPoolOptions): Pool {
  const pool = new Pool({
    connectionString: o.url,
    ...(o.options !== undefined ? { options: o.options } : {}),
    ...(o.max !== undefined ? { max: o.max } : {}),
    application_name: o.applicationName,
    ...(o.types !== undefined ? { types: o.types } : {}),
  });
  pool.on('error', (err: Error) => o.onIdleError?.(err));
  return pool;
}

/** A checked-out client's guard (guardCheckout). */
export interface CheckoutGuard {
  /** Marks the connection unusable (a failed ROLLBACK, say): it will be closed, not pooled. */
  fail(err: unknown): void;
  /** Gives the client back: to the pool when healthy, closed when it failed. */
  release(): void;
}

/**
 * A client checked out of a pool has no pool listener: the server ending its connection
 * between two statements (a restart, pg_terminate_backend) emits 'error' on it, which
 * without a listener ends the process. The guard listens for the checkout, and a client
 * that failed is closed on release instead of going back to the pool.
 */
export function guardCheckout(client: PoolClient): CheckoutGuard {
  let broken: Error | undefined;
  const fail = (err: unknown) => {
    broken ??= err instanceof Error ? err : new Error(String(err));
  };
  client.on('error', fail);
  return {
    fail,
    release() {
      client.off('error', fail);
      client.release(broken);
    },
  };
}

/**
 * A named (prepared) statement for node-postgres, handed to it as a ready Query: given a
 * config object, `client.query` copies it first through property descriptors, which cost
 * ~20 µs per statement under load on the bench box (docs/secrets.md, "Performance").
 */
class NamedQuery extends Query {
  constructor(name: string, text: string, values: unknown[]) {
    super(text, values);
    // Query's own field (what it prepares under), not in @types/pg; tests check that the
    // statements are prepared under these names (secrets kv-concurrency.itest.ts).
    (this as unknown as { name: string }).name = name;
  }
}

/**
 * Runs `text` as the prepared statement `name` on a pool or one of its clients: parsed and
 * planned once per connection, then only bound and executed. `name` must always go with
 * the same `text`.
 */
export function namedQuery<R extends QueryResultRow>(db: Pool | PoolClient, name: string, text: string, values: unknown[]): Promise<QueryResult<R>> {
  return new Promise((resolve, reject) => {
    const query = new NamedQuery(name, text, values);
    // With a callback either way: the pool answers a ready Query with a promise, a client
    // with the Query itself.
    (db.query as (q: NamedQuery, cb: (err: Error | undefined, r: QueryResult<R>) => void) => unknown).call(db, query, (err, r) => (err ? reject(err) : resolve(r)));
  });
}
