// Real processes for the fault suites (issue 29 item 4; docs/operations.md "Failure
// behaviour"): each service's main.ts under node + tsx, a Redis and (for the PostgreSQL
// restart) a PostgreSQL cluster of the suite's own, so stopping them never disturbs the
// shared ones other suites use.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePortBelowEphemeral, waitFor } from '@selfstack/testing';

const run = promisify(execFile);
export const ROOT = path.resolve(__dirname, '../..');

export type ServiceName = 'secrets' | 'scheduler' | 'boxes' | 'registry';

export interface ServiceProcess {
  name: ServiceName;
  port: number;
  url: string;
  /** Everything the process wrote to stdout and stderr, across restarts. */
  output(): string;
  /** Resolves when /healthz (secrets: sys/seal-status) answers. */
  ready(timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the process again on the same port with the same environment. */
  restart(): Promise<void>;
}

const probePath = (name: ServiceName) => (name === 'secrets' ? '/v1/sys/seal-status' : '/healthz');

export async function startService(name: ServiceName, env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePortBelowEphemeral();
  const url = `http://127.0.0.1:${port}`;
  let out = '';
  let child: ChildProcess | undefined;
  const base: Record<string, string> = {};
  // Nothing of this test's own environment leaks in but the basics (PATH, HOME, ...).
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(REDIS_URL|DATABASE_URL|LOG_LEVEL|PORT|HOST)$/.test(k)) base[k] = v;
  const launch = () => {
    child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'services', name, 'src', 'main.ts')], {
      cwd: ROOT,
      env: { ...base, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  };
  launch();
  const svc: ServiceProcess = {
    name,
    port,
    url,
    output: () => out,
    async ready(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child && (child.exitCode !== null || child.signalCode !== null)) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}); output:\n${out}`);
        if (await fetch(url + probePath(name)).then((r) => r.status < 500, () => false)) return;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${name} on ${port}; output:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async kill(signal = 'SIGKILL') {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill(signal);
      });
    },
    async restart() {
      await svc.kill();
      launch();
      await svc.ready();
    },
  };
  return svc;
}

export async function stopAll(services: readonly (ServiceProcess | undefined)[]): Promise<void> {
  await Promise.all(services.map((s) => s?.kill()));
}

// --- a private Redis ---------------------------------------------------------------------

export interface PrivateRedis {
  port: number;
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Runs redis-cli against it. */
  cli(...args: string[]): Promise<string>;
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => s.write('PING\r\n'));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    s.once('error', () => resolve(false));
  });
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePortBelowEphemeral();
  let proc: ChildProcess | undefined;
  const r: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor('private redis up', async () => ((await redisAnswers(port)) ? true : undefined), 10_000, 50);
    },
    async stop() {
      const p = proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        p.once('exit', () => resolve());
        p.kill('SIGKILL');
      });
      await waitFor('private redis down', async () => ((await redisAnswers(port)) ? undefined : true), 10_000, 50);
    },
    async cli(...args) {
      return (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
    },
  };
  await r.start();
  return r;
}

// --- a private PostgreSQL cluster -----------------------------------------------------------

export interface PrivateCluster {
  port: number;
  /** URL of database `name` on this cluster. */
  url(name: string): string;
  /** pg_ctl restart -m fast: every connection is closed, the server comes back. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

async function pgBin(): Promise<string> {
  const { stdout } = await run('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1']);
  const dir = stdout.trim();
  if (!dir) throw new Error('no PostgreSQL binaries in /usr/lib/postgresql/*/bin');
  return dir;
}

/** initdb refuses to run as root: run the cluster as the postgres user then. */
async function asClusterUser(bin: string, args: string[]): Promise<string> {
  const cmd = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const { stdout } = await run(cmd[0] as string, cmd[1] as string[], { timeout: 60_000 });
  return stdout;
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const bin = await pgBin();
  const port = await freePortBelowEphemeral();
  const dir = await mkdtemp(path.join(tmpdir(), 'faults-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'log');
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  await asClusterUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const ctl = (...args: string[]) => asClusterUser(path.join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', ...args]);
  const c: PrivateCluster = {
    port,
    url: (name) => `postgresql://postgres@127.0.0.1:${port}/${name}`,
    restart: async () => void (await ctl('-m', 'fast', '-o', opts, 'restart')),
    stop: async () => void (await ctl('-m', 'fast', 'stop')),
    start: async () => void (await ctl('-o', opts, 'start')),
    async destroy() {
      await ctl('-m', 'immediate', 'stop').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  await c.start();
  return c;
}

/** Runs the project's migrations on `url` (the same runner `make migrate` uses). */
export async function migrateDatabase(url: string): Promise<void> {
  await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'libs/db/src/migrate-cli.ts')], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url }, timeout: 120_000 });
}

// --- HTTP helpers --------------------------------------------------------------------------

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export async function call(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<Answer> {
  const { timeoutMs, ...rest } = init;
  const res = await fetch(url, { ...rest, signal: AbortSignal.timeout(timeoutMs ?? 30_000) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const jsonBody = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  body: JSON.stringify(body),
  headers: { 'Content-Type': 'application/json', ...headers },
});
