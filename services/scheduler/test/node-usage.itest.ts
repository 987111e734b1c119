// scheduler.node_usage (migration 20261127151000_scheduler_node_usage): the triggers on
// allocations keep it equal to the sum over live allocations per node, through every kind
// of write the scheduler makes (bulk upserts that insert and update in one statement,
// single-row updates that change a node or a status, deletes, truncate).
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';

let db: TestDatabase;
let pg: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  pg = new Client({ connectionString: db.url });
  await pg.connect();
});

afterAll(async () => {
  await pg.end();
  await db.drop();
});

interface Row {
  id: string;
  node: string;
  desired?: string;
  client?: string;
  cpu?: number;
  mem?: number;
  disk?: number;
}

/** The engine's bulk upsert shape (engine.store.ts upsertAllocs): insert or update, one statement. */
async function upsert(rows: Row[]): Promise<void> {
  await pg.query(
    `INSERT INTO "scheduler"."allocations" ("id", "namespace", "job_id", "node_id", "eval_id", "deployment_id", "data", "create_index", "modify_index", "desired_status", "client_status", "cpu", "memory_mb", "disk_mb")
     SELECT x."id", 'default', 'job', x."node", 'ev', '', '{}'::jsonb, 1, 1, x."desired", x."client", x."cpu", x."mem", x."disk"
     FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "node" text, "desired" text, "client" text, "cpu" int, "mem" int, "disk" int)
     ON CONFLICT ("id") DO UPDATE SET "node_id" = EXCLUDED."node_id", "desired_status" = EXCLUDED."desired_status", "client_status" = EXCLUDED."client_status",
       "cpu" = EXCLUDED."cpu", "memory_mb" = EXCLUDED."memory_mb", "disk_mb" = EXCLUDED."disk_mb"`,
    [JSON.stringify(rows.map((r) => ({ desired: 'run', client: 'pending', cpu: 100, mem: 64, disk: 10, ...r })))],
  );
}

/** node_usage as the engine reads it (allocs > 0), and the same figures summed from allocations. */
async function both(): Promise<{ kept: unknown[]; summed: unknown[] }> {
  const kept = await pg.query(`SELECT "node_id", "cpu"::int AS c, "memory_mb"::int AS m, "disk_mb"::int AS d, "allocs"::int AS n FROM "scheduler"."node_usage" WHERE "allocs" > 0 ORDER BY 1`);
  const summed = await pg.query(
    `SELECT "node_id", SUM("cpu")::int AS c, SUM("memory_mb")::int AS m, SUM("disk_mb")::int AS d, COUNT(*)::int AS n FROM "scheduler"."allocations"
     WHERE "desired_status" = 'run' AND "client_status" NOT IN ('complete', 'failed', 'lost') GROUP BY 1 ORDER BY 1`,
  );
  return { kept: kept.rows, summed: summed.rows };
}

async function expectInStep(expected: unknown[]): Promise<void> {
  const { kept, summed } = await both();
  expect(summed).toEqual(expected);
  expect(kept).toEqual(summed);
}

test('inserts, status changes, moves between nodes, deletes and truncate keep node_usage equal to the live allocations', async () => {
  await upsert([
    { id: 'a1', node: 'n1' },
    { id: 'a2', node: 'n1', cpu: 50 },
    { id: 'a3', node: 'n2' },
    { id: 'a4', node: 'n2', client: 'complete' },
  ]);
  await expectInStep([
    { node_id: 'n1', c: 150, m: 128, d: 20, n: 2 },
    { node_id: 'n2', c: 100, m: 64, d: 10, n: 1 },
  ]);

  // One statement that updates existing rows (stop, client failure, a move) and inserts new ones.
  await upsert([
    { id: 'a1', node: 'n1', desired: 'stop' },
    { id: 'a3', node: 'n3' },
    { id: 'a4', node: 'n2', client: 'running' },
    { id: 'a5', node: 'n3', client: 'failed' },
    { id: 'a6', node: 'n1', mem: 1000 },
  ]);
  await expectInStep([
    { node_id: 'n1', c: 150, m: 1064, d: 20, n: 2 },
    { node_id: 'n2', c: 100, m: 64, d: 10, n: 1 },
    { node_id: 'n3', c: 100, m: 64, d: 10, n: 1 },
  ]);

  // Single-row updates as the model API writes them (client status reports).
  await pg.query(`UPDATE "scheduler"."allocations" SET "client_status" = 'lost' WHERE "id" = 'a3'`);
  await pg.query(`UPDATE "scheduler"."allocations" SET "client_status" = 'running' WHERE "id" = 'a5'`);
  await expectInStep([
    { node_id: 'n1', c: 150, m: 1064, d: 20, n: 2 },
    { node_id: 'n2', c: 100, m: 64, d: 10, n: 1 },
    { node_id: 'n3', c: 100, m: 64, d: 10, n: 1 },
  ]);

  await pg.query(`DELETE FROM "scheduler"."allocations" WHERE "node_id" = 'n1'`);
  await expectInStep([
    { node_id: 'n2', c: 100, m: 64, d: 10, n: 1 },
    { node_id: 'n3', c: 100, m: 64, d: 10, n: 1 },
  ]);

  // A rolled-back write leaves no trace.
  await pg.query('BEGIN');
  await upsert([{ id: 'b1', node: 'n2', cpu: 7 }]);
  await pg.query('ROLLBACK');
  await expectInStep([
    { node_id: 'n2', c: 100, m: 64, d: 10, n: 1 },
    { node_id: 'n3', c: 100, m: 64, d: 10, n: 1 },
  ]);

  await pg.query(`TRUNCATE "scheduler"."allocations"`);
  await expectInStep([]);
  await upsert([{ id: 'c1', node: 'n2' }]);
  await expectInStep([{ node_id: 'n2', c: 100, m: 64, d: 10, n: 1 }]);
});
