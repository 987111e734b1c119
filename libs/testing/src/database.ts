// One database per integration test file, cloned from the migrated template
// (docs/architecture.md, "Tests"). Cloning takes a fraction of a second, so every file
// starts from exactly the migrated schema with no data, and files never see each other.
import { randomBytes } from 'node:crypto';
import { defaultMigrationsDir } from '@selfstack/db';
import { testAdminDatabaseUrl, withDatabase } from './env';
import { ensureTemplateDatabase, TEST_DATABASE_PREFIX, dropDatabase, quoteIdent, retryWhileBusy, setMarker, withAdminClient } from './template';

/** Set by the jest globalSetup for its workers. */
export const TEMPLATE_ENV_VAR = 'SELFSTACK_TEST_TEMPLATE_DB';

export interface TestDatabase {
  /** postgresql:// URL of the new database. */
  url: string;
  name: string;
  /** Drops the database, ending any connection still open. Safe to call twice. */
  drop(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  /** Server URL; defaults to TEST_DATABASE_URL, DATABASE_URL, then the local default. */
  adminUrl?: string;
  /** Template to clone; defaults to the one globalSetup prepared (built on demand if absent). */
  template?: string;
  /** An empty database (cloned from template0) instead of the migrated one: for migration tests. */
  empty?: boolean;
}

export function uniqueTestDatabaseName(): string {
  // Time first so names sort by age; pid and randomness keep parallel workers apart.
  return `${TEST_DATABASE_PREFIX}${Date.now().toString(36)}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function createTestDatabase(options: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = options.adminUrl ?? testAdminDatabaseUrl();
  const template = options.empty
    ? 'template0' // nobody can connect to template0, so cloning it never finds it busy
    : options.template ??
    process.env[TEMPLATE_ENV_VAR] ??
    // Outside jest's globalSetup (a script, a REPL), prepare the template here.
    (await ensureTemplateDatabase({ adminUrl, migrationsDir: defaultMigrationsDir() }));
  const name = uniqueTestDatabaseName();
  await withAdminClient(adminUrl, async (client) => {
    await retryWhileBusy(() => client.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`));
    await setMarker(client, name, 'test-database');
  });
  let dropped = false;
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withAdminClient(adminUrl, (client) => dropDatabase(client, name));
    },
  };
}
