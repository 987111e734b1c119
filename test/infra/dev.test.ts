// The database-free parts of `make dev` (scripts/dev-services.ts).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createServer, type Server } from 'node:http';
import { FETCH_BLOCKED_PORTS, isPortFree } from '@selfstack/testing';
import { PassThrough } from 'node:stream';
import { parseHcl } from '@selfstack/config';
import { healthExposed, parseServerConfig } from '../../services/controller/src/config/controller-config';
import {
  DEFAULT_PORTS,
  formatTable,
  keysFromExisting,
  newControllerKeys,
  planServices,
  portsWithOffset,
  prefixLines,
  renderControllerHcl,
  waitForHealthy,
} from '../../scripts/dev-services';
import { relocatedDataDir, stagePostgresNative } from '../../scripts/dev-postgres';

const ROOT = resolve(__dirname, '..', '..');

describe('make dev plan', () => {
  const plan = (env: Record<string, string | undefined> = {}, offset = 0) =>
    planServices({ root: ROOT, ports: portsWithOffset(offset), host: '127.0.0.1', controllerConfigPath: '/data/controller.hcl', env });

  it('uses the documented ports and health endpoints', () => {
    const byName = Object.fromEntries(plan().map((s) => [s.name, s]));
    expect(byName.secrets?.env.PORT).toBe('8200');
    expect(byName.scheduler?.env.PORT).toBe('4646');
    expect(byName.boxes?.env.PORT).toBe('3100');
    expect(byName.registry?.env.PORT).toBe('3200');
    expect(byName.controller?.ports).toEqual([9200, 9201, 9203]);
    expect(byName.boxes?.healthUrl).toBe('http://127.0.0.1:3100/healthz');
    expect(byName.controller?.healthUrl).toBe('http://127.0.0.1:9203/health');
    expect(byName.controller?.env.CONTROLLER_CONFIG).toBe('/data/controller.hcl');
    for (const s of plan().filter((x) => x.name !== 'agent')) expect(s.entry).toBe(join('services', s.name, 'src', 'main.ts'));
  });

  it('starts one scheduler client agent beside the scheduler, raw_exec confined to the data directory', () => {
    const agent = plan().find((s) => s.name === 'agent');
    expect(agent?.entry).toBe(join('services', 'scheduler', 'src', 'agent', 'main.ts'));
    expect(agent?.ports).toEqual([4647]);
    expect(agent?.healthUrl).toBe('http://127.0.0.1:4647/v1/agent/health');
    expect(agent?.env).toMatchObject({
      SCHEDULER_AGENT_SERVERS: '127.0.0.1:4646',
      SCHEDULER_AGENT_DRIVERS: 'mock,raw_exec',
      SCHEDULER_AGENT_RAW_EXEC_ROOT: join(ROOT, '.data'),
      SCHEDULER_AGENT_DATA_DIR: join(ROOT, '.data', 'agent'),
    });
    const shifted = planServices({ root: ROOT, ports: portsWithOffset(10_000), host: '127.0.0.1', controllerConfigPath: '/x', env: {}, dataDir: '/tmp/dev-data' }).find((s) => s.name === 'agent');
    expect(shifted?.env).toMatchObject({ SCHEDULER_AGENT_SERVERS: '127.0.0.1:14646', SCHEDULER_AGENT_PORT: '14647', SCHEDULER_AGENT_RAW_EXEC_ROOT: '/tmp/dev-data' });
  });

  it('puts the secrets service in dev mode and passes the root token only when set', () => {
    expect(plan().find((s) => s.name === 'secrets')?.env).toEqual({ PORT: '8200', SECRETS_DEV_MODE: '1' });
    expect(plan({ SECRETS_DEV_ROOT_TOKEN: 'root' }).find((s) => s.name === 'secrets')?.env.SECRETS_DEV_ROOT_TOKEN).toBe('root');
    // Other services never see dev-mode settings.
    expect(plan({ SECRETS_DEV_ROOT_TOKEN: 'root' }).find((s) => s.name === 'boxes')?.env).toEqual({ PORT: '3100' });
  });

  it('gives the registry an admin token: the configured one, else a generated one it shows', () => {
    const given = plan({ REGISTRY_ADMIN_TOKEN: 'operator-chosen-token' }).find((s) => s.name === 'registry')!;
    expect(given.env).toEqual({ PORT: '3200', REGISTRY_ADMIN_TOKEN: 'operator-chosen-token' });
    expect(given.addresses).toContainEqual({ label: 'registry admin token', url: 'operator-chosen-token' });
    const a = plan().find((s) => s.name === 'registry')!.env.REGISTRY_ADMIN_TOKEN;
    const b = plan().find((s) => s.name === 'registry')!.env.REGISTRY_ADMIN_TOKEN;
    expect(a).toMatch(/^dev-[A-Za-z0-9_-]{24}$/);
    expect(a).not.toBe(b);
  });

  it('shifts every port with DEV_PORT_OFFSET', () => {
    const shifted = portsWithOffset(10_000);
    for (const [k, v] of Object.entries(DEFAULT_PORTS)) expect(shifted[k as keyof typeof shifted]).toBe(v + 10_000);
    expect(plan({}, 10_000).find((s) => s.name === 'scheduler')?.healthUrl).toBe('http://127.0.0.1:14646/healthz');
  });
});

describe('generated controller config', () => {
  const keys = newControllerKeys();
  const text = renderControllerHcl({ host: '127.0.0.1', ports: portsWithOffset(0), keys });

  it('is valid HCL with a controller, a worker and the three listeners', async () => {
    const doc = await parseHcl(text, 'controller.hcl');
    expect((doc.controller as unknown[]).length).toBe(1);
    expect((doc.worker as { initial_upstreams: string[] }[])[0]?.initial_upstreams).toEqual(['127.0.0.1:9201']);
    const listeners = (doc.listener as { tcp: { purpose: string; address: string }[] }).tcp;
    expect(listeners.map((l) => [l.purpose, l.address])).toEqual([
      ['api', '127.0.0.1:9200'],
      ['cluster', '127.0.0.1:9201'],
      ['ops', '127.0.0.1:9203'],
    ]);
  });

  it('is accepted by the controller service and exposes health', async () => {
    const config = await parseServerConfig(text, 'controller.hcl', { DATABASE_URL: 'postgresql://u@h/db' });
    expect(config.controller?.databaseUrl).toBe('postgresql://u@h/db');
    expect(config.worker?.initialUpstreams).toEqual(['127.0.0.1:9201']);
    expect(healthExposed(config)).toBe(true);
  });

  it('keeps its KMS keys across regeneration', async () => {
    expect(await keysFromExisting(text, 'c.hcl')).toEqual(keys);
    expect(await keysFromExisting('not hcl {', 'c.hcl')).toBeUndefined();
    expect(await keysFromExisting('kms "aead" {\n purpose = "root"\n key = "k"\n}\n', 'c.hcl')).toBeUndefined();
  });

  it.each(['controller.hcl', 'worker.hcl'])('infra/controller/%s is accepted by the controller service', async (file) => {
    const path = join(ROOT, 'infra', 'controller', file);
    const config = await parseServerConfig(readFileSync(path, 'utf8'), path, { DATABASE_URL: 'postgresql://u@h/db' });
    expect(config.listeners.ops?.port).toBe(9203);
    if (file === 'controller.hcl') expect(healthExposed(config)).toBe(true);
    else expect(config.worker?.initialUpstreams).toEqual(['controller:9201']);
  });
});

describe('output helpers', () => {
  it('prefixes every line with the padded service name', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const done = prefixLines(stream, 'boxes', { width: 8, color: false, index: 0, write: (l) => lines.push(l) });
    stream.write('one\ntw');
    stream.end('o\nthree');
    await done;
    expect(lines).toEqual(['boxes    | one\n', 'boxes    | two\n', 'boxes    | three\n']);
  });

  it('colours the prefix on a terminal', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const done = prefixLines(stream, 'x', { width: 2, color: true, index: 1, write: (l) => lines.push(l) });
    stream.end('hi\n');
    await done;
    expect(lines).toEqual(['\x1b[33mx  |\x1b[0m hi\n']);
  });

  it('formats a table with aligned columns', () => {
    expect(formatTable(['a', 'bb'], [['long value', 'x'], ['y', '']])).toBe('a           bb\n----------  --\nlong value  x\ny');
  });
});

describe('embedded PostgreSQL binaries outside a checkout the unprivileged user cannot enter', () => {
  // A fake package: <pkg>/package.json and <pkg>/native/{bin/initdb, lib/x.so}.
  function fakePackage(): { native: string; root: string; cleanup(): void } {
    const base = mkdtempSync(join(tmpdir(), 'selfstack-stage-test-')); // 0700, like a mkdtemp clone
    const pkg = join(base, 'pkg');
    mkdirSync(join(pkg, 'native', 'bin'), { recursive: true });
    mkdirSync(join(pkg, 'native', 'lib'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ version: `9.9.${process.pid}` }));
    writeFileSync(join(pkg, 'native', 'bin', 'initdb'), '#!/bin/sh\necho initdb\n', { mode: 0o755 });
    writeFileSync(join(pkg, 'native', 'lib', 'x.so'), 'lib', { mode: 0o644 });
    const root = mkdtempSync(join(tmpdir(), 'selfstack-stage-root-'));
    chmodSync(root, 0o755);
    return { native: join(pkg, 'native'), root, cleanup: () => [base, root].forEach((d) => rmSync(d, { recursive: true, force: true })) };
  }

  it('copies the native tree once to a directory anyone can enter, keeping modes, and reuses it', async () => {
    const f = fakePackage();
    try {
      const staged = await stagePostgresNative(f.native, f.root);
      expect(staged).toBe(join(f.root, `selfstack-postgres-${process.platform}-${process.arch}-9.9.${process.pid}`));
      expect(statSync(staged).mode & 0o777).toBe(0o755);
      expect(statSync(join(staged, 'bin', 'initdb')).mode & 0o777).toBe(0o755);
      expect(readFileSync(join(staged, 'lib', 'x.so'), 'utf8')).toBe('lib');
      const stamp = statSync(join(staged, '.complete')).mtimeMs;
      expect(await stagePostgresNative(f.native, f.root)).toBe(staged);
      expect(statSync(join(staged, '.complete')).mtimeMs).toBe(stamp);
    } finally {
      f.cleanup();
    }
  });

  it('never uses a copy that others can write to', async () => {
    const f = fakePackage();
    try {
      const first = await stagePostgresNative(f.native, f.root);
      chmodSync(first, 0o777);
      const second = await stagePostgresNative(f.native, f.root);
      expect(second).not.toBe(first);
      expect(statSync(second).mode & 0o022).toBe(0);
      expect(existsSync(join(second, 'bin', 'initdb'))).toBe(true);
    } finally {
      f.cleanup();
    }
  });
});

describe('relocatedDataDir: a cluster for a checkout the PostgreSQL user cannot enter', () => {
  let root: string;
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'selfstack-relocate-test-'));
    chmodSync(base, 0o755);
    root = join(base, 'clusters');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('is one directory per requested path, stable across calls, naming the path it stands for', async () => {
    const a = await relocatedDataDir('/root/work/selfstack/.data/postgres', root);
    const b = await relocatedDataDir('/root/other/selfstack/.data/postgres', root);
    expect(await relocatedDataDir('/root/work/selfstack/.data/postgres', root)).toBe(a);
    expect(a).not.toBe(b);
    expect(a).toMatch(new RegExp(`^${root}/root-work-selfstack-data-postgres-[0-9a-f]{16}/postgres$`));
    expect(readFileSync(join(dirname(a), 'checkout-path'), 'utf8')).toBe('/root/work/selfstack/.data/postgres\n');
    // The cluster directory itself is left to startEmbeddedPostgres (owner, mode 0700).
    expect(existsSync(a)).toBe(false);
    for (const dir of [root, dirname(a)]) expect(statSync(dir).mode & 0o777).toBe(0o755);
  });

  it('refuses a directory someone else could have planted or can change', async () => {
    mkdirSync(root, { mode: 0o755 });
    chmodSync(root, 0o777);
    await expect(relocatedDataDir('/x/.data/postgres', root)).rejects.toThrow(`${root} is not a directory owned by uid`);
    rmSync(root, { recursive: true });
    mkdirSync(join(base, 'elsewhere'));
    symlinkSync(join(base, 'elsewhere'), root);
    await expect(relocatedDataDir('/x/.data/postgres', root)).rejects.toThrow('(found a symlink)');
  });
});

describe('health probe (waitForHealthy)', () => {
  // Ports `fetch` refuses before connecting (WHATWG "bad ports"); DEV_PORT_OFFSET=1000 puts
  // the registry on 6000. The probe must reach a service there like on any other port.
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('answers ok for a service on a port fetch refuses, and names the status otherwise', async () => {
    let port: number | undefined;
    for (const p of FETCH_BLOCKED_PORTS) {
      if (await isPortFree(p)) {
        port = p;
        break;
      }
    }
    if (port === undefined) throw new Error(`all of ${[...FETCH_BLOCKED_PORTS].join(', ')} are in use here`);
    let status = 503;
    server = createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server?.listen(port, '127.0.0.1', r));
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    const failing = await waitForHealthy(`http://127.0.0.1:${port}/healthz`, { timeoutMs: 300, intervalMs: 50 });
    expect(failing).toEqual({ ok: false, reason: 'not healthy after 300 ms (HTTP 503)' });
    status = 200;
    const healthy = await waitForHealthy(`http://127.0.0.1:${port}/healthz`, { timeoutMs: 2000, intervalMs: 50 });
    expect(healthy).toMatchObject({ ok: true });
  });

  it('reports a refused connection', async () => {
    const r = await waitForHealthy('http://127.0.0.1:1/healthz', { timeoutMs: 200, intervalMs: 50 });
    expect(r).toEqual({ ok: false, reason: 'not healthy after 200 ms (connect ECONNREFUSED 127.0.0.1:1)' });
  });
});

