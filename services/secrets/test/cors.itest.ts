// Issue 28, item 4: CORS as the anchor does it (sys/config/cors, Access-Control-* headers
// on allowed origins only, preflight answers, 403 for other origins), across replicas.
import request from 'supertest';
import type { Express } from 'express';
import { MULTI_DENIED, startUnsealedReplicas, type Harness } from './harness';

describe('CORS', () => {
  let h: Harness;
  let root = '';
  let other: Express;
  const as = (t: string) => ({ 'X-Vault-Token': t });
  const ORIGIN = 'https://app.example';

  beforeAll(async () => {
    ({ h, root, other } = await startUnsealedReplicas());
  });
  afterAll(async () => {
    await h.close();
  });

  it('is off on a fresh install: no Access-Control headers, OPTIONS is 405 in the error shape', async () => {
    const read = await request(h.app).get('/v1/sys/config/cors').set(as(root));
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ enabled: false });
    expect(read.body.enabled).toBe(false);
    const r = await request(h.app).get('/v1/sys/seal-status').set('Origin', ORIGIN);
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await request(h.app).options('/v1/secret/data/x').set('Origin', ORIGIN).set('Access-Control-Request-Method', 'GET');
    expect(pre.status).toBe(405);
    expect(pre.body).toEqual({ errors: [] });
    expect(pre.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, LIST');
  });

  it('is configured by root (sudo) only, with the anchor validation', async () => {
    const app = (await request(h.app).post('/v1/auth/token/create').set(as(root)).send({ policies: ['default'] })).body.auth.client_token as string;
    const denied = await request(h.app).post('/v1/sys/config/cors').set(as(app)).send({ allowed_origins: ORIGIN });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ errors: [MULTI_DENIED] });
    const empty = await request(h.app).post('/v1/sys/config/cors').set(as(root)).send({ allowed_origins: [] });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ errors: ['at least one origin or the wildcard must be provided.'] });
    const mixed = await request(h.app).post('/v1/sys/config/cors').set(as(root)).send({ allowed_origins: ['*', ORIGIN] });
    expect(mixed.body).toEqual({ errors: ["to allow all origins the '*' must be the only value for allowed_origins"] });
  });

  it('enables for the listed origins; headers on allowed origins only; 403 for others; preflight', async () => {
    const w = await request(h.app).put('/v1/sys/config/cors').set(as(root)).send({ allowed_origins: `${ORIGIN},https://two.example`, allowed_headers: 'X-Custom' });
    expect(w.status).toBe(204);
    const read = await request(h.app).get('/v1/sys/config/cors').set(as(root));
    expect(read.body.data.enabled).toBe(true);
    expect(read.body.data.allowed_origins).toEqual([ORIGIN, 'https://two.example']);
    expect(read.body.data.allowed_headers).toEqual(expect.arrayContaining(['Content-Type', 'X-Vault-Token', 'X-Secrets-Token', 'X-Custom']));
    expect(read.body.allowed_origins).toEqual(read.body.data.allowed_origins);

    const ok = await request(h.app).get('/v1/secret/data/none').set(as(root)).set('Origin', ORIGIN);
    expect(ok.status).toBe(404);
    expect(ok.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(ok.headers.vary).toMatch(/Origin/);
    const noOrigin = await request(h.app).get('/v1/sys/seal-status');
    expect(noOrigin.headers['access-control-allow-origin']).toBeUndefined();

    const bad = await request(h.app).get('/v1/sys/seal-status').set('Origin', 'https://evil.example');
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual({ errors: ['origin not allowed'] });
    expect(bad.headers['access-control-allow-origin']).toBeUndefined();
    expect(bad.headers['cache-control']).toBe('no-store');

    const pre = await request(h.app).options('/v1/secret/metadata/').set('Origin', ORIGIN).set('Access-Control-Request-Method', 'LIST').set('Access-Control-Request-Headers', 'X-Vault-Token');
    expect(pre.status).toBe(200);
    expect(pre.text).toBe('');
    expect(pre.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(pre.headers['access-control-allow-methods']).toBe('DELETE,GET,OPTIONS,PATCH,POST,PUT,LIST');
    expect(pre.headers['access-control-allow-headers']).toContain('X-Vault-Token');
    expect(pre.headers['access-control-allow-headers']).toContain('X-Custom');
    expect(pre.headers['access-control-max-age']).toBe('300');
    const badMethod = await request(h.app).options('/v1/secret/metadata/').set('Origin', ORIGIN).set('Access-Control-Request-Method', 'TRACE');
    expect(badMethod.status).toBe(405);
    expect(badMethod.body).toEqual({ errors: [] });
  });

  it('another replica follows the change', async () => {
    let seen = '';
    for (let i = 0; i < 50 && seen !== ORIGIN; i++) {
      const r = await request(other).get('/v1/sys/seal-status').set('Origin', ORIGIN);
      seen = String(r.headers['access-control-allow-origin'] ?? '');
      if (seen !== ORIGIN) await new Promise((res) => setTimeout(res, 100));
    }
    expect(seen).toBe(ORIGIN);
  });

  it('the wildcard allows any origin; delete disables', async () => {
    await request(h.app).post('/v1/sys/config/cors').set(as(root)).send({ allowed_origins: '*' }).expect(204);
    const any = await request(h.app).get('/v1/sys/seal-status').set('Origin', 'https://whatever.example');
    expect(any.headers['access-control-allow-origin']).toBe('https://whatever.example');
    expect((await request(h.app).delete('/v1/sys/config/cors').set(as(root))).status).toBe(204);
    expect((await request(h.app).get('/v1/sys/config/cors').set(as(root))).body.data).toEqual({ enabled: false });
    const after = await request(h.app).get('/v1/sys/seal-status').set('Origin', 'https://whatever.example');
    expect(after.status).toBe(200);
    expect(after.headers['access-control-allow-origin']).toBeUndefined();
  });
});
