// The migrated template database every integration test file clones
// (docs/architecture.md, "Tests"). Its name carries a hash of the migrations folder, so a
// changed or added migration builds a fresh template while unchanged ones are reused
// across jest runs. Building happens under an advisory lock: concurrent jest runs (several
// engineers or agents sharing one server) wait for one builder instead of clashing.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { migrate } from '@selfstack/db';
import { Client, DatabaseError } from 'pg';
import { withDatabase } from './env';

export const TEMPLATE_PREFIX = 'selfstack_tpl_';
export const TEST_DATABASE_PREFIX = 'selfstack_t_';
const BUILD_PREFIX = 'selfstack_tplbuild_';
/** Arbitrary advisory-lock key for template builds; distinct from Prisma Migrate's 72707369. */
export const TEMPLATE_LOCK_KEY = 731_200_001;
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

/** Marker stored as the database comment: who made it and when (Postgres records no creation time). */
interface DatabaseMarker {
  selfstack: 'test-template' | 'test-database';
  createdAt: string;
}

export async function hashMigrationsDir(migrationsDir: string): Promise<string> {
  const hash = createHash('sha256');
  const files = await listFiles(migrationsDir);
  for (const rel of files) {
    // Path and content both count: renaming a folder changes the migration name.
    hash.update(`${rel}\0`);
    hash.update(await fs.readFile(path.join(migrationsDir, rel)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

async function listFiles(root: string, rel = ''): Promise<string[]> {
  const entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(root, child)));
    else if (e.isFile()) out.push(child);
  }
  return out;
}

export function templateNameForHash(hash: string): string {
  return `${TEMPLATE_PREFIX}${hash.slice(0, 16)}`;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export async function withAdminClient<T>(adminUrl: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl, application_name: 'selfstack-testing' });
  client.on('error', () => undefined);
  client.on('notice', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Runs `fn`, retrying while Postgres says a database "is being accessed by other users"
 * (SQLSTATE 55006): a backend that just disconnected may still be exiting.
 */
export async function retryWhileBusy<T>(fn: () => Promise<T>, attempts = 50, delayMs = 100): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof DatabaseError && err.code === '55006') || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

export async function setMarker(client: Client, database: string, kind: DatabaseMarker['selfstack']): Promise<void> {
  const marker: DatabaseMarker = { selfstack: kind, createdAt: new Date().toISOString() };
  await client.query(`COMMENT ON DATABASE ${quoteIdent(database)} IS ${quoteLiteral(JSON.stringify(marker))}`);
}

export async function databaseExists(client: Client, database: string): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  return (rowCount ?? 0) > 0;
}

export async function dropDatabase(client: Client, database: string): Promise<void> {
  // FORCE (PostgreSQL 13+) ends connections a test forgot to close (a Prisma pool, say).
  await retryWhileBusy(() => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`));
}

export interface EnsureTemplateOptions {
  adminUrl: string;
  migrationsDir: string;
  /** Reports what happened (built, reused, dropped stale databases). */
  log?: (message: string) => void;
}

/** Creates the template for the current migrations if missing; returns its name. */
export async function ensureTemplateDatabase(options: EnsureTemplateOptions): Promise<string> {
  const log = options.log ?? (() => undefined);
  const hash = await hashMigrationsDir(options.migrationsDir);
  const template = templateNameForHash(hash);
  // Unique per call: advisory locks are per database, so two runs whose admin URLs name
  // different databases do not exclude each other and must not share a build database.
  const build = `${BUILD_PREFIX}${hash.slice(0, 16)}_${randomBytes(4).toString('hex')}`;
  return withAdminClient(options.adminUrl, async (client) => {
    await client.query(`SELECT pg_advisory_lock(${TEMPLATE_LOCK_KEY})`);
    try {
      await dropStaleDatabases(client, template, log);
      if (await databaseExists(client, template)) {
        log(`reusing template database ${template}`);
        return template;
      }
      // Build under another name and rename at the end, so a template that exists is
      // always complete, even after a crash mid-build.
      await client.query(`CREATE DATABASE ${quoteIdent(build)} TEMPLATE template0`);
      try {
        await setMarker(client, build, 'test-template');
        const result = await migrate({ url: withDatabase(options.adminUrl, build), migrationsDir: options.migrationsDir });
        try {
          await retryWhileBusy(() => client.query(`ALTER DATABASE ${quoteIdent(build)} RENAME TO ${quoteIdent(template)}`));
        } catch (err) {
          // A run holding the lock in another database won the race: 42P04 duplicate_database
          // when its rename had committed before ours looked, 23505 (the catalog's unique
          // index on datname) when both renames ran at the same moment.
          if (!(err instanceof DatabaseError && (err.code === '42P04' || err.code === '23505'))) throw err;
          await dropDatabase(client, build);
          log(`reusing template database ${template} (built concurrently)`);
          return template;
        }
        // Nobody may connect to a template: one stray connection makes every clone fail.
        await client.query(`ALTER DATABASE ${quoteIdent(template)} WITH ALLOW_CONNECTIONS false`);
        await setMarker(client, template, 'test-template');
        log(`built template database ${template} (${result.applied.length} migrations)`);
        return template;
      } catch (err) {
        await dropDatabase(client, build).catch(() => undefined);
        throw err;
      }
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${TEMPLATE_LOCK_KEY})`).catch(() => undefined);
    }
  });
}

/**
 * Drops templates of other migration hashes, and test or half-built template databases,
 * that are more than a day old (left behind by crashed runs). Younger ones may belong to
 * a concurrent run.
 */
export async function dropStaleDatabases(client: Client, keepTemplate: string, log: (message: string) => void = () => undefined, now = Date.now()): Promise<string[]> {
  const { rows } = await client.query<{ datname: string; comment: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database
      WHERE datname LIKE $1 OR datname LIKE $2 OR datname LIKE $3`,
    [TEMPLATE_PREFIX, TEST_DATABASE_PREFIX, BUILD_PREFIX].map((prefix) => `${prefix.replace(/_/g, '\\_')}%`),
  );
  const dropped: string[] = [];
  for (const row of rows) {
    if (row.datname === keepTemplate) continue;
    // No marker: a database created a moment ago whose COMMENT is not written yet, or
    // not ours at all. Either way it is left alone.
    const createdAt = parseMarker(row.comment)?.createdAt;
    if (!createdAt || !(now - Date.parse(createdAt) > STALE_AFTER_MS)) continue;
    await dropDatabase(client, row.datname);
    dropped.push(row.datname);
    log(`dropped stale database ${row.datname}`);
  }
  return dropped;
}

function parseMarker(comment: string | null): DatabaseMarker | undefined {
  if (!comment) return undefined;
  try {
    const value = JSON.parse(comment) as Partial<DatabaseMarker>;
    return typeof value.createdAt === 'string' ? (value as DatabaseMarker) : undefined;
  } catch {
    return undefined;
  }
}
