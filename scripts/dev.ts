// `make dev`: every service in one command on a fresh machine (../shared/ARCHITECTURE.md,
// "Two commands, embedded default").
//
//   - DATABASE_URL unset -> embedded PostgreSQL in .data/postgres (scripts/dev-postgres.ts;
//     as root in a checkout its unprivileged user cannot enter: under /var/tmp, keyed by path)
//   - migrations applied (scripts/dev-migrate.ts)
//   - REDIS_URL unset -> not passed on, so every service uses its in-memory bus
//   - each services/<name>/src/main.ts runs as a child (node --import tsx), output
//     prefixed with its name; services not written yet are reported and skipped
//   - waits for each health endpoint, prints the address table
//   - Ctrl-C / SIGTERM: children get SIGTERM, then Postgres stops, exit 0
//
// Dev-only knobs (not read by services): DEV_PORT_OFFSET (shift every port), DEV_HOST,
// DEV_DATA_DIR, DEV_PG_PORT, DEV_SERVICES (comma list), DEV_HEALTH_TIMEOUT.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { databaseUrlEnv, durationEnv, loadEnv, logLevelEnv, redisUrlEnv, ConfigError } from '@selfstack/config';
import { startEmbeddedPostgres, findFreePort, type EmbeddedPostgres } from './dev-postgres';
import { runMigrations } from './dev-migrate';
import { startDevGateway } from './dev-gateway';
import type { Listener } from '@selfstack/http-kit';
import {
  SERVICE_NAMES,
  formatTable,
  keysFromExisting,
  newControllerKeys,
  partitionExisting,
  planServices,
  portsWithOffset,
  prefixLines,
  renderControllerHcl,
  waitForHealthy,
  type DevService,
} from './dev-services';

const ROOT = resolve(__dirname, '..');

const devEnvSchema = z.object({
  DATABASE_URL: databaseUrlEnv,
  REDIS_URL: redisUrlEnv,
  LOG_LEVEL: logLevelEnv,
  SECRETS_DEV_ROOT_TOKEN: z.string().optional(),
  DEV_PORT_OFFSET: z
    .string()
    .regex(/^\d+$/, { message: 'must be a non-negative integer' })
    .transform(Number)
    .pipe(z.number().max(56_000, { message: 'must keep every port below 65536 (max 56000)' }))
    .default(0),
  DEV_HOST: z.string().min(1).default('127.0.0.1'),
  DEV_DATA_DIR: z.string().min(1).default('.data'),
  DEV_PG_PORT: z.string().regex(/^\d+$/, { message: 'must be a port number' }).transform(Number).default(54329),
  DEV_SERVICES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const names = v.split(',').map((s) => s.trim()).filter(Boolean);
      for (const n of names) {
        if (!(SERVICE_NAMES as readonly string[]).includes(n)) {
          ctx.addIssue({ code: 'custom', message: `unknown service "${n}" (known: ${SERVICE_NAMES.join(', ')})` });
        }
      }
      return names;
    }),
  DEV_HEALTH_TIMEOUT: durationEnv('120s'),
});

const useColor = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const LABEL_WIDTH = 10;
const out = (line: string) => process.stdout.write(line);
const say = (message: string) => out(`${'dev'.padEnd(LABEL_WIDTH)} | ${message}\n`);
const pgLog = (line: string) => out(`${'postgres'.padEnd(LABEL_WIDTH)} | ${line}\n`);

async function portIsFree(port: number): Promise<boolean> {
  return (await findFreePort(port)) === port;
}

interface Running {
  readonly service: DevService;
  readonly child: ChildProcess;
  exit?: string;
  readonly exited: Promise<void>;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // Children run in their own process group (detached) so a terminal Ctrl-C reaches
    // only us; signal the group so anything they spawned goes too.
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

async function main(): Promise<number> {
  let env: z.output<typeof devEnvSchema>;
  try {
    env = loadEnv(devEnvSchema, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const dataDir = isAbsolute(env.DEV_DATA_DIR) ? env.DEV_DATA_DIR : join(ROOT, env.DEV_DATA_DIR);
  const ports = portsWithOffset(env.DEV_PORT_OFFSET);
  const host = env.DEV_HOST;
  const controllerConfigPath = join(dataDir, 'controller.hcl');

  const planned = planServices({ root: ROOT, ports, host, controllerConfigPath, env: process.env, dataDir }).filter(
    (s) => !env.DEV_SERVICES || env.DEV_SERVICES.includes(s.name),
  );
  const { present, missing } = partitionExisting(ROOT, planned);
  for (const s of missing) say(`skipping ${s.name}: ${s.entry} does not exist yet`);
  if (present.length === 0) say('no service has a src/main.ts yet; starting only the database');

  const busy: string[] = [];
  for (const s of present) for (const p of s.ports) if (!(await portIsFree(p))) busy.push(`${s.name}:${p}`);
  if (!(await portIsFree(ports.gateway))) busy.push(`gateway:${ports.gateway}`);
  if (busy.length > 0) {
    process.stderr.write(
      `ports already in use: ${busy.join(', ')}. Stop whatever listens there, or set DEV_PORT_OFFSET=10000 to shift every port.\n`,
    );
    return 1;
  }

  let pg: EmbeddedPostgres | undefined;
  let gateway: Listener | undefined;
  const running: Running[] = [];
  let shuttingDown = false;
  let resolveStopped: (code: number) => void = () => undefined;
  const stopped = new Promise<number>((r) => {
    resolveStopped = r;
  });

  const shutdown = async (code: number, reason: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say(`${reason}: stopping ${running.filter((r) => !r.exit).length} service(s)`);
    if (gateway) await gateway.close().catch(() => undefined);
    for (const r of running) signalGroup(r.child, 'SIGTERM');
    const killTimer = setTimeout(() => {
      for (const r of running) {
        if (!r.exit) say(`${r.service.name} ignored SIGTERM for 15 s; killing it`);
        signalGroup(r.child, 'SIGKILL');
      }
    }, 15_000);
    await Promise.all(running.map((r) => r.exited));
    clearTimeout(killTimer);
    if (pg) {
      say('stopping embedded PostgreSQL');
      await pg.stop();
    }
    say('stopped');
    resolveStopped(code);
  };

  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts += 1;
    if (interrupts > 1) {
      say(`${signal} again: killing everything now`);
      for (const r of running) signalGroup(r.child, 'SIGKILL');
      return;
    }
    void shutdown(0, `received ${signal}`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Last resort if we die unexpectedly: do not leave orphans holding ports.
  process.on('exit', () => {
    for (const r of running) signalGroup(r.child, 'SIGTERM');
    if (pg && pg.pid > 0) {
      try {
        process.kill(pg.pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
  });

  try {
    let databaseUrl = env.DATABASE_URL;
    if (databaseUrl) {
      say(`using DATABASE_URL ${redactUrl(databaseUrl)}`);
    } else {
      say(`DATABASE_URL is unset: starting embedded PostgreSQL in ${join(dataDir, 'postgres')}`);
      pg = await startEmbeddedPostgres({
        dataDir: join(dataDir, 'postgres'),
        port: env.DEV_PG_PORT,
        database: 'selfstack',
        log: pgLog,
      });
      databaseUrl = pg.url;
      if (shuttingDown) {
        // The signal arrived while Postgres was starting; shutdown() did not see it yet.
        await pg.stop();
        return await stopped;
      }
      say(`embedded PostgreSQL ready at ${pg.url}, data in ${pg.dataDir}${pg.runAs ? ` (running as user ${pg.runAs.user})` : ''}`);
    }
    if (shuttingDown) return await stopped;

    const runner = await runMigrations({ root: ROOT, url: databaseUrl, log: (l) => say(`migrate: ${l}`) });
    say(`migrations applied (${runner === 'library' ? '@selfstack/db migrate()' : 'migrate-cli'})`);
    if (env.REDIS_URL) say(`using REDIS_URL ${redactUrl(env.REDIS_URL)}`);
    else say('REDIS_URL is unset: services use their in-memory bus');

    if (present.some((s) => s.name === 'controller')) {
      await mkdir(dataDir, { recursive: true });
      const previous = existsSync(controllerConfigPath) ? await readFile(controllerConfigPath, 'utf8') : undefined;
      const keys = (previous && (await keysFromExisting(previous, controllerConfigPath))) || newControllerKeys();
      await writeFile(controllerConfigPath, renderControllerHcl({ host, ports, keys }), { mode: 0o600 });
    }
    if (shuttingDown) return await stopped;

    // The web console (services/console): built once per start, served at /ui/ by the
    // secrets and scheduler services (dist/console); a failed build is reported and the
    // services answer /ui/ with how to build it.
    const consoleBuild = await buildConsole();
    say(consoleBuild.ok ? `console built into dist/console (${consoleBuild.ms} ms)` : `console build failed, /ui/ shows how to build it: ${consoleBuild.error}`);
    if (shuttingDown) return await stopped;

    const childEnvBase: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith('DEV_')) childEnvBase[k] = v;
    }
    delete childEnvBase.REDIS_URL;
    delete childEnvBase.PORT;
    Object.assign(childEnvBase, { DATABASE_URL: databaseUrl, HOST: host, LOG_LEVEL: env.LOG_LEVEL });
    if (env.REDIS_URL) childEnvBase.REDIS_URL = env.REDIS_URL;

    present.forEach((service, index) => {
      const child = spawn(process.execPath, ['--import', 'tsx', service.entry], {
        cwd: ROOT,
        env: { ...childEnvBase, ...service.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const opts = { width: LABEL_WIDTH, color: useColor, index, write: out };
      const outputs = [prefixLines(child.stdout, service.name, opts), prefixLines(child.stderr, service.name, opts)];
      const entry: Running = {
        service,
        child,
        exited: new Promise<void>((r) => {
          child.on('exit', (code, signal) => {
            entry.exit = signal ? `killed by ${signal}` : `exited with code ${code ?? 'null'}`;
            // Flush its remaining output before reporting.
            void Promise.all(outputs).then(() => {
              if (!shuttingDown) say(`${service.name} ${entry.exit}`);
              r();
              if (!shuttingDown && running.every((x) => x.exit)) void shutdown(1, 'every service has exited');
            });
          });
        }),
      };
      child.on('error', (err) => say(`${service.name} could not start: ${err.message}`));
      running.push(entry);
    });

    const results = await Promise.all(
      running.map(async (r) => ({
        r,
        health: await waitForHealthy(r.service.healthUrl, { timeoutMs: env.DEV_HEALTH_TIMEOUT, exited: () => r.exit }),
      })),
    );
    if (shuttingDown) return await stopped;

    // One origin for the console and all five APIs, routed by infra/nginx's own config.
    const upstreams = {
      secrets: { host, port: ports.secrets },
      scheduler: { host, port: ports.scheduler },
      boxes: { host, port: ports.boxes },
      registry: { host, port: ports.registry },
      controller: { host, port: ports.controllerApi },
    };
    gateway = await startDevGateway({ host, port: ports.gateway, upstreams });
    const consoleUrl = `http://${host}:${ports.gateway}/ui/`;

    const rows: string[][] = [];
    for (const { r, health } of results) {
      r.service.addresses.forEach((a, i) =>
        rows.push([i === 0 ? r.service.name : '', a.label, a.url, i === 0 ? (health.ok ? 'healthy' : `FAILED: ${health.reason}`) : '']),
      );
    }
    for (const s of missing) rows.push([s.name, '-', '-', 'skipped (not written yet)']);
    rows.push(['gateway', 'console + all APIs, one origin', consoleUrl, 'ready']);
    rows.push(['postgres', pg ? 'embedded' : 'external', redactUrl(databaseUrl), 'ready']);
    rows.push(['bus', env.REDIS_URL ? 'redis' : 'in-memory', env.REDIS_URL ? redactUrl(env.REDIS_URL) : '-', '']);
    out(`\n${formatTable(['service', 'what', 'address', 'status'], rows)}\n\n`);
    const failed = results.filter((x) => !x.health.ok).map((x) => x.r.service.name);
    say(
      failed.length === 0
        ? `ready: ${running.length} service(s) healthy. Ctrl-C stops everything.`
        : `started with failures (${failed.join(', ')}); the others keep running. Ctrl-C stops everything.`,
    );
    say(`console: ${consoleUrl} (every API through one origin, routed as infra/nginx routes them)`);
    if (present.length === 0) say('nothing to supervise; Ctrl-C stops the database');
  } catch (err) {
    process.stderr.write(`make dev failed: ${(err as Error).message}\n`);
    await shutdown(1, 'start-up failed');
  }
  return stopped;
}

/** `vite build` of services/console into dist/console. */
function buildConsole(): Promise<{ ok: true; ms: number } | { ok: false; error: string }> {
  const started = Date.now();
  return new Promise((resolveBuild) => {
    const child = spawn('npm', ['run', '--silent', 'build', '-w', 'services/console'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (err) => resolveBuild({ ok: false, error: err.message }));
    child.on('exit', (code) =>
      resolveBuild(code === 0 ? { ok: true, ms: Date.now() - started } : { ok: false, error: output.trim().split('\n').slice(-5).join(' | ') }),
    );
  });
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`make dev crashed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
