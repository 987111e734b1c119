// The admin command-line tool (issue 5 item 1): every command through runAdminCommand,
// and one real process (`tsx services/boxes/src/admin-cli.ts`) against the test database.
import { execFile } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { runAdminCommand, USAGE } from '../src/admin-cli';
import { auth, createHarness, type Harness } from './harness';

let h: Harness;
const out: string[] = [];
const err: string[] = [];
const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  out.length = 0;
  err.length = 0;
  const code = await runAdminCommand(h.composed.admin, argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

it('creates users, organizations and memberships', async () => {
  expect(await run('create-user', '--username', 'ops', '--password', 'ops-password', '--email', 'ops@example.com', '--admin')).toEqual({ code: 0, out: 'created user ops (admin)', err: '' });
  expect((await run('create-user', '--username', 'dev', '--password', 'dev-password')).code).toBe(0);
  expect(await run('create-user', '--username', 'dev', '--password', 'dev-password')).toMatchObject({ code: 1, err: expect.stringMatching(/already taken/) });
  expect(await run('create-user', '--username', 'api', '--password', 'whatever-1')).toMatchObject({ code: 1, err: expect.stringMatching(/reserved/) });
  expect(await run('create-user', '--username', 'x y', '--password', 'whatever-1')).toMatchObject({ code: 1, err: expect.stringMatching(/invalid username/) });
  expect(await run('create-user', '--username', 'short', '--password', 'abc')).toMatchObject({ code: 1, err: expect.stringMatching(/at least 8/) });
  expect(await run('create-org', '--username', 'team', '--owner', 'ops')).toEqual({ code: 0, out: 'created organization team', err: '' });
  expect(await run('add-member', '--org', 'team', '--user', 'dev')).toMatchObject({ code: 0, out: 'dev is now member of team' });
  expect(await run('add-member', '--org', 'team', '--user', 'dev', '--role', 'boss')).toMatchObject({ code: 1, err: expect.stringMatching(/--role/) });
  expect(await run('add-member', '--org', 'dev', '--user', 'ops')).toMatchObject({ code: 1, err: expect.stringMatching(/not a organization/) });
  expect(await run('list-members', '--org', 'team')).toEqual({ code: 0, out: 'ops\towner\ndev\tmember', err: '' });
  expect(await run('remove-member', '--org', 'team', '--user', 'dev')).toMatchObject({ code: 0 });
  expect(await run('remove-member', '--org', 'team', '--user', 'dev')).toMatchObject({ code: 1, err: expect.stringMatching(/not a member/) });
});

it('issues tokens that the API accepts, sets billing, admin, password and two-factor', async () => {
  const token = await run('create-token', '--username', 'dev');
  expect(token.code).toBe(0);
  const who = await request(h.app).get('/api/v1/authenticate').set(auth(token.out));
  expect(who.body.user.username).toBe('dev');
  expect(await run('set-billing', '--username', 'team', '--state', 'delinquent')).toMatchObject({ code: 0, out: 'billing state of team: delinquent' });
  expect(await run('set-billing', '--username', 'team', '--state', 'late')).toMatchObject({ code: 1 });
  expect(await run('set-admin', '--username', 'dev', 'true')).toMatchObject({ code: 0, out: 'dev admin: true' });
  expect((await request(h.app).get('/api/v1/authenticate').set(auth(token.out))).body.user.is_admin).toBe(true);
  expect(await run('set-password', '--username', 'dev', '--password', 'new-password')).toMatchObject({ code: 0 });
  expect((await request(h.app).post('/api/v1/authenticate').send({ user: { login: 'dev', password: 'new-password' } })).status).toBe(200);
  expect(await run('two-factor', '--username', 'dev', '--phone', '+49 170 1234567')).toMatchObject({ code: 0, out: 'two-factor for dev: sms to +49 170 1234567' });
  expect((await request(h.app).post('/api/v1/authenticate').send({ user: { login: 'dev', password: 'new-password' } })).status).toBe(406);
  expect(await run('two-factor', '--username', 'dev', '--disable')).toMatchObject({ code: 0, out: 'two-factor for dev: disabled' });
  expect(await run('outbox', '--username', 'dev')).toEqual({ code: 0, out: '', err: '' });
});

it('switches maintenance mode', async () => {
  expect(await run('maintenance', 'on', '--message', 'db upgrade')).toMatchObject({ code: 0, out: 'maintenance: on (db upgrade)' });
  expect((await request(h.app).get('/api/v1/search')).status).toBe(503);
  expect(await run('maintenance', 'status')).toMatchObject({ out: 'maintenance: on (db upgrade)' });
  expect(await run('maintenance', 'off')).toMatchObject({ code: 0, out: 'maintenance: off' });
  expect((await request(h.app).get('/api/v1/search')).status).toBe(200);
});

it('reports usage errors with exit code 2', async () => {
  expect(await run()).toMatchObject({ code: 2, out: USAGE });
  expect(await run('frobnicate')).toMatchObject({ code: 2, err: expect.stringMatching(/unknown command frobnicate/) });
  expect(await run('create-user', '--bogus')).toMatchObject({ code: 2, err: expect.stringMatching(/Unknown option '--bogus'/) });
  expect(await run('create-user', '--password', 'x')).toMatchObject({ code: 1, err: 'Error: --username is required' });
});

it('runs as a real process against DATABASE_URL', async () => {
  const url = await h.prisma.$queryRaw<{ db: string }[]>`SELECT current_database() AS db`;
  const { testAdminDatabaseUrl, withDatabase } = await import('@selfstack/testing');
  const databaseUrl = withDatabase(testAdminDatabaseUrl(), url[0]!.db);
  const root = path.resolve(__dirname, '../../..');
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      path.join(root, 'node_modules/.bin/tsx'),
      ['services/boxes/src/admin-cli.ts', 'create-user', '--username', 'fromshell', '--password', 'shell-password'],
      { cwd: root, env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl }, timeout: 60_000 },
      (e, stdout, stderr) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  expect(result).toMatchObject({ code: 0, stdout: 'created user fromshell\n' });
  expect(await h.composed.accountStore.findByUsername('fromshell')).toMatchObject({ kind: 'user', isAdmin: false });
});

it('bootstraps the configured admin idempotently, with its fixed token', async () => {
  const fixed = 'bootstrap-token-0123456789abcdefghijklmnop';
  expect(await h.composed.admin.bootstrap({ username: 'boot', password: 'boot-password-1', token: fixed })).toEqual({ created: true });
  expect(await h.composed.admin.bootstrap({ username: 'boot', password: 'boot-password-1', token: fixed })).toEqual({ created: false });
  const who = await request(h.app).get('/api/v1/authenticate').set(auth(fixed));
  expect(who.body).toEqual({ user: { username: 'boot', email: null, is_admin: true } });
  expect((await request(h.app).post('/api/v1/authenticate').send({ user: { login: 'boot', password: 'boot-password-1' } })).status).toBe(200);
  // An existing non-admin user named by the configuration becomes admin.
  expect(await h.composed.admin.bootstrap({ username: 'fromshell', password: 'ignored-password' })).toEqual({ created: false });
  expect((await h.composed.accountStore.findByUsername('fromshell'))?.isAdmin).toBe(true);
  await expect(h.composed.admin.bootstrap({ username: 'team', password: 'x-password-123' })).rejects.toThrow(/is an organization/);
});
