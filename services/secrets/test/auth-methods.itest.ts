// Issue 28, item 5: sys/auth, userpass and approle against a real database and bus.
import request from 'supertest';
import { MULTI_DENIED, initAndUnseal, startHarness, type Harness } from './harness';

describe('auth methods', () => {
  let h: Harness;
  let root = '';
  let unsealKey = '';
  const as = (t: string) => ({ 'X-Vault-Token': t });
  const put = (path: string, token: string, body: Record<string, unknown> = {}) => request(h.app).post(`/v1/${path}`).set(as(token)).send(body);
  const get = (path: string, token: string) => request(h.app).get(`/v1/${path}`).set(as(token));

  beforeAll(async () => {
    h = await startHarness();
    const init = await initAndUnseal(h.app);
    root = init.rootToken;
    unsealKey = init.keys[0] as string;
    await put('sys/policies/acl/app', root, { policy: 'path "secret/data/app/*" { capabilities = ["read", "create", "update"] }' }).expect(204);
    await put('sys/policies/acl/userpass-admin', root, { policy: 'path "auth/userpass/users/*" { capabilities = ["create", "read", "update", "delete", "list"] }' }).expect(204);
  });
  afterAll(async () => {
    await h.close();
  });

  describe('sys/auth', () => {
    it('lists only token/ on a fresh install, in the injector shape', async () => {
      const r = await get('sys/auth', root);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body.data)).toEqual(['token/']);
      expect(r.body['token/']).toEqual(r.body.data['token/']);
      expect(r.body.data['token/']).toMatchObject({ type: 'token', description: 'token based credentials', config: { token_type: 'default-service' } });
    });

    it('enables, reads, tunes and lists methods; refuses duplicates, unknown types and the token method', async () => {
      expect((await put('sys/auth/userpass', root, { type: 'userpass', description: 'people' })).status).toBe(204);
      expect((await put('sys/auth/approle', root, { type: 'approle' })).status).toBe(204);
      const list = await get('sys/auth', root);
      expect(Object.keys(list.body.data)).toEqual(['approle/', 'token/', 'userpass/']);
      expect(list.body.data['userpass/']).toMatchObject({
        type: 'userpass',
        description: 'people',
        local: false,
        seal_wrap: false,
        options: null,
        config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, token_type: 'default-service' },
      });
      expect(list.body.data['userpass/'].accessor).toMatch(/^auth_userpass_[a-z0-9]{8}$/);
      expect(list.body.data['userpass/'].uuid).toMatch(/^[0-9a-f-]{36}$/);

      const one = await get('sys/auth/userpass', root);
      expect(one.status).toBe(200);
      expect(one.body.data.type).toBe('userpass');

      const dup = await put('sys/auth/userpass', root, { type: 'userpass' });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ errors: ['path is already in use at userpass/'] });
      const unknown = await put('sys/auth/ldap', root, { type: 'ldap' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({ errors: ['plugin not found in the catalog: ldap'] });
      expect((await put('sys/auth/token', root, { type: 'userpass' })).body).toEqual({ errors: ['path is already in use at token/'] });
      const noToken = await request(h.app).delete('/v1/sys/auth/token').set(as(root));
      expect(noToken.status).toBe(400);
      expect(noToken.body).toEqual({ errors: ['token credential backend cannot be disabled'] });

      expect((await put('sys/auth/userpass/tune', root, { default_lease_ttl: '1h', max_lease_ttl: '2h' })).status).toBe(204);
      const tune = await get('sys/auth/userpass/tune', root);
      expect(tune.status).toBe(200);
      expect(tune.body.data).toEqual({ default_lease_ttl: 3600, description: 'people', force_no_cache: false, max_lease_ttl: 7200, options: null, token_type: 'default-service' });
      const bad = await put('sys/auth/userpass/tune', root, { default_lease_ttl: '3h' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0]).toMatch(/max lease TTL cannot be less than/);
    });

    it('needs sudo to enable or disable (root-protected as in Vault); listing needs read', async () => {
      const create = await put('auth/token/create', root, { policies: ['app'] });
      const app = create.body.auth.client_token as string;
      const denied = await put('sys/auth/other', app, { type: 'userpass' });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ errors: [MULTI_DENIED] });
      expect((await get('sys/auth', app)).status).toBe(403);
    });
  });

  describe('userpass', () => {
    it('manages users; the password is stored only as an argon2id hash and never returned', async () => {
      const created = await put('auth/userpass/users/Alice', root, { password: 'correct horse', token_policies: 'app,default', token_ttl: '10m', token_max_ttl: '30m' });
      expect(created.status).toBe(204);
      const read = await get('auth/userpass/users/alice', root);
      expect(read.status).toBe(200);
      expect(read.body.mount_type).toBe('userpass');
      expect(read.body.data).toEqual({
        token_bound_cidrs: [],
        token_explicit_max_ttl: 0,
        token_max_ttl: 1800,
        token_no_default_policy: false,
        token_num_uses: 0,
        token_period: 0,
        token_policies: ['app', 'default'],
        token_ttl: 600,
        token_type: 'default',
      });
      expect(read.text).not.toContain('correct horse');
      const list = await request(h.app).get('/v1/auth/userpass/users?list=true').set(as(root));
      expect(list.status).toBe(200);
      expect(list.body.data.keys).toEqual(['alice']);

      const mount = h.services.auth.list().find((m) => m.path === 'userpass/');
      const stored = (await h.services.barrier.get(`auth/${mount?.uuid}/user/alice`))?.toString('utf8') ?? '';
      expect(stored).toMatch(/"passwordHash":"\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(stored).not.toContain('correct horse');
      // Postgres holds ciphertext only.
      const rows = await h.prisma.$queryRawUnsafe<{ value: Buffer }[]>(`SELECT "value" FROM "secrets"."entries" WHERE "path" LIKE 'auth/%'`);
      for (const row of rows) expect(row.value.includes(Buffer.from('argon2id'))).toBe(false);

      const missing = await put('auth/userpass/users/bob', root, { token_policies: 'app' });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ errors: ['missing password'] });
      const badName = await put('auth/userpass/users/bad%20name', root, { password: 'x' });
      expect(badName.status).toBe(400);
    });

    it('logs in without a token and returns the anchor auth block; the token works and is limited by its policies', async () => {
      const login = await request(h.app).post('/v1/auth/userpass/login/ALICE').send({ password: 'correct horse' });
      expect(login.status).toBe(200);
      expect(login.body).toMatchObject({ lease_id: '', renewable: false, lease_duration: 0, data: null, warnings: null, mount_type: 'userpass' });
      const auth = login.body.auth;
      expect(Object.keys(auth)).toEqual(['client_token', 'accessor', 'policies', 'token_policies', 'metadata', 'lease_duration', 'renewable', 'entity_id', 'token_type', 'orphan', 'mfa_requirement', 'num_uses']);
      expect(auth).toMatchObject({ policies: ['app', 'default'], token_policies: ['app', 'default'], metadata: { username: 'alice' }, lease_duration: 600, renewable: true, token_type: 'service', orphan: true, num_uses: 0 });
      expect(auth.client_token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
      const token = auth.client_token as string;

      const look = await get('auth/token/lookup-self', token);
      expect(look.status).toBe(200);
      expect(look.body.data).toMatchObject({ path: 'auth/userpass/login/alice', display_name: 'userpass-alice', meta: { username: 'alice' }, policies: ['app', 'default'], orphan: true, creation_ttl: 600 });
      expect((await put('secret/data/app/db', token, { data: { pw: 'x' } })).status).toBe(200);
      const denied = await get('secret/data/other', token);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ errors: [MULTI_DENIED] });
      // Managing users is a path like any other: the login's policies do not grant it.
      expect((await get('auth/userpass/users/alice', token)).status).toBe(403);

      // Renewal is capped by token_max_ttl (30m) from creation.
      const renewed = await put('auth/token/renew-self', token, { increment: '5h' });
      expect(renewed.status).toBe(200);
      expect(renewed.body.auth.lease_duration).toBeGreaterThan(1790);
      expect(renewed.body.auth.lease_duration).toBeLessThanOrEqual(1800);
    });

    it('answers one error for a wrong password and an unknown user', async () => {
      for (const [user, password] of [['alice', 'wrong'], ['nobody', 'correct horse']]) {
        const r = await request(h.app).post(`/v1/auth/userpass/login/${user}`).send({ password });
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ errors: ['invalid username or password'] });
      }
      // No such method: a login path under nothing is not unauthenticated.
      const none = await request(h.app).post('/v1/auth/nothing/login/alice').send({ password: 'x' });
      expect(none.status).toBe(403);
    });

    it('renews a login token only while its user exists with the same policies', async () => {
      expect((await put('auth/userpass/users/frank', root, { password: 'pw', token_policies: 'app' })).status).toBe(204);
      const login = await request(h.app).post('/v1/auth/userpass/login/frank').send({ password: 'pw' });
      const token = login.body.auth.client_token as string;
      expect((await put('auth/token/renew-self', token, { increment: '1h' })).status).toBe(200);
      expect((await put('auth/userpass/users/frank/policies', root, { token_policies: 'default' })).status).toBe(204);
      const changed = await put('auth/token/renew-self', token, { increment: '1h' });
      expect(changed.status).toBe(400);
      expect(changed.body).toEqual({ errors: ['policies have changed, not renewing'] });
      expect((await put('auth/userpass/users/frank/policies', root, { token_policies: 'app' })).status).toBe(204);
      expect((await put('auth/token/renew', root, { token, increment: '1h' })).status).toBe(200);
      expect((await request(h.app).delete('/v1/auth/userpass/users/frank').set(as(root))).status).toBe(204);
      const gone = await put('auth/token/renew-self', token, {});
      expect(gone.body).toEqual({ errors: ['user no longer exists, not renewing'] });
      // Not renewed, but still valid until it expires (as in Vault).
      expect((await get('auth/token/lookup-self', token)).status).toBe(200);
    });

    it('changes passwords and policies; a user admin policy manages users', async () => {
      const admin = (await put('auth/token/create', root, { policies: ['userpass-admin'] })).body.auth.client_token as string;
      expect((await put('auth/userpass/users/carol', admin, { password: 'one', token_policies: ['app'] })).status).toBe(204);
      expect((await put('auth/userpass/users/carol/password', admin, { password: 'two' })).status).toBe(204);
      expect((await request(h.app).post('/v1/auth/userpass/login/carol').send({ password: 'one' })).status).toBe(400);
      const ok = await request(h.app).post('/v1/auth/userpass/login/carol').send({ password: 'two' });
      expect(ok.status).toBe(200);
      // The mount's tuned default TTL (1h) applies when the user sets none.
      expect(ok.body.auth.lease_duration).toBe(3600);
      expect((await put('auth/userpass/users/carol/policies', admin, { token_policies: 'default' })).status).toBe(204);
      expect((await get('auth/userpass/users/carol', admin)).body.data.token_policies).toEqual(['default']);
      expect((await request(h.app).delete('/v1/auth/userpass/users/carol').set(as(admin))).status).toBe(204);
      expect((await request(h.app).post('/v1/auth/userpass/login/carol').send({ password: 'two' })).status).toBe(400);
      expect((await put('auth/userpass/users/nobody/password', admin, { password: 'x' })).body).toEqual({ errors: ['username does not exist'] });
    });

    it('refuses token settings this server does not support, and root policies at login', async () => {
      expect((await put('auth/userpass/users/dave', root, { password: 'p', token_type: 'batch' })).body).toEqual({ errors: ['batch tokens are not supported by this server'] });
      expect((await put('auth/userpass/users/dave', root, { password: 'p', token_period: '1h' })).body).toEqual({ errors: ['periodic tokens are not supported by this server'] });
      expect((await put('auth/userpass/users/dave', root, { password: 'p', token_ttl: '2h', token_max_ttl: '1h' })).status).toBe(400);
      expect((await put('auth/userpass/users/dave', root, { password: 'p', token_policies: 'root' })).status).toBe(204);
      const login = await request(h.app).post('/v1/auth/userpass/login/dave').send({ password: 'p' });
      expect(login.status).toBe(400);
      expect(login.body).toEqual({ errors: ['auth methods cannot create root tokens'] });
    });
  });

  describe('approle', () => {
    const role = 'auth/approle/role/ci';
    let roleId = '';

    it('manages roles and reads the role ID', async () => {
      const w = await put(role, root, { token_policies: ['app'], token_ttl: '20m', token_max_ttl: '1h', secret_id_num_uses: 5, secret_id_ttl: '10m', token_num_uses: 3 });
      expect(w.status).toBe(204);
      const r = await get(role, root);
      expect(r.status).toBe(200);
      expect(r.body.mount_type).toBe('approle');
      expect(r.body.data).toMatchObject({ bind_secret_id: true, secret_id_num_uses: 5, secret_id_ttl: 600, token_policies: ['app'], token_ttl: 1200, token_max_ttl: 3600, token_num_uses: 3 });
      const id = await get(`${role}/role-id`, root);
      expect(id.status).toBe(200);
      roleId = id.body.data.role_id;
      expect(roleId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await request(h.app).get('/v1/auth/approle/role?list=true').set(as(root))).body.data.keys).toEqual(['ci']);
      expect((await put(role, root, { bind_secret_id: false })).body).toEqual({ errors: ['at least one constraint should be enabled on the role'] });
    });

    it('generates secret IDs within the role limits, looks them up without revealing them, logs in', async () => {
      const over = await put(`${role}/secret-id`, root, { num_uses: 6 });
      expect(over.body).toEqual({ errors: ["num_uses cannot be higher than the role's secret_id_num_uses"] });
      const gen = await put(`${role}/secret-id`, root, { metadata: '{"ci":"yes"}', num_uses: 2 });
      expect(gen.status).toBe(200);
      expect(Object.keys(gen.body.data).sort()).toEqual(['secret_id', 'secret_id_accessor', 'secret_id_num_uses', 'secret_id_ttl']);
      expect(gen.body.data).toMatchObject({ secret_id_num_uses: 2, secret_id_ttl: 600 });
      const secretId = gen.body.data.secret_id as string;

      const look = await put(`${role}/secret-id/lookup`, root, { secret_id: secretId });
      expect(look.status).toBe(200);
      expect(look.body.data).toMatchObject({ metadata: { ci: 'yes' }, secret_id_accessor: gen.body.data.secret_id_accessor, secret_id_num_uses: 2, secret_id_ttl: 600 });
      expect(look.text).not.toContain(secretId);
      const accessors = await request(h.app).get(`/v1/${role}/secret-id?list=true`).set(as(root));
      expect(accessors.body.data.keys).toEqual([gen.body.data.secret_id_accessor]);

      const login = await request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: secretId });
      expect(login.status).toBe(200);
      expect(login.body.auth).toMatchObject({ policies: ['app', 'default'], metadata: { role_name: 'ci' }, lease_duration: 1200, renewable: true, orphan: true, num_uses: 3 });
      const token = login.body.auth.client_token as string;
      expect((await get('auth/token/lookup-self', token)).body.data).toMatchObject({ path: 'auth/approle/login', display_name: 'approle', num_uses: 2 });
      const renewed = await put('auth/token/renew-self', token, { increment: '2h' });
      expect(renewed.status).toBe(200);
      // Capped by the role's token_max_ttl (1h) from creation.
      expect(renewed.body.auth.lease_duration).toBeLessThanOrEqual(3600);
      expect(renewed.body.auth.lease_duration).toBeGreaterThan(3590);

      expect((await request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: secretId })).status).toBe(200);
      // Both uses are gone: the secret ID no longer exists.
      const third = await request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: secretId });
      expect(third.status).toBe(400);
      expect(third.body).toEqual({ errors: ['invalid role or secret ID'] });
      expect((await put(`${role}/secret-id/lookup`, root, { secret_id: secretId })).status).toBe(204);
    });

    it('answers the anchor errors for bad credentials', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'missing role_id'],
        [{ role_id: roleId }, 'missing secret_id'],
        [{ role_id: roleId, secret_id: 'nope' }, 'invalid role or secret ID'],
        [{ role_id: 'nope', secret_id: 'nope' }, 'invalid role or secret ID'],
      ];
      for (const [body, message] of cases) {
        const r = await request(h.app).post('/v1/auth/approle/login').send(body);
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ errors: [message] });
      }
    });

    it('a secret ID with one use admits exactly one of 20 concurrent logins', async () => {
      const gen = await put(`${role}/secret-id`, root, { num_uses: 1 });
      const secretId = gen.body.data.secret_id as string;
      const results = await Promise.all(
        Array.from({ length: 20 }, () => request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: secretId })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 400)).toHaveLength(19);
      for (const r of results) if (r.status === 400) expect(r.body).toEqual({ errors: ['invalid role or secret ID'] });
    });

    it('secret IDs expire with their TTL', async () => {
      const gen = await put(`${role}/secret-id`, root, { ttl: '1s' });
      expect(gen.body.data.secret_id_ttl).toBe(1);
      await new Promise((r) => setTimeout(r, 1_300));
      const login = await request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: gen.body.data.secret_id });
      expect(login.status).toBe(400);
      expect(login.body).toEqual({ errors: ['invalid role or secret ID'] });
    });

    it('destroys secret IDs by value and by accessor; a custom role ID moves the index', async () => {
      const a = (await put(`${role}/secret-id`, root, {})).body.data;
      const b = (await put(`${role}/secret-id`, root, {})).body.data;
      expect((await put(`${role}/secret-id/destroy`, root, { secret_id: a.secret_id })).status).toBe(204);
      expect((await put(`${role}/secret-id-accessor/destroy`, root, { secret_id_accessor: b.secret_id_accessor })).status).toBe(204);
      for (const s of [a.secret_id, b.secret_id]) {
        expect((await request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: s })).status).toBe(400);
      }
      expect((await put(`${role}/role-id`, root, { role_id: 'custom-ci' })).status).toBe(204);
      const c = (await put(`${role}/secret-id`, root, {})).body.data;
      expect((await request(h.app).post('/v1/auth/approle/login').send({ role_id: roleId, secret_id: c.secret_id })).status).toBe(400);
      expect((await request(h.app).post('/v1/auth/approle/login').send({ role_id: 'custom-ci', secret_id: c.secret_id })).status).toBe(200);
    });

    it('disabling the method revokes the tokens its logins issued', async () => {
      const c = (await put(`${role}/secret-id`, root, {})).body.data;
      const login = await request(h.app).post('/v1/auth/approle/login').send({ role_id: 'custom-ci', secret_id: c.secret_id });
      const token = login.body.auth.client_token as string;
      expect((await get('auth/token/lookup-self', token)).status).toBe(200);
      expect((await request(h.app).delete('/v1/sys/auth/approle').set(as(root))).status).toBe(204);
      const after = await get('auth/token/lookup-self', token);
      expect(after.status).toBe(403);
      expect(Object.keys((await get('sys/auth', root)).body.data)).toEqual(['token/', 'userpass/']);
      // Its data went with it: re-enabling starts empty.
      expect((await put('sys/auth/approle', root, { type: 'approle' })).status).toBe(204);
      expect((await get(role, root)).status).toBe(404);
    });
  });

  it('a replica that has not heard of a new method yet still serves its login', async () => {
    const other = await h.replica({ busPrefix: `deaf-${process.pid}-${Date.now()}:` });
    expect((await request(other.app).put('/v1/sys/unseal').send({ key: unsealKey })).status).toBe(200);
    expect((await put('sys/auth/lagged', root, { type: 'userpass' })).status).toBe(204);
    expect((await put('auth/lagged/users/erin', root, { password: 'pw' })).status).toBe(204);
    const login = await request(other.app).post('/v1/auth/lagged/login/erin').send({ password: 'pw' });
    expect(login.status).toBe(200);
    expect(login.body.auth.metadata).toEqual({ username: 'erin' });
  });
});
