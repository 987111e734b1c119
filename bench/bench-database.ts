// A throwaway, migrated database per benchmark scenario: created next to the bench's
// PostgreSQL (ctx.databaseUrl), dropped when the scenario ends (or when setup fails).
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { defaultMigrationsDir, migrate } from '@selfstack/db';
import { withDatabase } from '@selfstack/testing';

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** One statement on a connection of its own (opened and closed around it): its rows. */
export async function adminQuery<R extends Record<string, unknown> = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(adminUrl: string, label: string): Promise<BenchDatabase> {
  const name = `bench_${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  const db: BenchDatabase = {
    name,
    url: withDatabase(adminUrl, name),
    drop: async () => {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
  try {
    await migrate({ url: db.url, migrationsDir: defaultMigrationsDir() });
  } catch (err) {
    await db.drop();
    throw err;
  }
  return db;
}

/** A positive integer from the environment (scenario sizes), else the fallback. */
export function sizeFromEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
}
