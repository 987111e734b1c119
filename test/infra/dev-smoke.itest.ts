// `make dev` end to end: embedded Postgres, migrations, every service that exists,
// health waits, the address table, then SIGTERM -> everything stops, exit 0.
// Services without services/<name>/src/main.ts must be reported as skipped.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { relocatedDataDir } from '../../scripts/dev-postgres';
import { SERVICE_NAMES, partitionExisting, planServices, portsWithOffset } from '../../scripts/dev-services';
import { freeDevPortOffset, freePortBelowEphemeral } from './free-ports';

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

describe('make dev (scripts/dev.ts)', () => {
  // mkdtemp's mode 0700, as a checkout in root's home: as root, the PostgreSQL user cannot
  // enter it, so make dev must put the cluster elsewhere by itself (issue 31 item 4).
  const dataDir = mkdtempSync(join(tmpdir(), 'selfstack-devsmoke-'));
  const requestedCluster = join(dataDir, 'postgres');
  // A fixed registry admin token, so this plan and the one make dev computes agree.
  const registryAdminToken = 'dev-smoke-registry-admin-token';
  let clusterDir = requestedCluster;

  afterAll(() => {
    if (clusterDir !== requestedCluster) rmSync(dirname(clusterDir), { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts what exists, reports what does not, and stops cleanly on SIGTERM', async () => {
    // A random shift, free and below the ephemeral range, keeps us clear of a developer's
    // own `make dev`, of parallel runs and of other tests' connections.
    const offset = await freeDevPortOffset();
    const ports = portsWithOffset(offset);
    const plan = planServices({
      root: ROOT,
      ports,
      host: '127.0.0.1',
      controllerConfigPath: join(dataDir, 'controller.hcl'),
      env: { REGISTRY_ADMIN_TOKEN: registryAdminToken },
    });
    const { present, missing } = partitionExisting(ROOT, plan);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    Object.assign(env, { REGISTRY_ADMIN_TOKEN: registryAdminToken, DEV_DATA_DIR: dataDir, DEV_PORT_OFFSET: String(offset), DEV_PG_PORT: String(await freePortBelowEphemeral()), NO_COLOR: '1' });
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'dev.ts')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));

    const deadline = Date.now() + 150_000;
    while (!/dev\s+\| (ready:|started with failures|nothing to supervise)/.test(output)) {
      if (child.exitCode !== null) throw new Error(`make dev exited early (${child.exitCode}):\n${output}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`make dev did not become ready in time:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }

    for (const s of missing) expect(output).toContain(`skipping ${s.name}: ${s.entry} does not exist yet`);
    const ready = /embedded PostgreSQL ready at postgresql:\/\/postgres@127\.0\.0\.1:\d+\/selfstack, data in (\S+)/.exec(output);
    expect(ready).not.toBeNull();
    clusterDir = ready![1]!;
    expect(clusterDir).toBe(isRoot ? await relocatedDataDir(requestedCluster) : requestedCluster);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(output).toMatch(/migrations applied/);
    expect(output).toContain('REDIS_URL is unset: services use their in-memory bus');
    // Every service that exists must be healthy, with its address in the table.
    const failures = present.filter((s) => !new RegExp(`^${s.name}\\s+.*\\s+healthy$`, 'm').test(output));
    if (failures.length > 0) {
      child.kill('SIGTERM');
      await exited;
      throw new Error(`not healthy: ${failures.map((s) => s.name).join(', ')}\n${output}`);
    }
    for (const s of present) for (const a of s.addresses) expect(output).toContain(a.url);
    for (const s of missing) expect(output).toMatch(new RegExp(`^${s.name}\\s+-\\s+-\\s+skipped`, 'm'));
    expect(SERVICE_NAMES.length).toBe(present.length + missing.length);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('received SIGTERM');
    expect(output).toMatch(/dev\s+\| stopping embedded PostgreSQL/);
    expect(output).toMatch(/dev\s+\| stopped$/m);
    for (const s of present) for (const p of s.ports) expect(await portOpen(p)).toBe(false);
    expect(existsSync(join(clusterDir, 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(false);
  }, 200_000);
});
