// The engine's own pool (src/engine/sql-writes.store.ts) against a real database: it must
// behave as the Prisma client it stands in for wherever the engine and libs/state use it
// (results, transactions, timeouts), and refuse the model API it does not have.
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { createEngineSql, type EngineSql } from '../src/engine/sql-writes.store';

let db: TestDatabase;
let sql: EngineSql;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = createEngineSql({ databaseUrl: db.url, max: 3 });
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
