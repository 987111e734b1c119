// The web console end to end (issue 32, item 8): Debian's Chromium, driven by
// playwright-core, against the five real services (from source, on a test database of the
// real PostgreSQL and the real Redis) behind the real nginx with infra/nginx's config.
// Signs in, writes and reads a secret (a refused check-and-set shows the API's message in
// the form), sees a job registered through the API appear without a reload, finds a
// published box and a published module (README sanitised), survives a reload of a deep
// link, and shows what is unavailable when served by one service's own port.
// CONSOLE_SCREENSHOTS=<dir> also writes the screenshots docs/console.md shows.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import * as tar from 'tar';
import { createTestDatabase, freePortBelowEphemeral, testRedisUrl, type TestDatabase } from '@selfstack/testing';
import { newControllerKeys, portsWithOffset, renderControllerHcl, waitForHealthy } from '../../../scripts/dev-services';
import { renderNginx } from '../../infra/nginx-config';
import { freeDevPortOffset } from '../../infra/free-ports';

const ROOT = resolve(__dirname, '..', '..', '..');
const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
const missing = [CHROMIUM, NGINX].filter((p) => !existsSync(p));
if (missing.length > 0) {
  // scripts/ensure-test-env.sh installs both (Debian packages chromium and nginx).
  console.warn(`console e2e: skipped, not found: ${missing.join(', ')} (apt-get install -y chromium nginx)`);
}
const describeE2e = missing.length === 0 ? describe : describe.skip;
const SHOTS = process.env.CONSOLE_SCREENSHOTS ? resolve(process.env.CONSOLE_SCREENSHOTS) : undefined;

jest.setTimeout(180_000);

interface Running {
  name: string;
  child: ChildProcess;
  output: () => string;
}

describeE2e('web console in Chromium through nginx', () => {
  const work = mkdtempSync(join(tmpdir(), 'selfstack-console-e2e-'));
  let rootToken = '';
  const registryAdmin = `registry-admin-${Date.now()}-e2e`;
  const boxesAdminToken = `boxes-admin-token-${Date.now()}-console-e2e-0123456789`;
  let db: TestDatabase;
  const services: Running[] = [];
  let nginx: ChildProcess | undefined;
  let gatewayUrl = '';
  let secretsUrl = '';
  let schedulerUrl = '';
  let context: BrowserContext;
  let page: Page;

  const start = (name: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join('services', name, 'src', 'main.ts')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, DATABASE_URL: db.url, REDIS_URL: testRedisUrl(), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
    child.stderr?.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
    services.push({ name, child, output: () => out });
  };

  const api = async (method: string, url: string, headers: Record<string, string> = {}, body?: unknown | Blob): Promise<{ status: number; json: unknown; text: string }> => {
    const res = await fetch(url, {
      method,
      headers: { ...(body !== undefined && !(body instanceof Blob) ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : body instanceof Blob ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  };

  const shot = async (name: string) => {
    if (!SHOTS) return;
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: false });
  };

  beforeAll(async () => {
    // The build the services serve (what `make build` and `make dev` produce).
    execFileSync('npm', ['run', '--silent', 'build', '-w', 'services/console'], { cwd: ROOT, stdio: 'pipe' });
    db = await createTestDatabase();
    const port = { secrets: await freePortBelowEphemeral(), scheduler: await freePortBelowEphemeral(), boxes: await freePortBelowEphemeral(), registry: await freePortBelowEphemeral() };
    const ctlPorts = portsWithOffset(await freeDevPortOffset(['controllerApi', 'controllerCluster', 'controllerOps']));
    const hcl = join(work, 'controller.hcl');
    writeFileSync(hcl, renderControllerHcl({ host: '127.0.0.1', ports: ctlPorts, keys: newControllerKeys() }));
    start('secrets', { PORT: String(port.secrets) });
    start('scheduler', { PORT: String(port.scheduler) });
    start('boxes', {
      PORT: String(port.boxes),
      BOXES_BLOB_FS_ROOT: join(work, 'boxes-blobs'),
      BOXES_BOOTSTRAP_ADMIN_USERNAME: 'acme',
      BOXES_BOOTSTRAP_ADMIN_PASSWORD: 'console-e2e-password',
      BOXES_BOOTSTRAP_ADMIN_TOKEN: boxesAdminToken,
    });
    start('registry', { PORT: String(port.registry), REGISTRY_BLOB_FS_ROOT: join(work, 'registry-blobs'), REGISTRY_ADMIN_TOKEN: registryAdmin });
    start('controller', { CONTROLLER_CONFIG: hcl });
    const health: [string, string][] = [
      ['secrets', `http://127.0.0.1:${port.secrets}/healthz`],
      ['scheduler', `http://127.0.0.1:${port.scheduler}/healthz`],
      ['boxes', `http://127.0.0.1:${port.boxes}/healthz`],
      ['registry', `http://127.0.0.1:${port.registry}/healthz`],
      ['controller', `http://127.0.0.1:${ctlPorts.controllerOps}/health`],
    ];
    for (const [name, url] of health) {
      const s = services.find((x) => x.name === name)!;
      const h = await waitForHealthy(url, { timeoutMs: 90_000, exited: () => (s.child.exitCode !== null ? `exited ${s.child.exitCode}` : undefined) });
      if (!h.ok) throw new Error(`${name} not healthy: ${h.reason}\n${s.output()}`);
    }
    secretsUrl = `http://127.0.0.1:${port.secrets}`;
    schedulerUrl = `http://127.0.0.1:${port.scheduler}`;

    // The real nginx with infra/nginx, upstreams pointed at the services above.
    const tls = join(work, 'tls');
    mkdirSync(tls);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.crt', '-subj', '/CN=localhost', '-days', '2'], { cwd: tls, stdio: 'pipe' });
    const listen: Record<number, number> = {};
    for (const p of [8080, 443, 8200, 4646, 3100, 3200, 9200]) listen[p] = await freePortBelowEphemeral();
    const conf = renderNginx({
      prefix: join(work, 'nginx'),
      tlsDir: tls,
      ports: listen,
      upstreams: {
        secrets: `127.0.0.1:${port.secrets}`,
        scheduler: `127.0.0.1:${port.scheduler}`,
        boxes: `127.0.0.1:${port.boxes}`,
        registry: `127.0.0.1:${port.registry}`,
        controller: `127.0.0.1:${ctlPorts.controllerApi}`,
      },
    });
    nginx = spawn(NGINX, ['-p', join(work, 'nginx'), '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
    gatewayUrl = `http://127.0.0.1:${listen[8080]}`;
    const gw = await waitForHealthy(`${gatewayUrl}/_gateway/health`, { timeoutMs: 20_000, exited: () => (nginx?.exitCode !== null ? 'nginx exited' : undefined) });
    if (!gw.ok) throw new Error(`nginx not ready: ${gw.reason}`);

    // Initialise and unseal secrets with our own root token... through the API, as an operator would.
    const init = await api('PUT', `${secretsUrl}/v1/sys/init`, {}, { secret_shares: 1, secret_threshold: 1 });
    expect(init.status).toBe(200);
    const { keys_base64: keys, root_token: root } = init.json as { keys_base64: string[]; root_token: string };
    rootToken = root;
    expect((await api('PUT', `${secretsUrl}/v1/sys/unseal`, {}, { key: keys[0] })).status).toBe(200);

    // A published box: acme/demo 1.0.0 with a virtualbox provider and a checksum.
    const bearer = { Authorization: `Bearer ${boxesAdminToken}` };
    const boxesBase = `http://127.0.0.1:${port.boxes}/api/v1`;
    expect((await api('POST', `${boxesBase}/boxes`, bearer, { box: { username: 'acme', name: 'demo', short_description: 'A demo box for the console', is_private: false } })).status).toBe(201);
    expect((await api('POST', `${boxesBase}/box/acme/demo/versions`, bearer, { version: { version: '1.0.0', description: 'first' } })).status).toBe(201);
    const sha = 'a'.repeat(64);
    expect(
      (await api('POST', `${boxesBase}/box/acme/demo/version/1.0.0/providers`, bearer, { provider: { name: 'virtualbox', url: 'https://example.invalid/demo.box', checksum: sha, checksum_type: 'sha256' } }))
        .status,
    ).toBe(201);
    expect((await api('PUT', `${boxesBase}/box/acme/demo/version/1.0.0/release`, bearer)).status).toBe(200);

    // A published module whose README tries to run script (it must be sanitised away).
    const admin = { Authorization: `Bearer ${registryAdmin}` };
    const regBase = `http://127.0.0.1:${port.registry}/v1`;
    expect((await api('POST', `${regBase}/admin/namespaces`, admin, { name: 'acme', owner: 'Acme' })).status).toBe(201);
    const tok = await api('POST', `${regBase}/admin/tokens`, admin, { namespace: 'acme', description: 'e2e' });
    expect(tok.status).toBe(201);
    const moduleDir = join(work, 'module');
    mkdirSync(moduleDir);
    writeFileSync(
      join(moduleDir, 'README.md'),
      '# Network module\n\nBuilds a network.\n\n<script>window.__pwned = 1</script>\n\n<img src="x" onerror="window.__pwned = 2">\n\n[bad](javascript:window.__pwned=3)\n',
    );
    writeFileSync(join(moduleDir, 'main.tf'), 'variable "cidr" {\n  type        = string\n  description = "The network range"\n  default     = "10.0.0.0/16"\n}\n\nresource "null_resource" "net" {}\n\noutput "id" {\n  value = null_resource.net.id\n  description = "The network id"\n}\n');
    const archive = join(work, 'module.tar.gz');
    await tar.c({ gzip: true, cwd: moduleDir, file: archive }, ['README.md', 'main.tf']);
    const pub = await api('POST', `${regBase}/modules/acme/network/aws/1.2.0`, { Authorization: `Bearer ${(tok.json as { token: string }).token}` }, new Blob([readFileSync(archive)]));
    expect(pub.status).toBe(201);

    const profile = join(work, 'chromium-profile');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 800 },
    });
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    // A service that ended before the tests did explains what failed after it: its output.
    for (const s of services) {
      if (s.child.exitCode !== null || s.child.signalCode !== null) {
        console.log(`${s.name} ended early (code ${String(s.child.exitCode)}, signal ${String(s.child.signalCode)}):\n${s.output()}`);
      }
    }
    await context?.close().catch(() => undefined);
    nginx?.kill('SIGTERM');
    for (const s of services) s.child.kill('SIGTERM');
    await Promise.all(services.map((s) => new Promise<void>((r) => (s.child.exitCode !== null ? r() : s.child.once('exit', () => r())))));
    await db?.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('opens at the gateway root: / -> /ui/, every API answers on the overview', async () => {
    await page.goto(`${gatewayUrl}/`);
    expect(new URL(page.url()).pathname).toBe('/ui/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('Served through the gateway: all five APIs are reachable').waitFor();
    for (const name of ['Secrets', 'Scheduler', 'Boxes', 'Registry', 'Controller']) {
      const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
      await row.getByText('up', { exact: true }).waitFor();
    }
    await page.getByText('1 worker(s) connected').waitFor();
    await shot('overview');
  });

  it('secrets: signs in with a token, writes a secret, reads it back, refuses a stale check-and-set in the form', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Secrets' }).click();
    // A wrong token is refused in the form with the API's words.
    await page.getByLabel('Token').fill('hvs.not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('permission denied').waitFor();
    await page.getByLabel('Token').fill(rootToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Secrets engines' }).waitFor();
    await shot('secrets');
    await page.getByRole('link', { name: 'secret/' }).click();
    await page.getByText('This folder is empty.').waitFor();
    await page.getByLabel('Path').fill('app/config');
    await page.getByLabel('Data (JSON object)').fill('{"password": "s3cr3t-e2e", "user": "app"}');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('table', { name: 'Secret data' }).getByText('s3cr3t-e2e').waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/secrets/kv/secret/app/config');
    // The API holds what the browser wrote.
    const read = await api('GET', `${gatewayUrl}/v1/secret/data/app/config`, { 'X-Vault-Token': rootToken });
    expect((read.json as { data: { data: unknown } }).data.data).toEqual({ password: 's3cr3t-e2e', user: 'app' });

    // Check-and-set against a version that is not current: the API's message, in the form.
    await page.getByLabel('Check-and-set version').fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('form', { name: 'Write secret' }).getByRole('alert').getByText('check-and-set parameter did not match the current version').waitFor();
    // Bad JSON never reaches the API.
    await page.getByLabel('Data (JSON object)').fill('{"password": ');
    await page.getByLabel('Check-and-set version').fill('1');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('form', { name: 'Write secret' }).getByText(/not valid JSON/).waitFor();
    await page.getByLabel('Data (JSON object)').fill('{"password": "rotated"}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved as version 2.').waitFor();
    await page.getByRole('table', { name: 'Secret data' }).getByText('rotated').waitFor();
    await page.getByRole('table', { name: 'Versions' }).getByRole('button', { name: 'v1' }).waitFor();
    await shot('secret');

    // A deep link survives a reload.
    await page.reload();
    await page.getByRole('table', { name: 'Secret data' }).getByText('rotated').waitFor();
  });

  it('scheduler: a job registered through the API appears without a reload; a bad filter shows the API message', async () => {
    await page.goto(`${gatewayUrl}/ui/scheduler/jobs`);
    await page.getByText('No jobs yet.').waitFor();
    await page.locator('.live.on').waitFor();
    const job = {
      ID: 'console-web',
      Name: 'console-web',
      Type: 'service',
      Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'web', Count: 2, Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:1.27' }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
    };
    const reg = await api('PUT', `${schedulerUrl}/v1/jobs`, {}, { Job: job });
    expect(reg.status).toBe(200);
    // No navigation: the blocking query returns with the new index and the row appears.
    await page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: 'console-web' }).waitFor({ timeout: 15_000 });
    await shot('jobs');

    await page.getByLabel('Filter expression').fill('Status ==');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('The filter was refused').waitFor();
    await page.getByLabel('Filter expression').fill('Name == "console-web"');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: 'console-web' }).waitFor();

    // The job page: task groups, versions with a diff after a second registration.
    await page.getByRole('link', { name: 'console-web' }).click();
    await page.getByRole('table', { name: 'Task groups' }).getByText('server').waitFor();
    const v2 = await api('PUT', `${schedulerUrl}/v1/jobs`, {}, { Job: { ...job, TaskGroups: [{ ...job.TaskGroups[0], Count: 3 }] } });
    expect(v2.status).toBe(200);
    await page.getByRole('table', { name: 'Changes in version 1' }).getByText('TaskGroups[web].Count').waitFor({ timeout: 15_000 });
    await shot('job');
  });

  it('boxes: finds the published box and shows its vagrant line and checksum', async () => {
    await page.goto(`${gatewayUrl}/ui/boxes`);
    await page.getByLabel('Search', { exact: true }).fill('demo');
    await page.getByLabel('Provider').fill('virtualbox');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'acme/demo' }).click();
    await page.getByText(/vagrant box add acme\/demo --box-version 1\.0\.0 --provider virtualbox/).waitFor();
    await page.getByText(`sha256:${'a'.repeat(64)}`).waitFor();
    await shot('box');
  });

  it('registry: finds the published module; its README is rendered without running its script', async () => {
    await page.goto(`${gatewayUrl}/ui/registry`);
    await page.getByLabel('Search modules').fill('network');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'acme/network/aws' }).click();
    await page.getByRole('heading', { name: 'Network module' }).waitFor();
    await page.getByText(`source  = "127.0.0.1:${new URL(gatewayUrl).port}/acme/network/aws"`).waitFor();
    await page.getByText('version = "1.2.0"').waitFor();
    await page.getByRole('table', { name: 'Root module inputs' }).getByText('The network range').waitFor();
    await shot('module');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('.readme script, .readme [onerror]').count()).toBe(0);
    expect(await page.locator('.readme a[href^="javascript"]').count()).toBe(0);
    await page.reload();
    await page.getByRole('heading', { name: 'Network module' }).waitFor();
  });

  it('controller: the worker, connected, with its session count', async () => {
    await page.goto(`${gatewayUrl}/ui/controller`);
    const row = page.getByRole('table', { name: 'Workers' }).getByRole('row').filter({ hasText: 'dev-worker' });
    await row.getByText('connected').waitFor();
    await shot('controller');
  });

  it('served by the secrets port itself: secrets works, the others say why they are unavailable', async () => {
    await page.goto(`${secretsUrl}/ui/boxes`);
    await page.getByText('This page is served by the secrets service on its own port').waitFor();
    // Another origin: its own storage, so signed out there; the secrets API itself works.
    await page.goto(`${secretsUrl}/ui/secrets`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.goto(`${schedulerUrl}/ui/scheduler/jobs`);
    await page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: 'console-web' }).waitFor();
  });
});
