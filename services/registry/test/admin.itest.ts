// Discovery, the admin API (namespaces, tokens), token hashing and read access control.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, bearer, createNamespace, createToken, publish, startRegistry, type Registry } from './registry-harness';
import { sampleModuleTarGz } from './archive-fixtures';

jest.setTimeout(60_000);

let reg: Registry;

beforeAll(async () => {
  reg = await startRegistry();
}, 120_000);
afterAll(async () => {
  await reg.close();
}, 120_000);

describe('discovery', () => {
  it('serves modules.v1 (ending in /) and the v2 base as application/json', async () => {
    const res = await request(reg.app).get('/.well-known/terraform.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ 'modules.v1': '/v1/modules/', 'modules.v2': '/v2/modules/' });
  });
  it('is public even with a bad token (Terraform sends its credentials there too)', async () => {
    const res = await request(reg.app).get('/.well-known/terraform.json').set(bearer('garbage'));
    expect(res.status).toBe(200);
  });
});

describe('namespaces', () => {
  it('needs the admin token', async () => {
    const none = await request(reg.app).post('/v1/admin/namespaces').send({ name: 'acme' });
    expect(none.status).toBe(401);
    expect(none.headers['content-type']).toMatch(/^application\/json/);
    expect(none.body).toEqual({ errors: ['a registry token is required: send "Authorization: Bearer <token>"'] });
    const bad = await request(reg.app).post('/v1/admin/namespaces').set(bearer('nope')).send({ name: 'acme' });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ errors: ['invalid or expired registry token'] });
  });

  it('creates, lists and refuses duplicates, bad names, reserved names and unknown fields', async () => {
    const created = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: 'acme', owner: 'Acme Corp' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'acme', owner: 'Acme Corp', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });

    const dup = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: 'acme' });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ errors: ['namespace acme already exists'] });

    const badName = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: '-bad-' });
    expect(badName.status).toBe(400);
    expect(badName.body.errors[0]).toMatch(/^invalid namespace "-bad-"/);

    const reserved = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: 'search' });
    expect(reserved.status).toBe(400);
    expect(reserved.body).toEqual({ errors: ['namespace "search" is reserved'] });

    const unknown = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({ name: 'other', onwer: 'typo' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ errors: ['unknown field "onwer"'] });

    const missing = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).send({});
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(['missing required field "name"']);

    const notJson = await request(reg.app).post('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN)).set('Content-Type', 'application/json').send('{"name":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.errors[0]).toMatch(/failed to parse JSON input/);

    const list = await request(reg.app).get('/v1/admin/namespaces').set(bearer(ADMIN_TOKEN));
    expect(list.status).toBe(200);
    expect(list.body.namespaces.map((n: { name: string }) => n.name)).toEqual(['acme']);
  });
});

describe('tokens', () => {
  it('returns the secret once, stores only its SHA-256, and lists without secrets', async () => {
    await createNamespace(reg.app, 'tok-ns');
    const res = await request(reg.app).post('/v1/admin/tokens').set(bearer(ADMIN_TOKEN)).send({ namespace: 'tok-ns', description: 'ci' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      token: expect.stringMatching(/^rgt_[A-Za-z0-9_-]{43}$/),
      description: 'ci',
      namespace: 'tok-ns',
      created_at: expect.any(String),
      expires_at: null,
    });
    const rows = await reg.prisma.registryToken.findMany({ where: { id: res.body.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(createHash('sha256').update(res.body.token).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(res.body.token);

    const list = await request(reg.app).get('/v1/admin/tokens').set(bearer(ADMIN_TOKEN));
    expect(list.status).toBe(200);
    const mine = list.body.tokens.find((t: { id: string }) => t.id === res.body.id);
    expect(mine).toEqual({ id: res.body.id, description: 'ci', namespace: 'tok-ns', created_at: expect.any(String), expires_at: null });
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);
  });

  it('refuses tokens for unknown namespaces, bad ttl and unknown fields', async () => {
    const unknownNs = await request(reg.app).post('/v1/admin/tokens').set(bearer(ADMIN_TOKEN)).send({ namespace: 'ghost' });
    expect(unknownNs.status).toBe(400);
    expect(unknownNs.body).toEqual({ errors: ['namespace ghost does not exist; create it first'] });
    const badTtl = await request(reg.app).post('/v1/admin/tokens').set(bearer(ADMIN_TOKEN)).send({ ttl_seconds: 5 });
    expect(badTtl.status).toBe(400);
    expect(badTtl.body.errors[0]).toMatch(/^invalid value for field "ttl_seconds"/);
    const unknown = await request(reg.app).post('/v1/admin/tokens').set(bearer(ADMIN_TOKEN)).send({ namepsace: 'tok-ns' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ errors: ['unknown field "namepsace"'] });
  });

  it('a namespace token cannot use the admin API', async () => {
    await createNamespace(reg.app, 'limited');
    const { token } = await createToken(reg.app, { namespace: 'limited' });
    const res = await request(reg.app).post('/v1/admin/namespaces').set(bearer(token)).send({ name: 'mine' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ errors: ['this operation needs the admin token'] });
  });

  it('a revoked token stops working; an expired token never works', async () => {
    await createNamespace(reg.app, 'revoke');
    const t = await createToken(reg.app, { namespace: 'revoke' });
    const ok = await publish(reg.app, 'revoke/mod/aws/1.0.0', sampleModuleTarGz(), t.token);
    expect(ok.status).toBe(201);
    const del = await request(reg.app).delete(`/v1/admin/tokens/${t.id}`).set(bearer(ADMIN_TOKEN));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const again = await request(reg.app).delete(`/v1/admin/tokens/${t.id}`).set(bearer(ADMIN_TOKEN));
    expect(again.status).toBe(404);
    const notUuid = await request(reg.app).delete('/v1/admin/tokens/not-a-uuid').set(bearer(ADMIN_TOKEN));
    expect(notUuid.status).toBe(404);
    const after = await publish(reg.app, 'revoke/mod/aws/1.0.1', sampleModuleTarGz(), t.token);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ errors: ['invalid or expired registry token'] });

    const expiring = await createToken(reg.app, { namespace: 'revoke', ttl_seconds: 60 });
    await reg.prisma.registryToken.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await publish(reg.app, 'revoke/mod/aws/1.0.2', sampleModuleTarGz(), expiring.token);
    expect(expired.status).toBe(401);
  });

  it('deleting a namespace with modules is refused; an empty one goes with its tokens', async () => {
    const inUse = await request(reg.app).delete('/v1/admin/namespaces/revoke').set(bearer(ADMIN_TOKEN));
    expect(inUse.status).toBe(409);
    expect(inUse.body).toEqual({ errors: ['namespace revoke still has modules; delete their versions first'] });
    await createNamespace(reg.app, 'empty-ns');
    const t = await createToken(reg.app, { namespace: 'empty-ns' });
    const del = await request(reg.app).delete('/v1/admin/namespaces/empty-ns').set(bearer(ADMIN_TOKEN));
    expect(del.status).toBe(204);
    expect(await reg.prisma.registryToken.count({ where: { id: t.id } })).toBe(0);
    const missing = await request(reg.app).delete('/v1/admin/namespaces/empty-ns').set(bearer(ADMIN_TOKEN));
    expect(missing.status).toBe(404);
  });

  it('marks a module verified (admin only), refusing unknown modules and bad bodies', async () => {
    const ok = await request(reg.app).patch('/v1/admin/modules/revoke/mod/aws').set(bearer(ADMIN_TOKEN)).send({ verified: true });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ namespace: 'revoke', name: 'mod', provider: 'aws', verified: true });
    const listed = await request(reg.app).get('/v1/modules?verified=true');
    expect(listed.body.modules.map((m: { id: string }) => m.id)).toEqual(['revoke/mod/aws/1.0.0']);
    const unknown = await request(reg.app).patch('/v1/admin/modules/revoke/ghost/aws').set(bearer(ADMIN_TOKEN)).send({ verified: true });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ errors: ['module revoke/ghost/aws not found'] });
    const missing = await request(reg.app).patch('/v1/admin/modules/revoke/mod/aws').set(bearer(ADMIN_TOKEN)).send({});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ errors: ['missing required field "verified"'] });
    const notBool = await request(reg.app).patch('/v1/admin/modules/revoke/mod/aws').set(bearer(ADMIN_TOKEN)).send({ verified: 'maybe' });
    expect(notBool.status).toBe(400);
    const extra = await request(reg.app).patch('/v1/admin/modules/revoke/mod/aws').set(bearer(ADMIN_TOKEN)).send({ verified: false, partner: true });
    expect(extra.status).toBe(400);
    expect(extra.body).toEqual({ errors: ['unknown field "partner"'] });
    const { token } = await createToken(reg.app, { namespace: 'revoke' });
    const notAdmin = await request(reg.app).patch('/v1/admin/modules/revoke/mod/aws').set(bearer(token)).send({ verified: false });
    expect(notAdmin.status).toBe(403);
  });

  it('answers 405 with Allow for unsupported methods', async () => {
    const res = await request(reg.app).put('/v1/admin/tokens/x').set(bearer(ADMIN_TOKEN)).send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('DELETE');
    expect(res.body).toEqual({ errors: ['unsupported operation'] });
  });
});

describe('private reads (REGISTRY_PUBLIC_READS=false)', () => {
  let priv: Registry;
  beforeAll(async () => {
    priv = await startRegistry({ publicReads: false }, { db: reg.db, prisma: reg.prisma, readPool: reg.readPool, blobRoot: reg.blobRoot });
  });

  it('needs a valid token for every read endpoint, read-only tokens suffice', async () => {
    const readOnly = await createToken(priv.app, { description: 'reader' });
    for (const path of ['/v1/modules', '/v1/modules/revoke', '/v1/modules/search?q=demo', '/v1/modules/revoke/mod', '/v1/modules/revoke/mod/aws', '/v1/modules/revoke/mod/aws/versions', '/v1/modules/revoke/mod/aws/1.0.0', '/v1/modules/revoke/mod/aws/1.0.0/download', '/v1/modules/revoke/mod/aws/download', '/v2/modules/revoke/mod/aws/downloads/summary']) {
      const anon = await request(priv.app).get(path);
      expect([path, anon.status, anon.body]).toEqual([path, 401, { errors: ['a registry token is required: send "Authorization: Bearer <token>"'] }]);
      const bad = await request(priv.app).get(path).set(bearer('rgt_wrong'));
      expect([path, bad.status]).toEqual([path, 401]);
      const ok = await request(priv.app).get(path).set(bearer(readOnly.token));
      expect([path, ok.status]).toEqual([path, path.endsWith('/aws/download') ? 302 : path.endsWith('/download') ? 204 : 200]);
    }
  });

  it('a read-only token cannot publish', async () => {
    const readOnly = await createToken(priv.app, {});
    const res = await publish(priv.app, 'revoke/mod/aws/9.0.0', sampleModuleTarGz(), readOnly.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ errors: ['this token is read-only; it cannot publish or delete'] });
  });

  it('public reads ignore a bad token instead of locking users out', async () => {
    const res = await request(reg.app).get('/v1/modules/revoke/mod/aws/versions').set(bearer('stale-token'));
    expect(res.status).toBe(200);
  });
});
