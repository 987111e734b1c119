// Issue 3, items 1 and 2: seal lifecycle, health codes, barrier (no plaintext in Postgres).
import request from 'supertest';
import { INVALID_TOKEN, startHarness, type Harness } from './harness';

describe('seal lifecycle', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('before init: status endpoints answer, everything else 501', async () => {
    const status = await request(h.app).get('/v1/sys/seal-status');
    expect(status.status).toBe(200);
    expect(status.headers['cache-control']).toBe('no-store');
    expect(status.headers['content-type']).toMatch(/^application\/json/);
    expect(status.body).toMatchObject({ type: 'shamir', initialized: false, sealed: true, t: 0, n: 0, progress: 0 });

    const init = await request(h.app).get('/v1/sys/init');
    expect(init.status).toBe(200);
    expect(init.body).toEqual({ initialized: false });

    const health = await request(h.app).get('/v1/sys/health');
    expect(health.status).toBe(501);
    expect(health.body).toMatchObject({ initialized: false, sealed: true, standby: false });
    const healthOverride = await request(h.app).get('/v1/sys/health?uninitcode=200');
    expect(healthOverride.status).toBe(200);

    const kv = await request(h.app).get('/v1/secret/data/x').set('X-Vault-Token', 'whatever');
    expect(kv.status).toBe(501);
    expect(kv.body).toEqual({ errors: ['Vault is not initialized'] });
    const unseal = await request(h.app).put('/v1/sys/unseal').send({ key: 'aa'.repeat(33) });
    expect(unseal.status).toBe(501);
  });

  it('rejects bad seal configurations with Vault messages', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ secret_shares: 0, secret_threshold: 1 }, 'shares must be at least one'],
      [{ secret_shares: 1, secret_threshold: 0 }, 'threshold must be at least one'],
      [{ secret_shares: 3, secret_threshold: 1 }, 'threshold must be greater than one for multiple shares'],
      [{ secret_shares: 300, secret_threshold: 2 }, 'shares must be less than 256'],
      [{ secret_shares: 2, secret_threshold: 3 }, 'threshold cannot be larger than shares'],
    ];
    for (const [body, message] of cases) {
      const r = await request(h.app).put('/v1/sys/init').send(body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ errors: [message] });
    }
    const typeError = await request(h.app).put('/v1/sys/init').send({ secret_shares: 'many', secret_threshold: 1 });
    expect(typeError.status).toBe(400);
    const get = await request(h.app).get('/v1/sys/init');
    expect(get.body).toEqual({ initialized: false });
  });

  let keys: string[] = [];
  let keysBase64: string[] = [];
  let rootToken = '';

  it('initialises with 5 shares / threshold 3 and stays sealed', async () => {
    const r = await request(h.app).put('/v1/sys/init').send({ secret_shares: 5, secret_threshold: 3 });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['keys', 'keys_base64', 'root_token']);
    keys = r.body.keys;
    keysBase64 = r.body.keys_base64;
    rootToken = r.body.root_token;
    expect(keys).toHaveLength(5);
    for (const [i, k] of keys.entries()) {
      expect(k).toMatch(/^[0-9a-f]{66}$/);
      expect(Buffer.from(keysBase64[i] as string, 'base64').toString('hex')).toBe(k);
    }
    expect(rootToken).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    const again = await request(h.app).post('/v1/sys/init').send({ secret_shares: 1, secret_threshold: 1 });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ errors: ['Vault is already initialized'] });

    const status = await request(h.app).get('/v1/sys/seal-status');
    expect(status.body).toMatchObject({ initialized: true, sealed: true, t: 3, n: 5, progress: 0 });
    expect(status.body.cluster_id).toBeUndefined();
  });

  it('while sealed: 503 everywhere except the raw sys routes', async () => {
    const kv = await request(h.app).get('/v1/secret/data/x').set('X-Vault-Token', rootToken);
    expect(kv.status).toBe(503);
    expect(kv.body).toEqual({ errors: ['Vault is sealed'] });
    const health = await request(h.app).get('/v1/sys/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ initialized: true, sealed: true });
    const custom = await request(h.app).get('/v1/sys/health?sealedcode=299');
    expect(custom.status).toBe(299);
    const bad = await request(h.app).get('/v1/sys/health?sealedcode=abc');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ errors: [] });
    const head = await request(h.app).head('/v1/sys/health');
    expect(head.status).toBe(503);
    expect(head.text ?? '').toBe('');
  });

  it('unseal: progress, duplicate share, reset, wrong key, then success', async () => {
    let r = await request(h.app).put('/v1/sys/unseal').send({});
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ["'key' must be specified in request body as JSON, or 'reset' set to true"] });
    r = await request(h.app).put('/v1/sys/unseal').send({ key: 'not a key!' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ["'key' must be a valid hex or base64 string"] });

    r = await request(h.app).put('/v1/sys/unseal').send({ key: keys[0] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ sealed: true, t: 3, n: 5, progress: 1 });
    r = await request(h.app).put('/v1/sys/unseal').send({ key: keysBase64[0] });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/already been provided/);
    r = await request(h.app).put('/v1/sys/unseal').send({ reset: true });
    expect(r.body).toMatchObject({ sealed: true, progress: 0 });

    // Two real shares and one forged share: reconstruction fails, progress resets.
    await request(h.app).put('/v1/sys/unseal').send({ key: keys[1] });
    await request(h.app).put('/v1/sys/unseal').send({ key: keys[2] });
    const forged = Buffer.from(keys[3] as string, 'hex');
    forged[0] = (forged[0] ?? 0) ^ 0xff;
    r = await request(h.app).put('/v1/sys/unseal').send({ key: forged.toString('hex') });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ['Unseal failed, invalid key'] });
    expect((await request(h.app).get('/v1/sys/seal-status')).body).toMatchObject({ sealed: true, progress: 0 });

    // Any three shares, mixing hex and base64.
    await request(h.app).put('/v1/sys/unseal').send({ key: keys[4] });
    await request(h.app).put('/v1/sys/unseal').send({ key: keysBase64[1] });
    r = await request(h.app).put('/v1/sys/unseal').send({ key: keys[3] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ sealed: false, t: 3, n: 5, progress: 0 });
    expect(typeof r.body.cluster_id).toBe('string');

    const health = await request(h.app).get('/v1/sys/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ initialized: true, sealed: false, standby: false });
    expect((await request(h.app).get('/v1/sys/health?activecode=204')).status).toBe(204);
    r = await request(h.app).put('/v1/sys/unseal').send({ reset: true });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errors: ['vault is unsealed'] });
  });

  it('a fresh install has kv at secret/ and the root token works', async () => {
    const r = await request(h.app).get('/v1/sys/mounts').set('X-Vault-Token', rootToken);
    expect(r.status).toBe(200);
    expect(r.body['secret/']).toMatchObject({ type: 'kv', options: { version: '2' } });
  });

  it('each replica unseals on its own', async () => {
    const replica = await h.replica();
    const status = await request(replica.app).get('/v1/sys/seal-status');
    expect(status.body).toMatchObject({ initialized: true, sealed: true, t: 3, n: 5 });
    expect((await request(replica.app).get('/v1/sys/mounts').set('X-Vault-Token', rootToken)).status).toBe(503);
    for (const k of keys.slice(2, 5)) await request(replica.app).put('/v1/sys/unseal').send({ key: k });
    expect((await request(replica.app).get('/v1/sys/mounts').set('X-Vault-Token', rootToken)).status).toBe(200);
    // Sealing the replica leaves the first process unsealed.
    expect((await request(replica.app).put('/v1/sys/seal').set('X-Vault-Token', rootToken)).status).toBe(204);
    expect((await request(replica.app).get('/v1/sys/mounts').set('X-Vault-Token', rootToken)).status).toBe(503);
    expect((await request(h.app).get('/v1/sys/mounts').set('X-Vault-Token', rootToken)).status).toBe(200);
  });

  it('Postgres never holds plaintext secrets or token ids', async () => {
    const marker = `plaintext-marker-${Date.now()}`;
    const w = await request(h.app).post('/v1/secret/data/app/db').set('X-Vault-Token', rootToken).send({ data: { password: marker } });
    expect(w.status).toBe(200);
    const rows = await h.prisma.$queryRawUnsafe<{ path: string; value: Uint8Array }[]>('SELECT path, value FROM secrets.entries');
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      const bytes = Buffer.from(row.value);
      expect(bytes.includes(Buffer.from(marker))).toBe(false);
      expect(bytes.includes(Buffer.from(rootToken))).toBe(false);
      expect(row.path.includes(rootToken)).toBe(false);
      expect(bytes.includes(Buffer.from('"path"'))).toBe(false);
    }
    const barrier = await h.prisma.$queryRawUnsafe<{ keyring: Uint8Array }[]>('SELECT keyring FROM secrets.barrier');
    expect(Buffer.from(barrier[0]?.keyring ?? []).includes(Buffer.from('active_term'))).toBe(false);
  });

  it('sys/seal needs root or sudo; sealing drops the keys', async () => {
    const child = await request(h.app).post('/v1/auth/token/create').set('X-Vault-Token', rootToken).send({ policies: ['default'] });
    const token = child.body.auth.client_token as string;
    const denied = await request(h.app).put('/v1/sys/seal').set('X-Vault-Token', token);
    expect(denied.status).toBe(403);
    const sealed = await request(h.app).put('/v1/sys/seal').set('X-Vault-Token', rootToken);
    expect(sealed.status).toBe(204);
    expect(sealed.text).toBe('');
    expect(h.services.barrier.isSealed()).toBe(true);
    expect((await request(h.app).get('/v1/secret/data/app/db').set('X-Vault-Token', rootToken)).status).toBe(503);
    for (const k of keys.slice(0, 3)) await request(h.app).put('/v1/sys/unseal').send({ key: k });
    const read = await request(h.app).get('/v1/secret/data/app/db').set('X-Vault-Token', rootToken);
    expect(read.status).toBe(200);
    const bogus = await request(h.app).get('/v1/secret/data/app/db').set('X-Vault-Token', 'hvs.nope');
    expect(bogus.status).toBe(403);
    expect(bogus.body).toEqual({ errors: [INVALID_TOKEN] });
  });
});
