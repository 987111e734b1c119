// Applies prisma/migrations for `make dev` and its tests. Prefers the in-process runner
// from @selfstack/db (`migrate({ url, migrationsDir })`, docs/architecture.md); if that
// package does not export it, shells out to libs/db/src/migrate-cli.ts (`make migrate`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

type MigrateFn = (options: { url: string; migrationsDir: string }) => Promise<unknown>;

function isMissingModule(err: unknown, name: string): boolean {
  const e = err as NodeJS.ErrnoException;
  return (e?.code === 'MODULE_NOT_FOUND' || e?.code === 'ERR_MODULE_NOT_FOUND') && String(e.message).includes(name);
}

async function loadMigrate(): Promise<MigrateFn | undefined> {
  // A variable specifier keeps this file type-checking while libs/db is still being
  // written; the contract is fixed by docs/architecture.md.
  const specifier = '@selfstack/db';
  try {
    const mod = (await import(specifier)) as { migrate?: unknown };
    return typeof mod.migrate === 'function' ? (mod.migrate as MigrateFn) : undefined;
  } catch (err) {
    if (isMissingModule(err, specifier) || isMissingModule(err, 'libs/db/src/index')) return undefined;
    throw err;
  }
}

function runCli(root: string, url: string, log: (line: string) => void): Promise<void> {
  const cli = join(root, 'libs', 'db', 'src', 'migrate-cli.ts');
  if (!existsSync(cli)) {
    return Promise.reject(new Error(`cannot migrate: @selfstack/db exports no migrate() and ${cli} does not exist`));
  }
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', cli], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      for (const line of text.split('\n')) if (line.trim()) log(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolveRun() : reject(new Error(`migrate-cli exited with code ${code ?? 'null'}:\n${output.trim()}`)),
    );
  });
}

/** Applies every migration folder to `url`. Returns which runner did it. */
export async function runMigrations(options: {
  root: string;
  url: string;
  log?: (line: string) => void;
}): Promise<'library' | 'cli'> {
  const log = options.log ?? (() => undefined);
  const migrationsDir = join(options.root, 'prisma', 'migrations');
  const migrate = await loadMigrate();
  if (migrate) {
    const result = await migrate({ url: options.url, migrationsDir });
    const r = result as { applied?: unknown; alreadyApplied?: unknown } | undefined;
    if (Array.isArray(r?.applied) && Array.isArray(r?.alreadyApplied)) {
      log(`${r.applied.length} applied${r.applied.length ? ` (${r.applied.join(', ')})` : ''}, ${r.alreadyApplied.length} already applied`);
    }
    return 'library';
  }
  await runCli(options.root, options.url, log);
  return 'cli';
}
