// Drift test (docs/architecture.md, "Database"): the hand-written migrations must create
// exactly what prisma/schema declares. On failure the message lists every difference,
// naming the model/field and what differs.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { Client } from 'pg';
import {
  compareSchema,
  datamodelFromFiles,
  datasourceSchemas,
  formatDifferences,
  readDatabaseSnapshot,
  readSchemaFiles,
  type Difference,
} from '../src/drift';
import { defaultMigrationsDir, defaultSchemaDir, migrate } from '../src/index';

// jest.config.js sets testTimeout inside the integration project, where jest ignores it
// (it is a global option); database drops wait for a checkpoint and can take seconds on
// a busy server, so this file sets its own.
jest.setTimeout(60_000);

async function snapshotOf(url: string, schemas: string[]) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await readDatabaseSnapshot(client, schemas);
  } finally {
    await client.end();
  }
}

function expectNoDrift(diffs: Difference[]): void {
  if (diffs.length > 0) {
    throw new Error(`The migrated database differs from the Prisma schema:\n${formatDifferences(diffs)}\n` +
      'Fix the migration (or the schema); libs/db/README.md shows the SQL Prisma would write.');
  }
}

// Indexes Prisma's schema language cannot express, created by hand in a migration. Each
// entry says where it comes from and why; everything else must match exactly.
const INDEXES_PRISMA_CANNOT_EXPRESS = [
  // 20261122004000_registry: GIN index over a weighted tsvector expression (full-text search).
  'modules_search_idx',
  // 20261127000000_scheduler_engine: partial indexes over open evaluations and live allocations.
  'evaluations_open_idx',
  'evaluations_pending_ready_idx',
  'allocations_live_node_idx',
];

describe('drift between prisma/schema and prisma/migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('the migrated database matches every model, field, key, index and relation', async () => {
    await migrate({ url: db.url, migrationsDir: defaultMigrationsDir() });
    const files = await readSchemaFiles(defaultSchemaDir());
    const datamodel = datamodelFromFiles(files);
    const schemas = datasourceSchemas(files);
    expect(schemas).toEqual(expect.arrayContaining(['public', 'secrets', 'scheduler', 'boxes', 'registry', 'controller']));
    expectNoDrift(compareSchema(datamodel, await snapshotOf(db.url, schemas), { schemas, ignoreIndexes: INDEXES_PRISMA_CANNOT_EXPRESS, checkNames: true }));
  });
});

describe('drift checker against a real database', () => {
  const fixtureDir = path.join(__dirname, 'fixtures', 'drift');
  let db: TestDatabase;
  let client: Client;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(await fs.readFile(path.join(fixtureDir, 'migration.sql'), 'utf8'));
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('accepts Prisma-style SQL for every column type, key and relation the fixture uses', async () => {
    const files = await readSchemaFiles(fixtureDir);
    const diffs = compareSchema(datamodelFromFiles(files), await readDatabaseSnapshot(client, ['drift_a']), { schemas: ['drift_a'], checkNames: true });
    expectNoDrift(diffs);
  });

  it('reports what the database gets wrong, naming model and field', async () => {
    await client.query('BEGIN');
    try {
      await client.query(`
        ALTER TABLE "drift_a"."parents" ALTER COLUMN "v" TYPE VARCHAR(50);
        ALTER TABLE "drift_a"."parents" ALTER COLUMN "f" DROP NOT NULL;
        ALTER TABLE "drift_a"."parents" ALTER COLUMN "big" DROP DEFAULT;
        ALTER TABLE "drift_a"."parents" ADD COLUMN "extra" TEXT;
        ALTER TABLE "drift_a"."parents" DROP COLUMN "seenAt";
        DROP INDEX "drift_a"."Kid_parentId_idx";
        CREATE INDEX "Kid_uid_idx" ON "drift_a"."Kid"("uid");
        ALTER TABLE "drift_a"."Kid" DROP CONSTRAINT "Kid_parentId_fkey";
        ALTER TABLE "drift_a"."Kid" ADD CONSTRAINT "Kid_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "drift_a"."parents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
        ALTER TYPE "drift_a"."colour" ADD VALUE 'blue';
        CREATE TABLE "drift_a"."Stray" ("id" INTEGER);
      `);
      const files = await readSchemaFiles(fixtureDir);
      const diffs = compareSchema(datamodelFromFiles(files), await readDatabaseSnapshot(client, ['drift_a']), { schemas: ['drift_a'] });
      const text = formatDifferences(diffs);
      expect(diffs).toEqual(
        expect.arrayContaining([
          { subject: 'Parent.v', message: 'column v has type character varying(50), the schema expects character varying(40)' },
          { subject: 'Parent.f', message: 'column f is nullable, the schema expects NOT NULL' },
          expect.objectContaining({ subject: 'Parent.big', message: expect.stringContaining('has no DEFAULT') }),
          expect.objectContaining({ subject: 'Parent', message: expect.stringContaining('column drift_a.parents.extra exists in the database but not in the schema') }),
          expect.objectContaining({ subject: 'Parent.seenAt', message: expect.stringContaining('does not exist') }),
          expect.objectContaining({ subject: 'Kid', message: 'index on (parentId) does not exist in table drift_a.Kid' }),
          expect.objectContaining({ subject: 'Kid', message: expect.stringContaining('index Kid_uid_idx on (uid) exists in the database but not in the schema') }),
          expect.objectContaining({ subject: 'Kid.parent', message: expect.stringContaining('ON DELETE Restrict, the schema expects onDelete: Cascade') }),
          expect.objectContaining({ subject: 'enum Color', message: expect.stringContaining('blue') }),
          expect.objectContaining({ subject: 'drift_a.Stray', message: expect.stringContaining('no model maps to it') }),
        ]),
      );
      expect(diffs).toHaveLength(10);
      expect(text).toContain('- Parent.v: column v has type');
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
