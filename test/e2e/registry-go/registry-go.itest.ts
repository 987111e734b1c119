// Real-client e2e for the module registry (issue 6 item 6): a Go program built from
// Debian's terraform-svchost and go-getter packages (GOPATH mode, offline) performs
// Terraform's discovery over HTTPS through a real nginx with a test CA, then the
// versions and download calls, follows X-Terraform-Get, and lets go-getter fetch, verify
// (checksum=) and unpack the archive. See regclient/main.go.
//
// CI installs the tools (golang-go, golang-github-hashicorp-terraform-svchost-dev,
// golang-github-hashicorp-go-getter-dev, nginx, openssl); when one is missing this test
// FAILS with the install command rather than skipping.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { SAMPLE_MODULE, sampleModuleTarGz, sampleModuleZip } from '../../../services/registry/test/archive-fixtures';
import { ADMIN_TOKEN, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from '../../../services/registry/test/registry-harness';

const run = promisify(execFile);
jest.setTimeout(240_000);

const GOCODE = '/usr/share/gocode';
const REQUIRED_GO_PACKAGES = ['github.com/hashicorp/terraform-svchost', 'github.com/hashicorp/go-getter'];
const INSTALL_HINT =
  'install them with: apt-get install -y golang-go golang-github-hashicorp-terraform-svchost-dev golang-github-hashicorp-go-getter-dev nginx openssl';

async function which(cmd: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin'])) {
    const p = path.join(dir, cmd);
    if (existsSync(p)) return p;
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nginx did not listen on ${port}: ${stderr()}`);
}

interface ClientReport {
  service_url: string;
  versions: string[];
  download_url: string;
  download_status: number;
  x_terraform_get: string;
  resolved_get: string;
  files: Record<string, string>;
  unauthenticated_versions_status: number;
}

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

describe('Terraform-compatible Go client (svchost discovery + go-getter) through nginx/TLS', () => {
  let work: string;
  let binary: string;
  let caPem: string;
  let nginx: ChildProcess | undefined;
  let nginxErr = '';
  let nginxPort: number;
  let listener: Listener;
  let reg: Registry;
  let readToken: string;

  beforeAll(async () => {
    const missing: string[] = [];
    const go = await which('go');
    const nginxBin = await which('nginx');
    const openssl = await which('openssl');
    if (!go) missing.push('go (golang-go)');
    if (!nginxBin) missing.push('nginx');
    if (!openssl) missing.push('openssl');
    for (const pkg of REQUIRED_GO_PACKAGES) if (!existsSync(path.join(GOCODE, 'src', pkg))) missing.push(`${GOCODE}/src/${pkg}`);
    if (missing.length > 0) throw new Error(`registry Go e2e: missing ${missing.join(', ')}; ${INSTALL_HINT}`);

    work = await mkdtemp(path.join(tmpdir(), 'registry-go-e2e-'));

    // 1. Build the client in GOPATH mode against Debian's packages only (no network).
    const gopath = path.join(work, 'gopath');
    await mkdir(path.join(gopath, 'src', 'regclient'), { recursive: true });
    await copyFile(path.join(__dirname, 'regclient', 'main.go'), path.join(gopath, 'src', 'regclient', 'main.go'));
    binary = path.join(work, 'regclient');
    const goEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: work,
      GO111MODULE: 'off',
      GOPATH: `${gopath}:${GOCODE}`,
      GOPROXY: 'off',
      GOFLAGS: '',
      // Shared between runs: a cold build of go-getter's dependency tree takes ~30 s.
      GOCACHE: path.join(tmpdir(), 'selfstack-registry-go-cache'),
    };
    try {
      await run(go!, ['build', '-o', binary, '.'], { cwd: path.join(gopath, 'src', 'regclient'), env: goEnv, timeout: 180_000 });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`building the Go client failed (GOPATH mode, offline): ${e.stderr ?? e.message}`);
    }

    // 2. A test CA and a server certificate for 127.0.0.1 signed by it.
    const ssl = (args: string[]) => run(openssl!, args, { cwd: work });
    await ssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=selfstack test CA']);
    await ssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
    await writeFile(path.join(work, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    await ssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext']);
    caPem = path.join(work, 'ca.pem');

    // 3. The registry on a real listener (private reads: Terraform's credentials must work).
    reg = await startRegistry({ publicReads: false });
    listener = await createListener(reg.app, { port: 0, host: '127.0.0.1', maxRequestBytes: 4 * 1024 * 1024 });
    await createNamespace(reg.app, 'acme');
    const publisher = await createToken(reg.app, { namespace: 'acme' });
    readToken = (await createToken(reg.app, { description: 'terraform' })).token;
    expect((await publish(reg.app, 'acme/demo/aws/1.0.0', sampleModuleTarGz(), publisher.token)).status).toBe(201);
    expect((await publish(reg.app, 'acme/demo/aws/1.1.0', await sampleModuleZip({ 'zip-only.tf': '# zip\n' }), publisher.token)).status).toBe(201);

    // 4. nginx terminating TLS in front of it.
    nginxPort = await freePort();
    const conf = [
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes 1;',
      `pid ${work}/nginx.pid;`,
      `error_log ${work}/nginx-error.log warn;`,
      'events { worker_connections 64; }',
      'http {',
      `  access_log ${work}/nginx-access.log;`,
      `  client_body_temp_path ${work}/client_body; proxy_temp_path ${work}/proxy; fastcgi_temp_path ${work}/fastcgi; uwsgi_temp_path ${work}/uwsgi; scgi_temp_path ${work}/scgi;`,
      '  server {',
      `    listen 127.0.0.1:${nginxPort} ssl;`,
      `    ssl_certificate ${work}/server.pem;`,
      `    ssl_certificate_key ${work}/server.key;`,
      '    client_max_body_size 32m;',
      '    location / {',
      `      proxy_pass http://127.0.0.1:${listener.port};`,
      '      proxy_http_version 1.1;',
      '      proxy_set_header Host $http_host;',
      '      proxy_set_header X-Forwarded-Proto https;',
      '    }',
      '  }',
      '}',
    ].join('\n');
    await writeFile(path.join(work, 'nginx.conf'), conf);
    nginx = spawn(nginxBin!, ['-p', work, '-c', path.join(work, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr?.on('data', (c: Buffer) => (nginxErr += c.toString()));
    await waitForPort(nginxPort, nginx, () => nginxErr);
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      nginx.kill('SIGTERM');
      await exited;
    }
    await listener?.close({ drainTimeoutMs: 1000 });
    await reg?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function runClient(version: string, out: string, token?: string) {
    const args = ['-host', `127.0.0.1:${nginxPort}`, '-module', 'acme/demo/aws', '-version', version, '-out', out];
    if (token) args.push('-token', token);
    return run(binary, args, { env: { PATH: process.env.PATH ?? '/usr/bin', HOME: work, SSL_CERT_FILE: caPem }, timeout: 60_000 });
  }

  it('discovers, resolves, downloads through X-Terraform-Get and unpacks a .tar.gz version', async () => {
    const out = path.join(work, 'out-1.0.0');
    const { stdout } = await runClient('1.0.0', out, readToken);
    const report = JSON.parse(stdout) as ClientReport;
    const base = `https://127.0.0.1:${nginxPort}`;
    expect(report.service_url).toBe(`${base}/v1/modules/`);
    expect(report.versions).toEqual(['1.1.0', '1.0.0']);
    expect(report.download_url).toBe(`${base}/v1/modules/acme/demo/aws/1.0.0/download`);
    expect(report.download_status).toBe(204);
    expect(report.x_terraform_get).toMatch(/^\.\/archive\.tar\.gz\?token=[^&]+&checksum=sha256%3A[0-9a-f]{64}$/);
    expect(report.resolved_get.startsWith(`${base}/v1/modules/acme/demo/aws/1.0.0/archive.tar.gz?token=`)).toBe(true);
    // Reads are private here: without the token the registry says 401.
    expect(report.unauthenticated_versions_status).toBe(401);
    const expected = Object.fromEntries(Object.entries(SAMPLE_MODULE).map(([p, c]) => [p, sha256(c)]));
    expect(report.files).toEqual(expected);
    expect(await readFile(path.join(out, 'modules/policy/main.tf'), 'utf8')).toBe(SAMPLE_MODULE['modules/policy/main.tf']);
  });

  it('does the same for a .zip version', async () => {
    const out = path.join(work, 'out-1.1.0');
    const { stdout } = await runClient('1.1.0', out, readToken);
    const report = JSON.parse(stdout) as ClientReport;
    expect(report.x_terraform_get).toMatch(/^\.\/archive\.zip\?token=/);
    expect(report.files['zip-only.tf']).toBe(sha256('# zip\n'));
    expect(Object.keys(report.files).sort()).toEqual([...Object.keys(SAMPLE_MODULE), 'zip-only.tf'].sort());
  });

  it('fails like Terraform does without credentials on a private registry', async () => {
    const err = await runClient('1.0.0', path.join(work, 'out-anon')).catch((e: { code?: number; stderr?: string }) => e);
    expect((err as { code?: number }).code).toBe(1);
    expect((err as { stderr?: string }).stderr).toMatch(/versions: status 401: \{"errors":\["a registry token is required/);
  });

  it('go-getter verifies the checksum carried in X-Terraform-Get: a tampered stored archive is rejected', async () => {
    const publisher = await createToken(reg.app, { namespace: 'acme' });
    const before = new Set(await reg.archiveFiles());
    expect((await publish(reg.app, 'acme/demo/aws/1.2.0', sampleModuleTarGz(), publisher.token)).status).toBe(201);
    const added = (await reg.archiveFiles()).filter((f) => !before.has(f));
    expect(added).toHaveLength(1);
    // Replace the stored bytes behind the registry's back (a corrupted or swapped object).
    await writeFile(path.join(reg.blobRoot, 'registry', 'archives', added[0]!), sampleModuleTarGz({ 'backdoor.tf': 'resource "null_resource" "x" {}\n' }));
    const err = await runClient('1.2.0', path.join(work, 'out-tampered'), readToken).catch((e: { code?: number; stderr?: string }) => e);
    expect((err as { code?: number }).code).toBe(1);
    expect((err as { stderr?: string }).stderr).toMatch(/go-getter: .*[Cc]hecksums did not match/);
    expect(existsSync(path.join(work, 'out-tampered', 'backdoor.tf'))).toBe(false);
  });

  it('refuses the archive when its URL is not the signed one (go-getter gets a 401)', async () => {
    const res = await request(reg.app).get('/v1/modules/acme/demo/aws/1.0.0/archive.tar.gz');
    expect(res.status).toBe(401);
    const ok = await request(reg.app).get('/v1/modules/acme/demo/aws/1.0.0/archive.tar.gz').set(bearer(ADMIN_TOKEN));
    expect(ok.status).toBe(200);
  });
});
