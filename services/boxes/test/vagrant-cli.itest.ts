// The real client (issue 5 item 9; reference A.9, A.11): Debian's vagrant 2.3.4 against
// the service on a real listener. vagrant sleeps 5 s once per process when a token is set
// for a custom server, so the scenario uses few invocations:
//   auth login --token, box create, publish --release (direct upload of a generated .box
//   with a declared sha256), search, box add (catalog + download + checksum check),
//   version revoke.
// CI installs vagrant (`apt-get install -y vagrant`); without it this test fails, on purpose.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { createHarness, userWithToken, type Harness } from './harness';

jest.setTimeout(300_000);

function vagrantPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v vagrant'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let h: Harness;
let listener: Listener;
let work: string;
let token: string;
let env: NodeJS.ProcessEnv;

function vagrant(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile('vagrant', args, { env, cwd: work, timeout: 120_000, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function expectOk(run: Run, what: string): void {
  if (run.code !== 0) throw new Error(`vagrant ${what} failed (exit ${run.code})\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
}

beforeAll(async () => {
  if (!vagrantPath()) {
    throw new Error('The vagrant CLI is not installed; this end-to-end test needs it. Install it with: apt-get install -y vagrant');
  }
  h = await createHarness();
  token = await userWithToken(h, 'e2e');
  listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
  work = await mkdtemp(path.join(tmpdir(), 'boxes-vagrant-'));
  env = {
    PATH: process.env.PATH,
    HOME: work,
    VAGRANT_HOME: path.join(work, 'vagrant.d'),
    VAGRANT_SERVER_URL: listener.url,
    VAGRANT_CHECKPOINT_DISABLE: '1',
    VAGRANT_BOX_UPDATE_CHECK_DISABLE: '1',
    VAGRANT_NO_COLOR: '1',
    LANG: 'C.UTF-8',
  };
});

afterAll(async () => {
  await listener?.close();
  await h?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

it('logs in, creates, publishes, searches, installs and revokes a box with the real vagrant client', async () => {
  // A minimal valid .box: tar.gz of metadata.json + Vagrantfile (reference A.11).
  await writeFile(path.join(work, 'metadata.json'), JSON.stringify({ provider: 'virtualbox' }));
  await writeFile(path.join(work, 'Vagrantfile'), 'Vagrant.configure("2") do |config|\nend\n');
  const boxFile = path.join(work, 'demo.box');
  execFileSync('tar', ['-czf', boxFile, '-C', work, 'metadata.json', 'Vagrantfile']);
  const boxBytes = await readFile(boxFile);
  const sha256 = createHash('sha256').update(boxBytes).digest('hex');

  expectOk(await vagrant(['cloud', 'auth', 'login', '--token', token]), 'cloud auth login --token');
  expect((await readFile(path.join(env.VAGRANT_HOME as string, 'data', 'vagrant_login_token'), 'utf8')).trim()).toBe(token);

  expectOk(await vagrant(['cloud', 'box', 'create', 'e2e/demo', '-s', 'demo box', '-d', 'A **demo**', '--no-private']), 'cloud box create');
  const created = await request(h.app).get('/api/v1/box/e2e/demo');
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ tag: 'e2e/demo', short_description: 'demo box', description_html: '<p>A <strong>demo</strong></p>\n', private: false });

  const publish = await vagrant(['cloud', 'publish', 'e2e/demo', '1.0.0', 'virtualbox', boxFile, '-f', '--release', '-s', 'demo box', '--version-description', 'first release', '-c', sha256, '-C', 'sha256']);
  expectOk(publish, 'cloud publish --release');
  const version = await request(h.app).get('/api/v1/box/e2e/demo/version/1.0.0');
  expect(version.body).toMatchObject({ status: 'active', description_markdown: 'first release' });
  expect(version.body.providers).toEqual([expect.objectContaining({ name: 'virtualbox', hosted: true, checksum: sha256, checksum_type: 'sha256' })]);

  const search = await vagrant(['cloud', 'search', 'demo']);
  expectOk(search, 'cloud search');
  expect(search.stdout).toMatch(/e2e\/demo/);
  expect(search.stdout).toMatch(/1\.0\.0/);
  expect(search.stdout).toMatch(/virtualbox/);

  const add = await vagrant(['box', 'add', 'e2e/demo', '--provider', 'virtualbox']);
  expectOk(add, 'box add');
  expect(add.stdout).toMatch(/Successfully added box 'e2e\/demo' \(v1\.0\.0\) for 'virtualbox'/);
  const installed = await readdir(path.join(env.VAGRANT_HOME as string, 'boxes', 'e2e-VAGRANTSLASH-demo', '1.0.0', 'virtualbox'));
  expect(installed.sort()).toEqual(['Vagrantfile', 'metadata.json']);
  expect((await request(h.app).get('/api/v1/box/e2e/demo')).body.downloads).toBe(1);

  expectOk(await vagrant(['cloud', 'version', 'revoke', 'e2e/demo', '1.0.0', '-f']), 'cloud version revoke');
  expect((await request(h.app).get('/api/v1/box/e2e/demo/version/1.0.0')).body.status).toBe('revoked');
  const catalog = await request(h.app).get('/e2e/demo');
  expect(catalog.headers['content-type']).toBe('application/json');
  expect(catalog.body.versions).toEqual([]);
});
