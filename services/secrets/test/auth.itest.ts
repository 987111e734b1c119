// Issue 3, items 3 (tokens), 4 (policies) and 5 (mounts).
import request from 'supertest';
import { INVALID_TOKEN, MULTI_DENIED, initAndUnseal, startHarness, type Harness } from './harness';

describe('tokens, policies, mounts', () => {
  let h: Harness;
  let root = '';
  let unsealKey = '';
  const as = (t: string) => ({ 'X-Vault-Token': t });
  const create = async (token: string, body: Record<string, unknown>) => {
    const r = await request(h.app).post('/v1/auth/token/create').set(as(token)).send(body);
    if (r.status !== 200) throw new Error(`create failed ${r.status} ${r.text}`);
    return r.body.auth as { client_token: string; accessor: string; lease_duration: number; policies: string[] };
  };
  beforeAll(async () => {
    h = await startHarness();
    const init = await initAndUnseal(h.app);
    root = init.rootToken;
    unsealKey = init.keys[0] as string;
    await request(h.app)
      .put('/v1/sys/policies/acl/tokens')
      .set(as(root))
      .send({ policy: 'path "auth/token/*" { capabilities = ["update"] }' })
      .expect(204);
  });
  afterAll(async () => {
    await h.close();
  });

  describe('tokens', () => {
    it('creates a token with the reference auth block', async () => {
      const r = await request(h.app)
        .post('/v1/auth/token/create')
        .set(as(root))
        .send({ policies: ['web', 'stage'], meta: { user: 'armon' }, ttl: '1h', renewable: true, display_name: 'My App', num_uses: 0 });
      expect(r.status).toBe(200);
      expect(r.body.data).toBeNull();
      expect(r.body.warnings).toEqual(['Policy "stage" does not exist', 'Policy "web" does not exist']);
      expect(Object.keys(r.body.auth)).toEqual([
        'client_token', 'accessor', 'policies', 'token_policies', 'metadata', 'lease_duration', 'renewable', 'entity_id', 'token_type', 'orphan', 'mfa_requirement', 'num_uses',
      ]);
      expect(r.body.auth).toMatchObject({
        policies: ['default', 'stage', 'web'],
        token_policies: ['default', 'stage', 'web'],
        metadata: { user: 'armon' },
        lease_duration: 3600,
        renewable: true,
        entity_id: '',
        token_type: 'service',
        orphan: false,
        mfa_requirement: null,
        num_uses: 0,
      });
      expect(r.body.auth.client_token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
      expect(r.body.auth.accessor).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(r.body.mount_type).toBe('token');

      const look = await request(h.app).get('/v1/auth/token/lookup-self').set(as(r.body.auth.client_token));
      expect(look.status).toBe(200);
      expect(look.body.data).toMatchObject({
        accessor: r.body.auth.accessor,
        display_name: 'token-my-app',
        id: r.body.auth.client_token,
        meta: { user: 'armon' },
        orphan: false,
        path: 'auth/token/create',
        policies: ['default', 'stage', 'web'],
        renewable: true,
        type: 'service',
        creation_ttl: 3600,
        explicit_max_ttl: 0,
      });
      expect(look.body.data.ttl).toBeGreaterThan(3590);
      expect(look.body.data.expire_time).toMatch(/Z$/);
    });

    it('accepts the token in X-Secrets-Token, Authorization: Bearer and X-Vault-Token', async () => {
      for (const headers of [{ 'X-Secrets-Token': root }, { Authorization: `Bearer ${root}` }, { 'X-Vault-Token': root }]) {
        const r = await request(h.app).get('/v1/auth/token/lookup-self').set(headers);
        expect(r.status).toBe(200);
        expect(r.body.data).toMatchObject({ policies: ['root'], ttl: 0, expire_time: null, path: 'auth/token/root', display_name: 'root' });
      }
      const none = await request(h.app).get('/v1/auth/token/lookup-self');
      expect(none.status).toBe(403);
      expect(none.body).toEqual({ errors: ['permission denied'] });
      const wrong = await request(h.app).get('/v1/auth/token/lookup-self').set(as('hvs.AAAAAAAAAAAAAAAAAAAAAAAA'));
      expect(wrong.body).toEqual({ errors: [INVALID_TOKEN] });
    });

    it('lookup, lookup-accessor, renew, explicit max ttl', async () => {
      const t = await create(root, { policies: ['default'], ttl: '10m', explicit_max_ttl: '20m' });
      let r = await request(h.app).post('/v1/auth/token/lookup').set(as(root)).send({ token: t.client_token });
      expect(r.body.data.id).toBe(t.client_token);
      r = await request(h.app).post('/v1/auth/token/lookup-accessor').set(as(root)).send({ accessor: t.accessor });
      expect(r.body.data).toMatchObject({ id: '', accessor: t.accessor });
      r = await request(h.app).post('/v1/auth/token/renew-self').set(as(t.client_token)).send({ increment: '15m' });
      expect(r.status).toBe(200);
      expect(r.body.auth.lease_duration).toBe(900);
      r = await request(h.app).post('/v1/auth/token/renew').set(as(root)).send({ token: t.client_token, increment: 3600 });
      expect(r.body.auth.lease_duration).toBeLessThanOrEqual(1200);
      expect(r.body.auth.lease_duration).toBeGreaterThan(1190);
      r = await request(h.app).post('/v1/auth/token/renew-self').set(as(root)).send({});
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: ['lease is not renewable'] });
      r = await request(h.app).post('/v1/auth/token/lookup').set(as(root)).send({ token: 'hvs.nothing' });
      expect(r.status).toBe(403);
    });

    it('revoking a parent revokes its children; orphans survive', async () => {
      const parent = await create(root, { policies: ['tokens'] });
      const child = await create(parent.client_token, {});
      const grandchild = await create(child.client_token, {});
      const orphan = await request(h.app).post('/v1/auth/token/create-orphan').set(as(parent.client_token)).send({});
      expect(orphan.status).toBe(200);
      expect(orphan.body.auth.orphan).toBe(true);
      const r = await request(h.app).post('/v1/auth/token/revoke').set(as(root)).send({ token: parent.client_token });
      expect(r.status).toBe(204);
      for (const t of [parent, child, grandchild]) {
        expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(t.client_token))).status).toBe(403);
      }
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(orphan.body.auth.client_token))).status).toBe(200);
    });

    it('LIST auth/token/accessors needs sudo and lists live tokens', async () => {
      const t = await create(root, { policies: ['tokens'] });
      const r = await request(h.app).get('/v1/auth/token/accessors?list=true').set(as(root));
      expect(r.status).toBe(200);
      expect(r.body.data.keys).toContain(t.accessor);
      expect(r.body.data.keys).toEqual([...r.body.data.keys].sort());
      const denied = await request(h.app).get('/v1/auth/token/accessors?list=true').set(as(t.client_token));
      expect(denied.status).toBe(403);
    });

    it('a child never outlives its parent', async () => {
      const parent = await create(root, { policies: ['tokens'], ttl: '10m' });
      const child = await create(parent.client_token, { ttl: '1h' });
      expect(child.lease_duration).toBeLessThanOrEqual(600);
      expect(child.lease_duration).toBeGreaterThan(590);
      const renewed = await request(h.app).post('/v1/auth/token/renew-self').set(as(child.client_token)).send({ increment: '2h' });
      expect(renewed.status).toBe(200);
      expect(renewed.body.auth.lease_duration).toBeLessThanOrEqual(600);
    });

    it('revoke-self, revoke-accessor, revoke-orphan', async () => {
      const a = await create(root, {});
      expect((await request(h.app).post('/v1/auth/token/revoke-self').set(as(a.client_token))).status).toBe(204);
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(a.client_token))).status).toBe(403);
      const b = await create(root, {});
      expect((await request(h.app).post('/v1/auth/token/revoke-accessor').set(as(root)).send({ accessor: b.accessor })).status).toBe(204);
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(b.client_token))).status).toBe(403);
      const p = await create(root, { policies: ['tokens'] });
      const c = await create(p.client_token, {});
      expect((await request(h.app).post('/v1/auth/token/revoke-orphan').set(as(root)).send({ token: p.client_token })).status).toBe(204);
      const look = await request(h.app).get('/v1/auth/token/lookup-self').set(as(c.client_token));
      expect(look.status).toBe(200);
      expect(look.body.data.orphan).toBe(true);
    });

    it('expiry is enforced; num_uses is counted', async () => {
      const short = await create(root, { ttl: '1s' });
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(short.client_token))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1200));
      const expired = await request(h.app).get('/v1/auth/token/lookup-self').set(as(short.client_token));
      expect(expired.status).toBe(403);
      expect(expired.body).toEqual({ errors: [INVALID_TOKEN] });

      const limited = await create(root, { num_uses: 2 });
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(limited.client_token))).body.data.num_uses).toBe(1);
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(limited.client_token))).status).toBe(200);
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as(limited.client_token))).status).toBe(403);
    });

    it('non-root parents: policy subset, no custom id, no orphan via create', async () => {
      const parent = await create(root, { policies: ['tokens'] });
      let r = await request(h.app).post('/v1/auth/token/create').set(as(parent.client_token)).send({ policies: ['admin'] });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: ['child policies must be subset of parent'] });
      r = await request(h.app).post('/v1/auth/token/create').set(as(parent.client_token)).send({ id: 'custom' });
      expect(r.body).toEqual({ errors: ['root or sudo privileges required to specify token id'] });
      r = await request(h.app).post('/v1/auth/token/create').set(as(parent.client_token)).send({ no_parent: true });
      expect(r.body).toEqual({ errors: ['root or sudo privileges required to create orphan token'] });
      r = await request(h.app).post('/v1/auth/token/create').set(as(parent.client_token)).send({});
      expect(r.status).toBe(200);
      expect(r.body.auth.policies).toEqual(['default', 'tokens']);
      r = await request(h.app).post('/v1/auth/token/create').set(as(root)).send({ id: 'my-own-token', policies: ['default'] });
      expect(r.body.auth.client_token).toBe('my-own-token');
      expect((await request(h.app).get('/v1/auth/token/lookup-self').set(as('my-own-token'))).status).toBe(200);
    });
  });

  describe('policies', () => {
    it('CRUD on sys/policies/acl and the legacy sys/policy', async () => {
      let r = await request(h.app).put('/v1/sys/policies/acl/Deploy').set(as(root)).send({ policy: 'path "secret/data/app/*" { capabilities = ["read"] }' });
      expect(r.status).toBe(204);
      r = await request(h.app).get('/v1/sys/policies/acl/deploy').set(as(root));
      expect(r.body.data).toEqual({ name: 'deploy', policy: 'path "secret/data/app/*" { capabilities = ["read"] }' });
      r = await request(h.app).get('/v1/sys/policies/acl?list=true').set(as(root));
      expect(r.body.data.keys).toEqual(expect.arrayContaining(['default', 'deploy']));

      r = await request(h.app).put('/v1/sys/policy/legacy').set(as(root)).send({ name: 'legacy', rules: 'path "kv1/*" { capabilities = ["list"] }' });
      expect(r.status).toBe(200); // `name` is not a field: reported as a warning, like Vault
      expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [name]']);
      r = await request(h.app).get('/v1/sys/policy/legacy').set(as(root));
      expect(r.body).toMatchObject({ name: 'legacy', rules: 'path "kv1/*" { capabilities = ["list"] }', data: { name: 'legacy' } });
      r = await request(h.app).get('/v1/sys/policy').set(as(root));
      expect(r.body.policies).toEqual(expect.arrayContaining(['default', 'legacy', 'root']));
      expect(r.body.keys).toEqual(r.body.policies);
      expect(r.body.data.policies).toEqual(r.body.policies);

      expect((await request(h.app).delete('/v1/sys/policy/legacy').set(as(root))).status).toBe(204);
      expect((await request(h.app).get('/v1/sys/policy/legacy').set(as(root))).status).toBe(404);
      expect((await request(h.app).delete('/v1/sys/policy/default').set(as(root))).body).toEqual({ errors: ['cannot delete default policy'] });
      expect((await request(h.app).delete('/v1/sys/policy/root').set(as(root))).body).toEqual({ errors: ['cannot delete "root" policy'] });
      expect((await request(h.app).put('/v1/sys/policy/root').set(as(root)).send({ policy: 'path "x" {}' })).body).toEqual({ errors: ['cannot update "root" policy'] });
      r = await request(h.app).put('/v1/sys/policies/acl/bad').set(as(root)).send({ policy: 'path "x" { capabilities = ["fly"] }' });
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toMatch(/^failed to parse policy: /);
    });

    it('enforces capabilities, deny, globs, and create vs update', async () => {
      await request(h.app)
        .put('/v1/sys/policies/acl/app')
        .set(as(root))
        .send({
          policy: `
path "secret/data/app/*" { capabilities = ["create", "read", "list"] }
path "secret/data/app/locked" { capabilities = ["deny"] }
path "secret/metadata/app/*" { capabilities = ["list"] }
path "secret/data/+/shared" { capabilities = ["read", "update"] }
`,
        })
        .expect(204);
      const t = (await create(root, { policies: ['app'] })).client_token;
      // create allowed (new key), update not (existing key)
      expect((await request(h.app).post('/v1/secret/data/app/one').set(as(t)).send({ data: { a: 1 } })).status).toBe(200);
      const upd = await request(h.app).post('/v1/secret/data/app/one').set(as(t)).send({ data: { a: 2 } });
      expect(upd.status).toBe(403);
      expect(upd.body).toEqual({ errors: [MULTI_DENIED] });
      expect((await request(h.app).get('/v1/secret/data/app/one').set(as(t))).status).toBe(200);
      expect((await request(h.app).get('/v1/secret/data/app/locked').set(as(t))).status).toBe(403);
      expect((await request(h.app).get('/v1/secret/metadata/app?list=true').set(as(t))).status).toBe(200);
      expect((await request(h.app).get('/v1/secret/data/other').set(as(t))).status).toBe(403);
      expect((await request(h.app).delete('/v1/secret/data/app/one').set(as(t))).status).toBe(403);
      await request(h.app).post('/v1/secret/data/team/shared').set(as(root)).send({ data: { s: 1 } }).expect(200);
      expect((await request(h.app).post('/v1/secret/data/team/shared').set(as(t)).send({ data: { s: 2 } })).status).toBe(200);
      expect((await request(h.app).get('/v1/sys/mounts').set(as(t))).status).toBe(403);
      // Help needs some capability on the path; `?help=0` is a plain read and needs `read`.
      await request(h.app).post('/v1/secret/data/lister-only').set(as(root)).send({ data: { s: 1 } }).expect(200);
      await request(h.app).put('/v1/sys/policies/acl/lister').set(as(root)).send({ policy: 'path "secret/data/lister-only" { capabilities = ["list"] }' }).expect(204);
      const lister = (await create(root, { policies: ['lister'] })).client_token;
      expect((await request(h.app).get('/v1/secret/data/lister-only?help=1').set(as(lister))).status).toBe(200);
      expect((await request(h.app).get('/v1/secret/data/lister-only?help=0').set(as(lister))).status).toBe(403);
      expect((await request(h.app).get('/v1/secret/data/lister-only?help=maybe').set(as(lister))).status).toBe(403);
      // Reference §7: help needs a token allowed on the path. Nothing granted there, or a
      // deny: 403 in the envelope's error shape, on every table (a mount, sys, auth/token).
      for (const path of ['/v1/secret/data/elsewhere?help=1', '/v1/secret/?help=1', '/v1/sys/mounts?help=1', '/v1/auth/token/create?help=1']) {
        const denied = await request(h.app).get(path).set(as(lister));
        expect({ path, status: denied.status, body: denied.body }).toEqual({ path, status: 403, body: { errors: [MULTI_DENIED] } });
        expect((await request(h.app).get(path).set(as(root))).status).toBe(200);
      }
      expect((await request(h.app).get('/v1/secret/data/app/locked?help=1').set(as(t))).status).toBe(403);
      const helped = await request(h.app).get('/v1/secret/data/app/x?help=1').set(as(t));
      expect(helped.status).toBe(200);
      expect(helped.headers['cache-control']).toBe('no-store');
      expect(typeof helped.body.help).toBe('string');
      // Unmounted path, unprivileged: 403 rather than revealing the route table.
      expect((await request(h.app).get('/v1/nomount/x').set(as(t))).status).toBe(403);

      const caps = await request(h.app).post('/v1/sys/capabilities-self').set(as(t)).send({ paths: ['secret/data/app/x', 'secret/data/app/locked', 'sys/mounts'] });
      expect(caps.status).toBe(200);
      expect(caps.body['secret/data/app/x']).toEqual(['create', 'list', 'read']);
      expect(caps.body['secret/data/app/locked']).toEqual(['deny']);
      expect(caps.body['sys/mounts']).toEqual(['deny']);
      expect(caps.body.data['secret/data/app/x']).toEqual(['create', 'list', 'read']);
      const single = await request(h.app).post('/v1/sys/capabilities-self').set(as(root)).send({ path: 'anything' });
      expect(single.body.capabilities).toEqual(['root']);

      // A policy change is picked up without re-issuing the token.
      await request(h.app).put('/v1/sys/policies/acl/app').set(as(root)).send({ policy: 'path "secret/data/app/*" { capabilities = ["read", "update"] }' }).expect(204);
      expect((await request(h.app).post('/v1/secret/data/app/one').set(as(t)).send({ data: { a: 3 } })).status).toBe(200);
    });

    it('policy changes reach another replica through the bus', async () => {
      const replica = await h.replica();
      expect(replica.services.barrier.isSealed()).toBe(true);
      await request(replica.app).put('/v1/sys/unseal').send({ key: unsealKey }).expect(200);
      await request(h.app).put('/v1/sys/policies/acl/bus').set(as(root)).send({ policy: 'path "secret/data/bus" { capabilities = ["read"] }' }).expect(204);
      await request(h.app).post('/v1/secret/data/bus').set(as(root)).send({ data: { b: 1 } }).expect(200);
      const t = (await create(root, { policies: ['bus'] })).client_token;
      expect((await request(replica.app).get('/v1/secret/data/bus').set(as(t))).status).toBe(200);
      await request(h.app).put('/v1/sys/policies/acl/bus').set(as(root)).send({ policy: 'path "secret/data/bus" { capabilities = ["deny"] }' }).expect(204);
      let status = 200;
      for (let i = 0; i < 100 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await request(replica.app).get('/v1/secret/data/bus').set(as(t))).status;
      }
      expect(status).toBe(403);
      // Revocation reaches the replica's token cache as well.
      await request(h.app).post('/v1/auth/token/revoke').set(as(root)).send({ token: t }).expect(204);
      // The replica cached the token (5 s TTL); the bus must invalidate it well before that.
      const deadline = Date.now() + 3000;
      let look = await request(replica.app).get('/v1/auth/token/lookup-self').set(as(t));
      while (look.status !== 403 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        look = await request(replica.app).get('/v1/auth/token/lookup-self').set(as(t));
      }
      expect(look.status).toBe(403);
      expect(look.body).toEqual({ errors: [INVALID_TOKEN] });
      // A mount enabled on one replica routes on the other.
      await request(h.app).post('/v1/sys/mounts/busmount').set(as(root)).send({ type: 'kv' }).expect(204);
      let mounted = 404;
      for (let i = 0; i < 100 && mounted !== 204; i++) {
        await new Promise((r) => setTimeout(r, 50));
        mounted = (await request(replica.app).put('/v1/busmount/k').set(as(root)).send({ v: 1 })).status;
      }
      expect(mounted).toBe(204);
    });
  });

  describe('mounts', () => {
    it('lists, enables, rejects conflicts and unknown types, tunes, disables', async () => {
      let r = await request(h.app).get('/v1/sys/mounts').set(as(root));
      expect(r.body['secret/']).toMatchObject({ type: 'kv', options: { version: '2' }, description: expect.any(String) });
      expect(r.body.data['sys/']).toMatchObject({ type: 'system' });
      expect(r.body.mount_type).toBe('system');

      r = await request(h.app).post('/v1/sys/mounts/team/kv').set(as(root)).send({ type: 'kv', options: { version: 2 }, description: 'team', mount_point: 'team/kv' });
      expect(r.status).toBe(200);
      expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [mount_point]']);
      r = await request(h.app).post('/v1/sys/mounts/team/kv').set(as(root)).send({ type: 'kv' });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: ['path is already in use at team/kv/'] });
      r = await request(h.app).post('/v1/sys/mounts/team').set(as(root)).send({ type: 'kv' });
      expect(r.body).toEqual({ errors: ['path is already in use at team/kv/'] });
      r = await request(h.app).post('/v1/sys/mounts/nope').set(as(root)).send({ type: 'nope' });
      expect(r.body).toEqual({ errors: ['plugin not found in the catalog: nope'] });
      r = await request(h.app).post('/v1/sys/mounts/sys').set(as(root)).send({ type: 'kv' });
      expect(r.status).toBe(400);

      r = await request(h.app).get('/v1/sys/mounts/team/kv').set(as(root));
      expect(r.body).toMatchObject({ type: 'kv', options: { version: '2' }, description: 'team' });
      await request(h.app).post('/v1/team/kv/data/x').set(as(root)).send({ data: { a: 1 } }).expect(200);

      r = await request(h.app).post('/v1/sys/mounts/team/kv/tune').set(as(root)).send({ default_lease_ttl: '1h', max_lease_ttl: '2h', description: 'tuned' });
      expect(r.status).toBe(204);
      r = await request(h.app).get('/v1/sys/mounts/team/kv/tune').set(as(root));
      expect(r.body.data).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 7200, description: 'tuned' });

      expect((await request(h.app).delete('/v1/sys/mounts/team/kv').set(as(root))).status).toBe(204);
      expect((await request(h.app).get('/v1/team/kv/data/x').set(as(root))).status).toBe(404);
      const rows = await h.prisma.$queryRawUnsafe<{ n: bigint }[]>("SELECT count(*) AS n FROM secrets.entries WHERE path LIKE 'logical/%'");
      const before = Number(rows[0]?.n);
      // Re-mounting the same path starts empty (the data was removed).
      await request(h.app).post('/v1/sys/mounts/team/kv').set(as(root)).send({ type: 'kv-v2' }).expect(204);
      expect((await request(h.app).get('/v1/team/kv/data/x').set(as(root))).status).toBe(404);
      expect(before).toBeGreaterThanOrEqual(0);
      expect((await request(h.app).delete('/v1/sys/mounts/never-mounted').set(as(root))).status).toBe(204);
    });

    it('upgrades a v1 mount to v2 with tune', async () => {
      await request(h.app).post('/v1/sys/mounts/up').set(as(root)).send({ type: 'kv' }).expect(204);
      await request(h.app).post('/v1/up/a/b').set(as(root)).send({ k: 'v' }).expect(204);
      await request(h.app).post('/v1/sys/mounts/up/tune').set(as(root)).send({ options: { version: '2' } }).expect(204);
      const r = await request(h.app).get('/v1/up/data/a/b').set(as(root));
      expect(r.status).toBe(200);
      expect(r.body.data.data).toEqual({ k: 'v' });
      expect(r.body.data.metadata.version).toBe(1);
      const down = await request(h.app).post('/v1/sys/mounts/up/tune').set(as(root)).send({ options: { version: '1' } });
      expect(down.status).toBe(400);
    });

    it('sys/internal/ui/mounts shows a token only the mounts its policies reach (issue 33)', async () => {
      await request(h.app).post('/v1/sys/mounts/ui-seen').set(as(root)).send({ type: 'kv-v2' }).expect(204);
      await request(h.app).post('/v1/sys/mounts/ui-hidden').set(as(root)).send({ type: 'kv' }).expect(204);
      await request(h.app)
        .put('/v1/sys/policies/acl/ui-one')
        .set(as(root))
        .send({ policy: 'path "ui-seen/data/app/*" { capabilities = ["read"] }\npath "ui-hidden/*" { capabilities = ["deny"] }' })
        .expect(204);
      const onlyDefault = (await create(root, { policies: ['default'] })).client_token;
      const one = (await create(root, { policies: ['ui-one'] })).client_token;

      const all = await request(h.app).get('/v1/sys/internal/ui/mounts').set(as(root));
      expect(all.status).toBe(200);
      expect(Object.keys(all.body.data.secret)).toEqual(expect.arrayContaining(['ui-seen/', 'ui-hidden/']));
      expect(Object.keys(all.body.data.auth)).toEqual(['token/']);

      const none = await request(h.app).get('/v1/sys/internal/ui/mounts').set(as(onlyDefault));
      expect(none.status).toBe(200);
      expect(none.body.data.secret).not.toHaveProperty(['ui-seen/']);
      expect(none.body.data.secret).not.toHaveProperty(['ui-hidden/']);
      // The default policy reaches auth/token/lookup-self, so the token mount shows.
      expect(Object.keys(none.body.data.auth)).toEqual(['token/']);

      const some = await request(h.app).get('/v1/sys/internal/ui/mounts').set(as(one));
      expect(some.status).toBe(200);
      expect(some.body.data.secret['ui-seen/']).toMatchObject({ type: 'kv', options: { version: '2' } });
      expect(some.body.data.secret).not.toHaveProperty(['ui-hidden/']);

      const single = await request(h.app).get('/v1/sys/internal/ui/mounts/ui-seen/data/app/x').set(as(one));
      expect(single.status).toBe(200);
      expect(single.body.data).toMatchObject({ path: 'ui-seen/', type: 'kv', options: { version: '2' } });
      const denied = (path: string) => ({ errors: [`preflight capability check returned 403, please ensure client's policies grant access to path "${path}"`] });
      let r = await request(h.app).get('/v1/sys/internal/ui/mounts/ui-hidden/x').set(as(one));
      expect(r.status).toBe(403);
      expect(r.body).toEqual(denied('ui-hidden/x/'));
      r = await request(h.app).get('/v1/sys/internal/ui/mounts/ui-seen/x').set(as(onlyDefault));
      expect(r.status).toBe(403);
      expect(r.body).toEqual(denied('ui-seen/x/'));
      // A path under no mount answers exactly as a hidden one: no probing for mounts.
      r = await request(h.app).get('/v1/sys/internal/ui/mounts/no-such-mount/x').set(as(one));
      expect(r.status).toBe(403);
      expect(r.body).toEqual(denied('no-such-mount/x/'));
      r = await request(h.app).get('/v1/sys/internal/ui/mounts/ui-seen/x').set(as('not-a-token'));
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ errors: [INVALID_TOKEN] });
    });
  });
});
