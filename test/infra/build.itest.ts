// `make build` end to end for the migration bundle: esbuild output that runs with plain
// node (no tsx), bundles workspace code and applies every migration to a fresh database.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { buildTarget, discoverTargets } from '../../scripts/build';
import { newControllerKeys, portsWithOffset, renderControllerHcl, waitForHealthy } from '../../scripts/dev-services';
import { freeDevPortOffset, freePortBelowEphemeral } from './free-ports';

const ROOT = resolve(__dirname, '..', '..');
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

describe('scripts/build.ts', () => {
  const out = mkdtempSync(join(tmpdir(), 'selfstack-build-'));
  // As in the image (/app/dist/<service>/main.js beside /app/node_modules): the packages are
  // found by ordinary resolution from the bundle's ancestors, which ESM's dynamic import()
  // (Prisma's client loads parts of itself that way) uses too; NODE_PATH alone is not.
  symlinkSync(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
  const dbName = `build_itest_${process.pid}_${Date.now()}`;
  const dbUrl = (() => {
    const u = new URL(ADMIN_URL);
    u.pathname = `/${dbName}`;
    return u.toString();
  })();

  afterAll(async () => {
    rmSync(out, { recursive: true, force: true });
    const admin = new Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}"`);
    await admin.end();
  });

  const deps = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
  let migrateLine = '';

  // The migration bundle migrates a fresh database; the service bundles below need it.
  beforeAll(async () => {
    const [target] = discoverTargets(['migrate']);
    migrateLine = await buildTarget(target!, deps, out);
    const admin = new Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${dbName}"`);
    await admin.end();
    // Run from a directory outside the repo, as in the image: the external packages come
    // from the node_modules beside the bundles, exactly like /app/node_modules there.
    execFileSync(process.execPath, [join(out, 'migrate', 'main.js'), '--dir', join(ROOT, 'prisma', 'migrations')], {
      cwd: out,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: dbUrl, NODE_PATH: join(ROOT, 'node_modules') },
      stdio: 'pipe',
    });
  }, 60_000);

  it('bundles the migration runner, which migrates a fresh database with plain node', async () => {
    expect(migrateLine).toMatch(/^migrate\s+/);
    const bundle = readFileSync(join(out, 'migrate', 'main.js'), 'utf8');
    expect(bundle).not.toMatch(/require\("@selfstack\//);
    const folders = readdirSync(join(ROOT, 'prisma', 'migrations'), { withFileTypes: true }).filter((d) => d.isDirectory());
    const db = new Client({ connectionString: dbUrl });
    await db.connect();
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM public._prisma_migrations WHERE finished_at IS NOT NULL');
    await db.end();
    expect(Number(rows[0]?.n)).toBe(folders.length);
  });

  // What the image runs: each service bundle under plain node (no tsx, no workspace
  // links), npm packages from node_modules only, answering its health endpoint.
  const services = discoverTargets().filter((t) => t.name !== 'migrate');
  const baseEnv = (name: string): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    NODE_PATH: join(ROOT, 'node_modules'),
    NODE_ENV: 'production',
    DATABASE_URL: dbUrl,
    HOST: '127.0.0.1',
    SERVICE: name,
  });
  /** Runs a built bundle until it answers `healthUrl` (then the caller's `whileUp`). */
  async function runBundle(name: string, env: Record<string, string>, healthUrl: string, whileUp: () => Promise<void> = async () => undefined): Promise<void> {
    const child = spawn(process.execPath, [join(out, name, 'main.js')], { cwd: out, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    try {
      const health = await waitForHealthy(healthUrl, {
        timeoutMs: 30_000,
        exited: () => (child.exitCode !== null ? `exited with code ${child.exitCode}` : undefined),
      });
      if (!health.ok) throw new Error(`${name} bundle not healthy: ${health.reason}\n${output.slice(-3000)}`);
      await whileUp();
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }
  const target = (name: string) => services.find((t) => t.name === name)!;

  it.each(services.map((t) => t.name))('the %s bundle starts with plain node and answers its health check', async (name) => {
    await buildTarget(target(name), deps, out);
    const env = baseEnv(name);
    if (name === 'controller') {
      // Fixed ports (its HCL names them), free and below the ephemeral range.
      const ports = portsWithOffset(await freeDevPortOffset(['controllerApi', 'controllerCluster', 'controllerOps']));
      const config = join(out, 'controller.hcl');
      writeFileSync(config, renderControllerHcl({ host: '127.0.0.1', ports, keys: newControllerKeys() }));
      env.CONTROLLER_CONFIG = config;
      await runBundle(name, env, `http://127.0.0.1:${ports.controllerOps}/health`);
    } else if (name === 'scheduler-agent') {
      // The agent is healthy once registered: the scheduler bundle runs beside it.
      await buildTarget(target('scheduler'), deps, out);
      const serverPort = await freePortBelowEphemeral();
      await runBundle('scheduler', { ...baseEnv('scheduler'), PORT: String(serverPort) }, `http://127.0.0.1:${serverPort}/healthz`, async () => {
        const agentPort = await freePortBelowEphemeral();
        Object.assign(env, {
          SCHEDULER_AGENT_SERVERS: `http://127.0.0.1:${serverPort}`,
          SCHEDULER_AGENT_PORT: String(agentPort),
          SCHEDULER_AGENT_HOST: '127.0.0.1',
          SCHEDULER_AGENT_DATA_DIR: join(out, 'agent-data'),
          SCHEDULER_AGENT_DRIVERS: 'mock_driver',
        });
        await runBundle(name, env, `http://127.0.0.1:${agentPort}/v1/agent/health`);
      });
    } else {
      const port = await freePortBelowEphemeral();
      env.PORT = String(port);
      await runBundle(name, env, `http://127.0.0.1:${port}/healthz`);
    }
  }, 90_000);
});
