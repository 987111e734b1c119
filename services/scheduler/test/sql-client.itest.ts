// The scheduler's raw-SQL client (src/shared/sql-client.store.ts) against a real database: it
// must behave as the Prisma client it stands in for wherever the stores and libs/state use
// it (results, transactions, timeouts), run its statements prepared, and refuse the model
// API it does not have.
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { createSqlClient, inlineParameters, STATEMENT_NAMES, type SqlClient } from '../src/shared/sql-client.store';

let db: TestDatabase;
let sql: SqlClient;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = createSqlClient({ databaseUrl: db.url, max: 3 });
  await sql.$executeRawUnsafe('CREATE TABLE "engine_sql_t" ("id" text PRIMARY KEY, "n" bigint NOT NULL)');
});

afterAll(async () => {
  await sql.end();
  await db.drop();
});

beforeEach(async () => {
  await sql.$executeRawUnsafe('DELETE FROM "engine_sql_t"');
});

const count = async (): Promise<number> => (await sql.$queryRawUnsafe<Array<{ c: number }>>('SELECT COUNT(*)::int AS c FROM "engine_sql_t"'))[0]?.c ?? -1;

test('results as Prisma raw queries return them: int8 as bigint, int4 as number, json parsed; execute returns the row count', async () => {
  const n = await sql.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2), ($3, $4)', 'a', BigInt(9007199254740993n), 'b', 2);
  expect(n).toBe(2);
  const rows = await sql.$queryRawUnsafe<Array<{ id: string; n: bigint; i: number; j: unknown }>>(
    `SELECT "id", "n", 1::int AS i, '{"x":[1]}'::jsonb AS j FROM "engine_sql_t" WHERE "id" = ANY($1::text[]) ORDER BY "id"`,
    ['a', 'b'],
  );
  expect(rows).toEqual([
    { id: 'a', n: 9007199254740993n, i: 1, j: { x: [1] } },
    { id: 'b', n: 2n, i: 1, j: { x: [1] } },
  ]);
});

test('a transaction commits what its callback wrote and returns its value', async () => {
  const r = await sql.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'a', 1);
    return 'done';
  });
  expect(r).toBe('done');
  expect(await count()).toBe(1);
});

test('a callback that throws rolls back everything and the error reaches the caller; the connection is reused', async () => {
  await expect(
    sql.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'a', 1);
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  // A failed statement aborts the transaction: also rolled back.
  await expect(
    sql.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'b', 1);
      await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'b', 1);
    }),
  ).rejects.toThrow(/duplicate key/);
  expect(await count()).toBe(0);
  // More transactions than pooled connections: none was leaked by the failures.
  await Promise.all(Array.from({ length: 6 }, (_, i) => sql.$transaction((tx) => tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', `c${i}`, i))));
  expect(await count()).toBe(6);
});

test('a transaction past its budget is rolled back with Prisma\'s expired-transaction error (P2028, which libs/state maps to StateWriteTimeoutError)', async () => {
  const err = await sql
    .$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'a', 1);
        await tx.$queryRawUnsafe('SELECT pg_sleep(0.3)');
        await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'b', 1);
      },
      { timeout: 100 },
    )
    .catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'P2028', message: expect.stringMatching(/expired transaction/) });
  expect(await count()).toBe(0);
});

test('the model API is refused with a clear error, in and out of a transaction', async () => {
  expect(() => (sql.db as unknown as Record<string, unknown>)['schedulerDeployment']).toThrow(/raw SQL only; schedulerDeployment needs the Prisma-backed client/);
  await expect(
    sql.$transaction(async (tx) => {
      void (tx as unknown as Record<string, unknown>)['schedulerJob'];
    }),
  ).rejects.toThrow(/raw SQL only; schedulerJob needs the Prisma-backed client/);
});

test('statements run prepared under a name, up to STATEMENT_NAMES distinct texts; texts past the cap still run, unnamed', async () => {
  const prepared = (tx: { $queryRawUnsafe<T>(q: string, ...v: unknown[]): Promise<T> }) =>
    tx.$queryRawUnsafe<Array<{ name: string; statement: string }>>('SELECT "name", "statement" FROM pg_prepared_statements ORDER BY "name"');
  const text = 'SELECT "n" FROM "engine_sql_t" WHERE "id" = $1';
  const seen = await sql.$transaction(async (tx) => {
    await tx.$queryRawUnsafe(text, 'a');
    await tx.$queryRawUnsafe(text, 'b');
    return prepared(tx);
  });
  expect(seen.filter((s) => s.statement === text)).toEqual([{ name: expect.stringMatching(/^scheduler_\d+$/), statement: text }]);
  // More distinct texts than the cap, all on one connection (a transaction holds it).
  const { count, answers } = await sql.$transaction(async (tx) => {
    const answers: number[] = [];
    for (let i = 0; i < STATEMENT_NAMES + 20; i++) answers.push((await tx.$queryRawUnsafe<Array<{ v: number }>>(`SELECT ${i}::int + $1::int AS v`, 1))[0]?.v ?? -1);
    return { count: (await prepared(tx)).length, answers };
  });
  expect(answers).toEqual(Array.from({ length: STATEMENT_NAMES + 20 }, (_, i) => i + 1));
  expect(count).toBeLessThanOrEqual(STATEMENT_NAMES);
  expect(count).toBeGreaterThan(STATEMENT_NAMES - 10);
});

describe('batches ($batchUnsafe): several statements in one round trip', () => {
  const batchOf = (tx: unknown) => tx as { $batchUnsafe(s: Array<{ text: string; values: unknown[] }>, o?: { commit?: boolean }): Promise<unknown[][]> };
  const tricky = `it's a \\ "quoted" ünïcode $1 -- not a comment`;

  test('answers each statement\'s rows; parameters go out as literals (quotes, backslashes, $ in values) and run prepared', async () => {
    // A client of its own: the cap test above used up the shared one's statement names.
    const own = createSqlClient({ databaseUrl: db.url, max: 1 });
    const out = await own.$transaction(async (tx) => {
      const b = batchOf(tx);
      const first = await b.$batchUnsafe([
        { text: 'INSERT INTO "engine_sql_t" VALUES ($1, $2) RETURNING "id", "n"', values: [tricky, 7n] },
        { text: 'SELECT "id", "n" + $2::bigint AS "n", $3::jsonb AS "j" FROM "engine_sql_t" WHERE "id" = $1', values: [tricky, -2, JSON.stringify({ a: "x'y\\z" })] },
      ]);
      // The same statements again on this connection: executed, not prepared a second time.
      const again = await b.$batchUnsafe([{ text: 'SELECT "id", "n" + $2::bigint AS "n", $3::jsonb AS "j" FROM "engine_sql_t" WHERE "id" = $1', values: [tricky, 1, 'null'] }]);
      const prepared = await tx.$queryRawUnsafe<Array<{ name: string }>>(`SELECT "name" FROM pg_prepared_statements WHERE "name" LIKE '%\\_batch' ORDER BY "name"`);
      return { first, again, prepared: prepared.map((p) => p.name) };
    });
    expect(out.first).toEqual([[{ id: tricky, n: 7n }], [{ id: tricky, n: 5n, j: { a: "x'y\\z" } }]]);
    expect(out.again).toEqual([[{ id: tricky, n: 8n, j: null }]]);
    expect(out.prepared).toEqual([expect.stringMatching(/^scheduler_\d+_batch$/), expect.stringMatching(/^scheduler_\d+_batch$/)]);
    await own.end();
    expect(await count()).toBe(1);
  });

  test('with commit, the batch commits the transaction: the callback\'s later statements are refused and the client commits nothing more', async () => {
    let late: Promise<unknown> | undefined;
    const r = await sql.$transaction(async (tx) => {
      await batchOf(tx).$batchUnsafe([{ text: 'INSERT INTO "engine_sql_t" VALUES ($1, $2)', values: ['c', 1] }], { commit: true });
      late = tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'late', 1);
      await late.catch(() => undefined);
      return 'ok';
    });
    expect(r).toBe('ok');
    await expect(late).rejects.toThrow(/Transaction already closed: committed/);
    expect(await sql.$queryRawUnsafe('SELECT "id" FROM "engine_sql_t"')).toEqual([{ id: 'c' }]);
  });

  test('a failing statement rolls the whole transaction back and the error reaches the caller; later transactions run', async () => {
    await expect(
      sql.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('INSERT INTO "engine_sql_t" VALUES ($1, $2)', 'kept?', 1);
        await batchOf(tx).$batchUnsafe(
          [
            { text: 'INSERT INTO "engine_sql_t" VALUES ($1, $2)', values: ['d', 1] },
            { text: 'INSERT INTO "engine_sql_t" VALUES ($1, $2)', values: ['d', 2] },
          ],
          { commit: true },
        );
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await count()).toBe(0);
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        sql.$transaction((tx) => batchOf(tx).$batchUnsafe([{ text: 'INSERT INTO "engine_sql_t" VALUES ($1, $2)', values: [`e${i}`, i] }], { commit: true })),
      ),
    );
    expect(await count()).toBe(6);
  });

  test('a parameter that is not a string, number, bigint, boolean or null, or a missing one, is refused before anything is sent', () => {
    expect(() => inlineParameters('SELECT $1', [{ a: 1 }])).toThrow(/\$1 of a batched statement: strings, numbers/);
    expect(() => inlineParameters('SELECT $1, $2', ['x'])).toThrow(/\$2 of a batched statement has no value/);
    expect(() => inlineParameters('SELECT $1', [Number.NaN])).toThrow(/\$1/);
    expect(inlineParameters('SELECT $1, $2, $3, $4', [null, true, -3, "o'k"])).toBe(`SELECT NULL, TRUE, (-3), 'o''k'`);
  });
});
