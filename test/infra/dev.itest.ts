// The embedded-PostgreSQL half of `make dev` (scripts/dev-postgres.ts + dev-migrate.ts):
// a fresh cluster in a temp dir, migrations, a real connection, a clean stop. Runs as
// root here, which exercises the unprivileged-user path that Postgres requires.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../scripts/dev-postgres';
import { runMigrations } from '../../scripts/dev-migrate';
import { freePortBelowEphemeral } from './free-ports';

const ROOT = resolve(__dirname, '..', '..');
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function portOpen(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      r(true);
    });
    s.once('error', () => r(false));
  });
}

describe('make dev: embedded PostgreSQL', () => {
  // mkdtemp makes a 0700 dir; the unprivileged Postgres user must be able to enter it.
  const base = mkdtempSync(join(tmpdir(), 'selfstack-dev-'));
  chmodSync(base, 0o755);
  const dataDir = join(base, 'postgres');
  let pg: EmbeddedPostgres | undefined;
  const logs: string[] = [];

  afterAll(async () => {
    await pg?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it('initialises, starts, creates the database and applies every migration', async () => {
    pg = await startEmbeddedPostgres({ dataDir, database: 'selfstack_dev', port: await freePortBelowEphemeral(), log: (l) => logs.push(l), settings: { fsync: 'off' } });
    expect(pg.url).toBe(`postgresql://postgres@127.0.0.1:${pg.port}/selfstack_dev`);
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    if (isRoot) expect(pg.runAs?.uid).not.toBe(0);

    const runner = await runMigrations({ root: ROOT, url: pg.url });
    expect(['library', 'cli']).toContain(runner);

    const folders = readdirSync(join(ROOT, 'prisma', 'migrations'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    const client = new Client({ connectionString: pg.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ migration_name: string }>(
        'SELECT migration_name FROM public._prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name',
      );
      expect(rows.map((r) => r.migration_name)).toEqual(folders);
      const user = await client.query<{ u: string }>('SELECT current_user AS u');
      expect(user.rows[0]?.u).toBe('postgres');
    } finally {
      await client.end();
    }
  });

  it('stops cleanly, then restarts on the same data directory without re-initialising', async () => {
    const port = pg!.port;
    await pg!.stop();
    expect(await portOpen(port)).toBe(false);
    expect(existsSync(join(dataDir, 'postmaster.pid'))).toBe(false);

    logs.length = 0;
    pg = await startEmbeddedPostgres({ dataDir, database: 'selfstack_dev', port: await freePortBelowEphemeral(), log: (l) => logs.push(l), settings: { fsync: 'off' } });
    expect(logs.some((l) => l.includes('initialising a new PostgreSQL cluster'))).toBe(false);
    expect(logs.some((l) => l.includes('created database'))).toBe(false);
    // Migrating an up-to-date database is a no-op, not an error.
    await runMigrations({ root: ROOT, url: pg.url });
    await pg.stop();
    pg = undefined;
  });

  (isRoot ? it : it.skip)('as root, names a parent directory the Postgres user cannot enter', async () => {
    const locked = join(base, 'locked');
    mkdirSync(locked, { mode: 0o700 });
    chmodSync(locked, 0o700);
    await expect(startEmbeddedPostgres({ dataDir: join(locked, 'pg'), database: 'x', port: 0 })).rejects.toThrow(
      `cannot enter ${locked} (mode 700)`,
    );
  });
});
