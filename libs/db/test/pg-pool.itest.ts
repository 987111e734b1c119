// createPgPool and guardCheckout against a real PostgreSQL: a checked-out client whose
// connection the server ends between two statements neither ends the process nor goes
// back to the pool.
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { createPgPool, guardCheckout, namedQuery } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('pg pool helpers', () => {
  it('guards a checked-out client whose backend is terminated: the error is caught and the client is closed on release', async () => {
    const idleErrors: Error[] = [];
    const pool = createPgPool({ url: db.url, max: 2, applicationName: 'pg-pool-itest', onIdleError: (e) => idleErrors.push(e) });
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    try {
      const client = await pool.connect();
      const guard = guardCheckout(client);
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      // The server's FATAL message arrives while no statement runs: without the guard this
      // 'error' event has no listener and ends the process.
      await new Promise((r) => setTimeout(r, 200));
      await expect(client.query('SELECT 1')).rejects.toThrow();
      guard.release();
      expect(pool.totalCount).toBe(0);
      // The pool answers again on a new connection, prepared statements included.
      const r = await namedQuery<{ n: number }>(pool, 'pg_pool_itest_one', 'SELECT $1::int AS n', [7]);
      expect(r.rows).toEqual([{ n: 7 }]);
      expect(idleErrors).toEqual([]);
    } finally {
      await admin.end();
      await pool.end();
    }
  });

  it('gives a healthy client back to the pool', async () => {
    const pool = createPgPool({ url: db.url, max: 1, applicationName: 'pg-pool-itest' });
    try {
      const client = await pool.connect();
      const guard = guardCheckout(client);
      await client.query('SELECT 1');
      guard.release();
      expect(pool.totalCount).toBe(1);
      expect(pool.idleCount).toBe(1);
      expect(client.listenerCount('error')).toBe(1); // the pool's own idle listener only
    } finally {
      await pool.end();
    }
  });
});
