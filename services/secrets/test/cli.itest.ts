// Issue 28, item 6: the `secrets` command run as a child process (the package's bin, as
// `npx secrets` runs it) against the real service: HTTPS with a certificate of the test's
// own CA, and plain HTTP. Exit codes as the Vault CLI's: 0 success, 1 local, 2 remote.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { makeTestCa, type TestCa } from './fixtures/test-ca';
import { REPO_ROOT, startService, type ServiceProcess } from './fixtures/service-process';
import './harness';

const BIN = join(REPO_ROOT, 'services/secrets-cli/bin/secrets.cjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('the secrets CLI against a real server', () => {
  let db: TestDatabase;
  let dir: string;
  let home: string;
  let ca: TestCa;
  let svc: ServiceProcess;
  let httpsUrl = '';
  let plainUrl = '';
  let root = '';
  let unsealKey = '';

  /** Runs `secrets args...` with HOME in the test's directory and only the given variables. */
  const cli = (args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> =>
    new Promise((resolve) => {
      const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home };
      const child = execFile(process.execPath, [BIN, ...args], { env: { ...base, ...env }, cwd: REPO_ROOT }, (err, stdout, stderr) => {
        const code = err ? Number((err as { code?: number }).code ?? 1) : 0;
        resolve({ code, stdout, stderr });
      });
      if (input !== undefined) child.stdin?.end(input);
      else child.stdin?.end();
    });
  /** Over HTTPS, verifying against the test CA. */
  const tls = (args: string[], env: Record<string, string> = {}, input?: string) => cli(args, { SECRETS_ADDR: httpsUrl, SECRETS_CACERT: ca.caCert, ...env }, input);
  const ok = async (args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> => {
    const r = await tls(args, env, input);
    if (r.code !== 0) throw new Error(`secrets ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  const okJson = async (args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> =>
    JSON.parse((await ok([...args, '-format=json'], env)).stdout) as Record<string, unknown>;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'secrets-cli-'));
    home = join(dir, 'home');
    mkdirSync(home);
    ca = makeTestCa(dir);
    const config = join(dir, 'server.hcl');
    writeFileSync(
      config,
      `listener "tcp" {\n  address = "127.0.0.1:0"\n  tls_cert_file = "${ca.serverCert}"\n  tls_key_file = "${ca.serverKey}"\n}\nlistener "tcp" {\n  address = "127.0.0.1:0"\n  tls_disable = true\n}\n`,
    );
    svc = await startService({ DATABASE_URL: db.url, SECRETS_CONFIG: config, LOG_LEVEL: 'info' }, 2);
    [httpsUrl, plainUrl] = svc.urls as [string, string];
  });
  afterAll(async () => {
    await svc?.stop();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('status, operator init and unseal on a new server (status exits 2 while sealed)', async () => {
    const sealed = await tls(['status']);
    expect(sealed.code).toBe(2);
    expect(sealed.stdout).toMatch(/^Key\s+Value\n---\s+-----\n/);
    expect(sealed.stdout).toMatch(/\nInitialized\s+false\n/);
    const init = await okJson(['operator', 'init', '-key-shares=1', '-key-threshold=1']);
    expect(init).toMatchObject({ unseal_shares: 1, unseal_threshold: 1 });
    root = init.root_token as string;
    unsealKey = (init.unseal_keys_b64 as string[])[0] as string;
    expect(root).toMatch(/^hvs\./);
    const unseal = await tls(['operator', 'unseal', unsealKey]);
    expect(unseal.code).toBe(0);
    expect(unseal.stdout).toMatch(/\nSealed\s+false\n/);
    const status = await okJson(['status']);
    expect(status).toMatchObject({ initialized: true, sealed: false, t: 1, n: 1 });
  });

  it('verifies TLS by default: refuses without the CA, accepts with -ca-cert, the CA variable or the explicit skip flag', async () => {
    const untrusted = await cli(['status', `-address=${httpsUrl}`]);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toMatch(/certificate/i);
    expect((await cli(['status', `-address=${httpsUrl}`, `-ca-cert=${ca.caCert}`])).code).toBe(0);
    expect((await cli(['status'], { VAULT_ADDR: httpsUrl, VAULT_CACERT: ca.caCert })).code).toBe(0);
    expect((await cli(['status', '-tls-skip-verify'], { SECRETS_ADDR: httpsUrl })).code).toBe(0);
    expect((await cli(['status'], { SECRETS_ADDR: httpsUrl, SECRETS_SKIP_VERIFY: 'true' })).code).toBe(0);
    // Plain HTTP on the other listener.
    expect((await cli(['status', `--address=${plainUrl}`])).code).toBe(0);
  });

  it('login with a token stores it in ~/.secrets-token (mode 600) for later commands', async () => {
    const r = await ok(['login', root]);
    expect(r.stdout).toContain('Success! You are now authenticated.');
    expect(r.stdout).toMatch(/\ntoken\s+hvs\./);
    const file = join(home, '.secrets-token');
    expect(readFileSync(file, 'utf8')).toBe(root);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const look = await okJson(['token', 'lookup']);
    expect((look.data as Record<string, unknown>).policies).toEqual(['root']);
    const bad = await tls(['login', 'hvs.not-a-token']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Code: 403');
    expect(readFileSync(file, 'utf8')).toBe(root);
  });

  it('kv put/get/patch/list/delete/undelete/destroy and metadata on the default KV v2 mount', async () => {
    const put = await ok(['kv', 'put', 'secret/app/db', 'user=admin', 'password=s3cret']);
    expect(put.stdout).toContain('=== Secret Path ===\nsecret/data/app/db');
    expect(put.stdout).toMatch(/\nversion\s+1\n?/);
    expect((await ok(['kv', 'get', '-field=password', 'secret/app/db'])).stdout).toBe('s3cret\n');
    const table = (await ok(['kv', 'get', 'secret/app/db'])).stdout;
    expect(table).toContain('=== Data ===');
    expect(table).toMatch(/\nuser\s+admin\n/);
    await ok(['kv', 'patch', 'secret/app/db', 'password=n3w']);
    const got = await okJson(['kv', 'get', 'secret/app/db']);
    expect((got.data as { data: unknown }).data).toEqual({ password: 'n3w', user: 'admin' });
    expect(((got.data as { metadata: { version: number } }).metadata).version).toBe(2);
    expect((await okJson(['kv', 'get', '-version=1', 'secret/app/db'])).data).toMatchObject({ data: { password: 's3cret' } });
    // -mount and a path relative to it; flags after the path work too.
    expect((await ok(['kv', 'get', 'app/db', '-mount=secret', '-field=user'])).stdout).toBe('admin\n');

    const cas = await tls(['kv', 'put', '-cas=1', 'secret/app/db', 'x=y']);
    expect(cas.code).toBe(2);
    expect(cas.stderr).toContain('check-and-set parameter did not match the current version');

    await ok(['kv', 'put', 'secret/app/other', 'a=1']);
    const list = await ok(['kv', 'list', 'secret/app']);
    expect(list.stdout).toBe('Keys\n----\ndb\nother\n');
    expect(JSON.parse((await ok(['kv', 'list', '-format=json', 'secret/app'])).stdout)).toEqual(['db', 'other']);

    await ok(['kv', 'delete', 'secret/app/db']);
    const deleted = await tls(['kv', 'get', 'secret/app/db']);
    expect(deleted.code).toBe(2);
    expect(deleted.stdout).toMatch(/\ndeletion_time\s+\d{4}-/);
    await ok(['kv', 'undelete', '-versions=2', 'secret/app/db']);
    expect((await ok(['kv', 'get', '-field=password', 'secret/app/db'])).stdout).toBe('n3w\n');
    await ok(['kv', 'destroy', '-versions=1', 'secret/app/db']);
    const meta = await okJson(['kv', 'metadata', 'get', 'secret/app/db']);
    expect(((meta.data as { versions: Record<string, { destroyed: boolean }> }).versions)['1']?.destroyed).toBe(true);
    await ok(['kv', 'metadata', 'put', '-max-versions=5', '-custom-metadata=owner=ops', 'secret/app/db']);
    const meta2 = await okJson(['kv', 'metadata', 'get', 'secret/app/db']);
    expect(meta2.data).toMatchObject({ max_versions: 5, custom_metadata: { owner: 'ops' } });
    await ok(['kv', 'metadata', 'delete', 'secret/app/db']);
    const gone = await tls(['kv', 'get', 'secret/app/db']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toBe('No value found at secret/data/app/db\n');
    const fromFile = join(dir, 'value.txt');
    writeFileSync(fromFile, 'multi\nline');
    await ok(['kv', 'put', 'secret/file', `v=@${fromFile}`, 'w=-'], {}, 'from stdin\n');
    expect((await okJson(['kv', 'get', 'secret/file'])).data).toMatchObject({ data: { v: 'multi\nline', w: 'from stdin' } });
  });

  it('secrets enable/list/disable, with a KV v1 mount the kv commands detect', async () => {
    expect((await ok(['secrets', 'enable', '-path=kv1', '-version=1', 'kv'])).stdout).toBe('Success! Enabled the kv secrets engine at: kv1/\n');
    await ok(['kv', 'put', 'kv1/team/a', 'k=v']);
    expect((await okJson(['kv', 'get', 'kv1/team/a'])).data).toEqual({ k: 'v' });
    expect((await ok(['kv', 'list', 'kv1/team'])).stdout).toBe('Keys\n----\na\n');
    const list = await ok(['secrets', 'list', '-detailed']);
    expect(list.stdout).toMatch(/^Path\s+Type\s+Accessor\s+Version\s+Description\n/);
    expect(list.stdout).toMatch(/\nkv1\/\s+kv\s+kv_\w+\s+1\s/);
    expect(list.stdout).toMatch(/\nsecret\/\s+kv\s+kv_\w+\s+2\s/);
    const patch = await tls(['kv', 'patch', 'kv1/team/a', 'k=w']);
    expect(patch.code).toBe(1);
    expect((await ok(['secrets', 'disable', 'kv1'])).stdout).toBe('Success! Disabled the secrets engine (if it existed) at: kv1/\n');
    expect(Object.keys(await okJson(['secrets', 'list']))).not.toContain('kv1/');
  });

  it('policy write/read/list/delete', async () => {
    const file = join(dir, 'app.hcl');
    writeFileSync(file, 'path "secret/data/app/*" { capabilities = ["read", "create", "update"] }\n');
    expect((await ok(['policy', 'write', 'app', file])).stdout).toBe('Success! Uploaded policy: app\n');
    expect((await ok(['policy', 'read', 'app'])).stdout).toContain('path "secret/data/app/*"');
    expect((await ok(['policy', 'list'])).stdout).toBe('app\ndefault\nroot\n');
    await ok(['policy', 'write', 'tmp', '-'], {}, 'path "x" { capabilities = ["read"] }');
    expect((await ok(['policy', 'delete', 'tmp'])).stdout).toBe('Success! Deleted policy: tmp\n');
    const missing = await tls(['policy', 'read', 'tmp']);
    expect(missing.code).toBe(2);
  });

  it('token create/lookup/renew/revoke', async () => {
    const created = await okJson(['token', 'create', '-policy=app', '-ttl=1h', '-metadata=team=ops', '-display-name=ci']);
    const auth = created.auth as { client_token: string; accessor: string; policies: string[]; lease_duration: number };
    expect(auth.policies).toEqual(['app', 'default']);
    expect(auth.lease_duration).toBe(3600);
    const table = (await ok(['token', 'lookup', auth.client_token])).stdout;
    expect(table).toMatch(/\ndisplay_name\s+token-ci\n/);
    expect(table).toMatch(/\nmeta\s+map\[team:ops\]\n/);
    expect(((await okJson(['token', 'lookup', '-accessor', auth.accessor])).data as { display_name: string }).display_name).toBe('token-ci');
    const renewed = await okJson(['token', 'renew', '-increment=2h', auth.client_token]);
    expect((renewed.auth as { lease_duration: number }).lease_duration).toBe(7200);
    // The app token reads what its policy allows and nothing else.
    await ok(['kv', 'put', 'secret/app/x', 'a=1']);
    expect((await tls(['kv', 'get', '-field=a', 'secret/app/x'], { SECRETS_TOKEN: auth.client_token })).stdout).toBe('1\n');
    const denied = await tls(['kv', 'get', 'secret/file'], { VAULT_TOKEN: auth.client_token });
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain('permission denied');
    expect((await ok(['token', 'revoke', auth.client_token])).stdout).toBe('Success! Revoked token (if it existed)\n');
    expect((await tls(['token', 'lookup', auth.client_token])).code).toBe(2);
  });

  it('auth enable/list, login with userpass and with approle', async () => {
    expect((await ok(['auth', 'enable', 'userpass'])).stdout).toBe('Success! Enabled userpass auth method at: userpass/\n');
    await ok(['auth', 'enable', '-path=robots', 'approle']);
    const list = (await ok(['auth', 'list'])).stdout;
    expect(list).toMatch(/^Path\s+Type\s+Accessor\s+Description\n/);
    expect(list).toMatch(/\nrobots\/\s+approle\s+auth_approle_\w+/);
    expect(list).toMatch(/\ntoken\/\s+token\s+/);
    expect(list).toMatch(/\nuserpass\/\s+userpass\s+/);
    await ok(['write', 'auth/userpass/users/alice', 'password=pw', 'token_policies=app']);
    await ok(['write', 'auth/robots/role/ci', 'token_policies=app', 'secret_id_num_uses=1']);
    const roleId = ((await okJson(['read', 'auth/robots/role/ci/role-id'])).data as { role_id: string }).role_id;
    const secretId = ((await okJson(['write', 'auth/robots/role/ci/secret-id'])).data as { secret_id: string }).secret_id;

    // A second HOME: logins store their own token there and later commands use it.
    const other = join(dir, 'home2');
    mkdirSync(other);
    const inOther = { HOME: other };
    const bad = await tls(['login', '-method=userpass', 'username=alice', 'password=wrong'], inOther);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid username or password');
    const up = await ok(['login', '-method=userpass', 'username=alice', 'password=pw'], inOther);
    expect(up.stdout).toMatch(/\ntoken_meta_username\s+alice\n/);
    expect(up.stdout).toMatch(/\ntoken_policies\s+\[app default\]\n/);
    expect((await ok(['kv', 'get', '-field=a', 'secret/app/x'], inOther)).stdout).toBe('1\n');
    expect((await tls(['kv', 'get', 'secret/file'], inOther)).code).toBe(2);

    const ar = await okJson(['login', '-method=approle', '-path=robots', `role_id=${roleId}`, `secret_id=${secretId}`], inOther);
    expect((ar.auth as { metadata: unknown }).metadata).toEqual({ role_name: 'ci' });
    const again = await tls(['login', '-method=approle', '-path=robots', `role_id=${roleId}`, `secret_id=${secretId}`], inOther);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('invalid role or secret ID');
    // -no-store leaves the stored token alone.
    await ok(['login', '-no-store', root], inOther);
    expect(readFileSync(join(other, '.secrets-token'), 'utf8')).toBe((ar.auth as { client_token: string }).client_token);
  });

  it('namespace create/list/delete, and -namespace / SECRETS_NAMESPACE / VAULT_NAMESPACE on other commands (issue 28, item 1)', async () => {
    const none = await tls(['namespace', 'list']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('No namespaces found\n');
    expect((await ok(['namespace', 'create', 'team'])).stdout).toBe('Success! Created namespace: team/\n');
    const created = await okJson(['namespace', 'create', '-namespace=team', 'sub']);
    expect(created.data).toMatchObject({ path: 'sub/', custom_metadata: {} });
    expect((await ok(['namespace', 'list'])).stdout).toBe('Keys\n----\nteam/\n');
    expect(await okJson(['namespace', 'list'], { SECRETS_NAMESPACE: 'team' })).toEqual(['sub/']);
    // A mount of the namespace, reached by flag, by either variable and by path prefix.
    expect((await ok(['secrets', 'enable', '-namespace=team/sub', '-path=kv', '-version=2', 'kv'])).stdout).toBe('Success! Enabled the kv secrets engine at: kv/\n');
    await ok(['kv', 'put', '-namespace=team/sub', 'kv/app', 'k=v']);
    expect((await okJson(['kv', 'get', 'kv/app'], { VAULT_NAMESPACE: 'team/sub/' })).data).toMatchObject({ data: { k: 'v' } });
    expect((await okJson(['kv', 'get', 'sub/kv/app'], { SECRETS_NAMESPACE: 'team' })).data).toMatchObject({ data: { k: 'v' } });
    expect((await tls(['kv', 'get', 'kv/app'])).code).toBe(2);
    const unknown = await tls(['secrets', 'list', '-namespace=nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('namespace not found');
    // A namespace with children is not deleted.
    const refused = await tls(['namespace', 'delete', 'team']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('cannot delete namespace \"team/\" containing child namespaces');
    expect((await ok(['namespace', 'delete', '-namespace=team', 'sub'])).stdout).toBe('Success! Namespace deleted at: sub/\n');
    expect((await ok(['namespace', 'delete', 'team'])).stdout).toBe('Success! Namespace deleted at: team/\n');
    expect((await tls(['namespace', 'list'])).code).toBe(2);
  });

  it('usage errors exit 1 without contacting the server', async () => {
    for (const args of [['kv', 'get'], ['kv', 'get', 'a', 'b'], ['status', '-bogus'], ['status', '-format=yaml'], ['nonsense'], ['kv', 'undelete', 'secret/x'], ['login', '-method=ldap', 'x=y']]) {
      const r = await cli(args, { SECRETS_ADDR: 'https://127.0.0.1:1' });
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr).not.toBe('');
    }
    expect((await cli(['--help'])).code).toBe(0);
    expect((await cli(['kv', 'get', '-h'])).stdout).toContain('Usage: secrets kv get');
  });

  it('operator seal seals the server; status then exits 2', async () => {
    expect((await ok(['operator', 'seal'])).stdout).toBe('Success! Server is sealed.\n');
    expect((await tls(['status'])).code).toBe(2);
    expect((await tls(['kv', 'get', 'secret/app/x'])).stderr).toContain('Vault is sealed');
    await ok(['operator', 'unseal', '-'], {}, `${unsealKey}\n`);
    expect((await tls(['status'])).code).toBe(0);
  });
});
