// Migration runner that needs no native Prisma schema engine (the CLI cannot download it
// here, and production images should not carry it). It keeps `_prisma_migrations` exactly
// as `prisma migrate deploy` does, so either tool can take over from the other. Behaviour
// mirrors prisma-engines `schema-engine/core/src/commands/apply_migrations.rs`,
// `sql_migration_persistence.rs`, `flavour/postgres.rs` and `checksum.rs`.
//
// Deliberate differences from `migrate deploy`:
// - each migration.sql runs inside BEGIN/COMMIT together with the row's success update,
//   so a failed script leaves no half-applied schema behind (Prisma relies on Postgres'
//   implicit transaction for a multi-statement simple query, which is the same thing
//   unless the script itself says BEGIN/COMMIT — ours must not);
// - an applied migration whose file changed is an error (deploy ignores it);
// - waiting for the advisory lock defaults to 60 s instead of Prisma's 10 s, because
//   replicas that start together wait for the first one to finish migrating.
import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Client, DatabaseError } from 'pg';
import { silentDbLogger, type DbLogger } from './logger';

/** Prisma Migrate's advisory lock key ("a unique number we chose to identify Migrate"). */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;
export const MIGRATIONS_TABLE = '_prisma_migrations';

export type MigrationErrorCode =
  | 'MISSING_SCRIPT'
  | 'PROVIDER_MISMATCH'
  | 'FAILED_MIGRATION'
  | 'CHECKSUM_MISMATCH'
  | 'APPLY_FAILED'
  | 'LOCK_TIMEOUT'
  | 'NOT_FAILED';

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    /** The migrations the error is about. */
    readonly migrationNames: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface MigrationFolder {
  /** Folder name, `<timestamp>_<name>`: the `migration_name` column. */
  name: string;
  /** Absolute path of migration.sql. */
  file: string;
  script: string;
  /** Lowercase hex SHA-256 of the script bytes. */
  checksum: string;
}

export interface MigrationRow {
  id: string;
  checksum: string;
  finishedAt: Date | null;
  migrationName: string;
  logs: string | null;
  rolledBackAt: Date | null;
  startedAt: Date;
  appliedStepsCount: number;
}

export interface MigrateOptions {
  url: string;
  migrationsDir: string;
  logger?: DbLogger;
  /** How long to wait for another runner's advisory lock. Default 60 000 ms. */
  lockTimeoutMs?: number;
}

export interface MigrateResult {
  /** Migrations applied by this run, in order. */
  applied: string[];
  /** Migrations that were already applied before this run. */
  alreadyApplied: string[];
}

/** Lowercase hex SHA-256, as Prisma's `render_checksum` (zero-padded bytes). */
export function migrationChecksum(script: string | Buffer): string {
  return createHash('sha256').update(script).digest('hex');
}

/**
 * Whether a script matches a recorded checksum, as Prisma's `script_matches_checksum`:
 * line endings are ignored (git may convert them) and old non-zero-padded checksums
 * (prisma-engines#1887) are accepted.
 */
export function checksumMatches(script: string, recorded: string): boolean {
  const variants = [script, script.replace(/\r\n/g, '\n'), script.replace(/\n/g, '\r\n')];
  return variants.some((variant) => {
    const digest = createHash('sha256').update(variant).digest();
    const rendered = recorded.length !== 0 && recorded.length !== 64
      ? Array.from(digest, (byte) => byte.toString(16)).join('')
      : digest.toString('hex');
    return rendered === recorded;
  });
}

/**
 * Reads the migrations folder as the Prisma CLI does: every sub-directory is a migration,
 * sorted by name with `localeCompare`, its script is `migration.sql` read as UTF-8.
 */
export async function listMigrations(migrationsDir: string): Promise<MigrationFolder[]> {
  await checkLockfile(migrationsDir);
  const entries = await fs.readdir(migrationsDir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort((a, b) => a.localeCompare(b));
  const folders: MigrationFolder[] = [];
  for (const name of names) {
    const file = path.join(migrationsDir, name, 'migration.sql');
    let script: string;
    try {
      script = await fs.readFile(file, 'utf8');
    } catch (err) {
      throw new MigrationError('MISSING_SCRIPT', `Migration folder ${name} has no readable migration.sql (${file}).`, [name], { cause: err });
    }
    folders.push({ name, file, script, checksum: migrationChecksum(script) });
  }
  return folders;
}

// Prisma refuses to apply migrations written for another provider (P3019).
async function checkLockfile(migrationsDir: string): Promise<void> {
  let content: string;
  try {
    content = await fs.readFile(path.join(migrationsDir, 'migration_lock.toml'), 'utf8');
  } catch {
    return; // Prisma treats a missing lock file as "no opinion".
  }
  const line = content.split('\n').find((l) => l.startsWith('provider'));
  const provider = line ? line.replace(/^provider = /, '').trim().replace(/^"|"$/g, '') : '<PROVIDER NOT FOUND>';
  if (provider !== 'postgresql') {
    throw new MigrationError('PROVIDER_MISMATCH', `migration_lock.toml says provider "${provider}", but this runner applies PostgreSQL migrations.`);
  }
}

/** The schema holding `_prisma_migrations`: Prisma uses the URL's `schema` parameter, default public. */
export function migrationsSchemaFromUrl(url: string): string {
  return schemaParam(url) ?? 'public';
}

function schemaParam(url: string): string | null {
  try {
    return new URL(url).searchParams.get('schema');
  } catch {
    return null;
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url, application_name: 'selfstack-migrate' });
  await client.connect();
  // Prisma runs migration scripts with the URL's `schema` as search_path; so do we.
  const schema = schemaParam(url);
  if (schema) await client.query(`SET search_path TO ${quoteIdent(schema)}`);
  // Notices from `CREATE SCHEMA IF NOT EXISTS` and friends are expected; keep them quiet.
  client.on('notice', () => undefined);
  return client;
}

async function acquireLock(client: Client, timeoutMs: number): Promise<void> {
  // statement_timeout bounds the wait without polling; it is reset right after.
  await client.query(`SELECT set_config('statement_timeout', $1, false)`, [String(timeoutMs)]);
  try {
    await client.query(`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK_KEY})`);
  } catch (err) {
    if (err instanceof DatabaseError && err.code === '57014') {
      throw new MigrationError('LOCK_TIMEOUT', `Timed out after ${timeoutMs} ms waiting for the migration advisory lock ${PRISMA_MIGRATE_LOCK_KEY}: another migration run holds it.`, [], { cause: err });
    }
    throw err;
  } finally {
    await client.query(`SELECT set_config('statement_timeout', '0', false)`).catch(() => undefined);
  }
}

async function ensureMigrationsTable(client: Client, table: string): Promise<void> {
  const { rows } = await client.query<{ exists: string | null }>(`SELECT to_regclass($1)::text AS exists`, [table]);
  if (rows[0]?.exists) return;
  // Prisma's DDL, verbatim apart from the schema qualification (Prisma relies on the
  // connection's search_path, which is the same schema).
  await client.query(`CREATE TABLE ${table} (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`);
}

async function loadRows(client: Client, table: string): Promise<MigrationRow[]> {
  const { rows } = await client.query<{
    id: string; checksum: string; finished_at: Date | null; migration_name: string; logs: string | null;
    rolled_back_at: Date | null; started_at: Date; applied_steps_count: number;
  }>(`SELECT id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count
        FROM ${table} ORDER BY started_at ASC`);
  return rows.map((r) => ({
    id: r.id,
    checksum: r.checksum,
    finishedAt: r.finished_at,
    migrationName: r.migration_name,
    logs: r.logs,
    rolledBackAt: r.rolled_back_at,
    startedAt: r.started_at,
    appliedStepsCount: r.applied_steps_count,
  }));
}

function failedMigrationsError(failed: MigrationRow[]): MigrationError {
  // Wording follows Prisma's P3009 (FoundFailedMigrations).
  const details = failed.map((row) => {
    const logs = row.logs?.trim() ? ` with the following logs:\n${row.logs.trim()}` : '';
    return `The \`${row.migrationName}\` migration started at ${row.startedAt.toISOString()} failed${logs}`;
  });
  return new MigrationError(
    'FAILED_MIGRATION',
    `Found failed migrations in the target database; new migrations will not be applied.\n${details.join('\n')}\n` +
      'Each migration runs in a transaction, so a failed one left no changes behind: fix it, then mark it rolled back ' +
      '(`npx tsx libs/db/src/migrate-cli.ts --rolled-back <name>` or `prisma migrate resolve --rolled-back <name>`) and migrate again.',
    failed.map((r) => r.migrationName),
  );
}

function describeDbError(err: unknown, script: string): string {
  if (!(err instanceof DatabaseError)) return err instanceof Error ? err.message : String(err);
  let where = '';
  const position = err.position ? Number(err.position) : NaN;
  if (Number.isFinite(position)) {
    const before = script.slice(0, position - 1);
    const lineNumber = before.split('\n').length;
    const line = script.split('\n')[lineNumber - 1] ?? '';
    where = `\n\nPosition:\n${String(lineNumber).padStart(3)} ${line}`;
  }
  return `Database error code: ${err.code ?? 'none'}\n\nDatabase error:\n${err.message}${where}`;
}

/**
 * Applies every migration in `migrationsDir` not yet recorded in `_prisma_migrations`,
 * holding Prisma's advisory lock so concurrent runners serialise.
 */
export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
  const logger = options.logger ?? silentDbLogger;
  const folders = await listMigrations(options.migrationsDir);
  const table = `${quoteIdent(migrationsSchemaFromUrl(options.url))}.${quoteIdent(MIGRATIONS_TABLE)}`;
  const client = await connect(options.url);
  try {
    await acquireLock(client, options.lockTimeoutMs ?? 60_000);
    try {
      await ensureMigrationsTable(client, table);
      const rows = await loadRows(client, table);

      const failed = rows.filter((r) => r.finishedAt === null && r.rolledBackAt === null);
      if (failed.length > 0) throw failedMigrationsError(failed);

      const live = rows.filter((r) => r.rolledBackAt === null);
      const changed = folders.filter((f) => {
        const recorded = live.filter((r) => r.migrationName === f.name);
        return recorded.length > 0 && !recorded.some((r) => checksumMatches(f.script, r.checksum));
      });
      if (changed.length > 0) {
        const names = changed.map((f) => f.name);
        throw new MigrationError(
          'CHECKSUM_MISMATCH',
          `The migration file(s) ${names.join(', ')} changed after being applied (checksum differs from _prisma_migrations). ` +
            'Applied migrations are immutable: restore the file and write a new migration instead.',
          names,
        );
      }
      const known = new Set(folders.map((f) => f.name));
      for (const row of live) {
        if (!known.has(row.migrationName)) {
          logger.warn('applied migration missing from the migrations folder', { migration: row.migrationName });
        }
      }

      const appliedNames = new Set(live.map((r) => r.migrationName));
      const alreadyApplied = folders.filter((f) => appliedNames.has(f.name)).map((f) => f.name);
      const pending = folders.filter((f) => !appliedNames.has(f.name));
      const applied: string[] = [];
      for (const folder of pending) {
        await applyOne(client, table, folder, logger);
        applied.push(folder.name);
      }
      return { applied, alreadyApplied };
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK_KEY})`).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function applyOne(client: Client, table: string, folder: MigrationFolder, logger: DbLogger): Promise<void> {
  logger.info('applying migration', { migration: folder.name });
  const id = randomUUID();
  // Like Prisma's record_migration_started: committed on its own, before the script, so
  // a crash mid-script leaves a visible "started, never finished" row.
  await client.query(`INSERT INTO ${table} (id, checksum, started_at, migration_name) VALUES ($1, $2, $3, $4)`, [
    id,
    folder.checksum,
    new Date(),
    folder.name,
  ]);
  try {
    await client.query('BEGIN');
    // No parameters: node-postgres sends a simple query, so the file may hold many statements.
    await client.query(folder.script);
    // record_successful_step then record_migration_finished, inside the same transaction
    // so "applied" and "recorded as applied" cannot diverge.
    await client.query(`UPDATE ${table} SET applied_steps_count = applied_steps_count + 1 WHERE id = $1`, [id]);
    await client.query(`UPDATE ${table} SET finished_at = $2 WHERE id = $1`, [id, new Date()]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const logs = `Migration name: ${folder.name}\n\n${describeDbError(err, folder.script)}`;
    // record_failed_step: the row stays unfinished, so every later run refuses to proceed.
    await client.query(`UPDATE ${table} SET logs = $2 WHERE id = $1`, [id, logs]).catch(() => undefined);
    logger.error('migration failed', { migration: folder.name, detail: logs });
    throw new MigrationError('APPLY_FAILED', `Migration ${folder.name} failed to apply (rolled back).\n${logs}`, [folder.name], { cause: err });
  }
  logger.info('applied migration', { migration: folder.name });
}

/**
 * Marks a failed migration as rolled back, like `prisma migrate resolve --rolled-back`,
 * so the next run applies it again.
 */
export async function markMigrationRolledBack(options: { url: string; migrationName: string }): Promise<void> {
  const table = `${quoteIdent(migrationsSchemaFromUrl(options.url))}.${quoteIdent(MIGRATIONS_TABLE)}`;
  const client = await connect(options.url);
  try {
    const result = await client.query(
      `UPDATE ${table} SET rolled_back_at = $2 WHERE migration_name = $1 AND finished_at IS NULL AND rolled_back_at IS NULL`,
      [options.migrationName, new Date()],
    );
    if (result.rowCount === 0) {
      throw new MigrationError('NOT_FAILED', `Migration ${options.migrationName} is not in a failed state; nothing to mark rolled back.`, [options.migrationName]);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Reads `_prisma_migrations` (empty when the table does not exist yet). */
export async function readMigrationRows(url: string): Promise<MigrationRow[]> {
  const table = `${quoteIdent(migrationsSchemaFromUrl(url))}.${quoteIdent(MIGRATIONS_TABLE)}`;
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ exists: string | null }>(`SELECT to_regclass($1)::text AS exists`, [table]);
    if (!rows[0]?.exists) return [];
    return await loadRows(client, table);
  } finally {
    await client.end().catch(() => undefined);
  }
}
