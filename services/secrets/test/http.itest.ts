// Issue 3, item 7: listener behaviour: LIST on a real socket, custom response headers,
// require_request_header, max_request_size, GET / redirect, HEAD.
import http from 'node:http';
import request from 'supertest';
import { createListener, type Listener } from '@selfstack/http-kit';
import { parseServerConfigText, envSchema } from '../src/config';
import { compileCustomHeaders } from '../src/http/response-headers';
import { initAndUnseal, startHarness, type Harness } from './harness';
import { buildApp } from '../src/app';
import { silentLogger, testListenerConfig } from './harness';

function raw(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('listener behaviour', () => {
  let h: Harness;
  let root = '';
  let listener: Listener;
  beforeAll(async () => {
    h = await startHarness();
    root = (await initAndUnseal(h.app)).rootToken;
    listener = await createListener(h.app, { port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await listener.close();
    await h.close();
  });

  it('accepts the LIST method on a real socket', async () => {
    await request(h.app).post('/v1/secret/data/l/a').set('X-Vault-Token', root).send({ data: { a: 1 } }).expect(200);
    await request(h.app).post('/v1/secret/data/l/b/c').set('X-Vault-Token', root).send({ data: { a: 1 } }).expect(200);
    const r = await raw(listener.url, 'LIST', '/v1/secret/metadata/l', { 'X-Vault-Token': root });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).data).toEqual({ keys: ['a', 'b/'] });
    const empty = await raw(listener.url, 'LIST', '/v1/secret/metadata/zzz/', { 'X-Vault-Token': root });
    expect(empty.status).toBe(404);
    expect(empty.body).toBe('{"errors":[]}\n');
    const policies = await raw(listener.url, 'LIST', '/v1/sys/policies/acl', { 'X-Vault-Token': root });
    expect(JSON.parse(policies.body).data.keys).toContain('default');
  });

  it('unknown HTTP methods answer 405 {"errors":[]}', async () => {
    const r = await raw(listener.url, 'PROPFIND', '/v1/secret/data/x', { 'X-Vault-Token': root });
    expect(r.status).toBe(405);
    expect(r.body).toBe('{"errors":[]}\n');
  });

  it('sets Cache-Control and the default HSTS header on every response, 404s included', async () => {
    const r = await request(h.app).get('/v1/sys/seal-status');
    expect(r.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const missing = await request(h.app).get('/nope');
    expect(missing.status).toBe(404);
    expect(missing.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(missing.body).toEqual({ errors: [] });
  });

  it('GET / redirects to the UI (307), the UI answers 200', async () => {
    const r = await request(h.app).get('/');
    expect(r.status).toBe(307);
    expect(r.headers.location).toBe('/ui/');
    const ui = await request(h.app).get('/ui/');
    expect(ui.status).toBe(200);
  });

  it('API responses carry the API security headers; the UI page the document set', async () => {
    const DOCUMENT_ONLY = ['cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'referrer-policy', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection'];
    for (const path of ['/v1/sys/seal-status', '/v1/sys/nope']) {
      const api = await request(h.app).get(path);
      expect(api.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      expect(api.headers['x-frame-options']).toBe('DENY');
      expect(api.headers['x-content-type-options']).toBe('nosniff');
      // HSTS is Vault's (custom_response_headers default), not helmet's.
      expect(api.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      for (const name of DOCUMENT_ONLY) expect(api.headers[name]).toBeUndefined();
    }
    const ui = await request(h.app).get('/ui/');
    expect(ui.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(ui.headers['content-security-policy']).toContain("default-src 'self'");
    expect(ui.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(ui.headers['x-content-type-options']).toBe('nosniff');
    for (const name of DOCUMENT_ONLY) expect(ui.headers[name]).toBeDefined();
    expect(ui.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('custom_response_headers: default, class and exact code precedence; X-Vault-* ignored', async () => {
    const env = envSchema.parse({});
    const config = await parseServerConfigText(
      `
listener "tcp" {
  address = "127.0.0.1:0"
  tls_disable = true
  max_request_size = 1024
  require_request_header = true
  custom_response_headers {
    "default" = {
      "Strict-Transport-Security" = ["max-age=31536000","includeSubDomains"],
      "X-Custom-Header" = ["Custom Header Default Value"],
      "X-Vault-Ignored" = ["nope"],
    },
    "2xx" = {
      "X-Custom-Header" = ["Custom Header Value 1", "Custom Header Value 2"],
    },
    "307" = {
      "X-Custom-Header" = ["307 Custom header value"],
    },
    "3xx" = {
      "X-Custom-Header" = ["3xx Custom header value"],
    },
  }
}
`,
      'test.hcl',
      env,
    );
    expect(config.warnings).toHaveLength(1);
    const l = config.listeners[0];
    expect(l).toBeDefined();
    const app = buildApp({ services: h.services, logger: silentLogger, listener: l!, requestLog: false });

    let r = await request(app).get('/v1/sys/seal-status').set('X-Vault-Request', 'true');
    expect(r.status).toBe(200);
    expect(r.headers['x-custom-header']).toBe('Custom Header Value 1; Custom Header Value 2');
    expect(r.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(r.headers['x-vault-ignored']).toBeUndefined();
    r = await request(app).get('/');
    expect(r.status).toBe(307);
    expect(r.headers['x-custom-header']).toBe('307 Custom header value');
    r = await request(app).get('/v1/secret/data/x').set('X-Secrets-Request', 'true');
    expect(r.status).toBe(403);
    expect(r.headers['x-custom-header']).toBe('Custom Header Default Value');

    // require_request_header
    r = await request(app).get('/v1/sys/seal-status');
    expect(r.status).toBe(412);
    expect(r.body.errors[0]).toMatch(/X-Secrets-Request/);

    // max_request_size
    r = await request(app)
      .post('/v1/secret/data/big')
      .set('X-Vault-Request', 'true')
      .set('X-Vault-Token', root)
      .send({ data: { blob: 'x'.repeat(5000) } });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ errors: ['failed to parse JSON input: http: request body too large'] });
  });

  it('rejects invalid custom header keys', () => {
    expect(() => compileCustomHeaders({ '6xx': { A: ['b'] } })).toThrow('invalid status code found in the server configuration: 6xx');
    expect(() => compileCustomHeaders({ default: { A: 'b' } })).toThrow('headers must be given in a list of strings');
  });

  it('the default 32 MiB limit is enforced on the real listener', async () => {
    const app = buildApp({ services: h.services, logger: silentLogger, listener: testListenerConfig({ maxRequestBytes: 100 }), requestLog: false });
    const small = await createListener(app, { port: 0, host: '127.0.0.1' });
    try {
      const r = await raw(small.url, 'POST', '/v1/secret/data/x', { 'X-Vault-Token': root, 'Content-Type': 'application/json' }, JSON.stringify({ data: { b: 'y'.repeat(500) } }));
      expect(r.status).toBe(413);
    } finally {
      await small.close();
    }
  });
});
