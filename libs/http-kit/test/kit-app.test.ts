import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { NotFoundError, type ErrorFlavour } from '@selfstack/errors';
import { API_HELMET, createKitApp, mountPaths } from '../src';
import { capturedLogger, sampleTable } from './sample-table';

describe('createKitApp', () => {
  it('generates a request id, or echoes a sane incoming one', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false }, () => {});
    const generated = await request(app).get('/healthz');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await request(app).get('/healthz').set('X-Request-Id', 'trace-123.abc');
    expect(echoed.headers['x-request-id']).toBe('trace-123.abc');
    const insane = await request(app).get('/healthz').set('X-Request-Id', 'a b<script>');
    expect(insane.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(insane.headers['x-request-id']).not.toBe('a b<script>');
  });

  it('applies helmet headers unless disabled', async () => {
    const { logger } = capturedLogger();
    const on = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false }, () => {});
    const res = await request(on).get('/healthz');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(res.headers['x-powered-by']).toBeUndefined();
    const off = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false, helmet: false }, () => {});
    expect((await request(off).get('/healthz')).headers['x-content-type-options']).toBeUndefined();
  });

  it('API_HELMET sends only the headers that mean something for a JSON API', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false, helmet: API_HELMET }, () => {});
    const res = await request(app).get('/healthz');
    expect(res.status).toBe(200);
    const security = Object.keys(res.headers)
      .filter((h) => !['content-type', 'content-length', 'etag', 'date', 'connection', 'keep-alive', 'x-request-id'].includes(h))
      .sort();
    expect(security).toEqual(['content-security-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options']);
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('precomputed helmet headers equal what helmet itself sets; function directives stay dynamic', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false }, () => {});
    const ref = express();
    ref.use(helmet());
    ref.get('/healthz', (_req, res) => {
      res.json({ status: 'ok' });
    });
    const ours = await request(app).get('/healthz');
    const theirs = await request(ref).get('/healthz');
    const pick = (h: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(h).filter(([k]) => !['date', 'x-request-id', 'content-length', 'etag', 'connection', 'content-type'].includes(k)));
    expect(pick(ours.headers)).toEqual(pick(theirs.headers));
    expect(Object.keys(pick(ours.headers)).length).toBeGreaterThan(8);

    let n = 0;
    const dynamic = createKitApp(
      {
        service: 's',
        logger,
        errorFlavour: 'registry',
        metrics: false,
        helmet: { contentSecurityPolicy: { directives: { scriptSrc: [() => `'nonce-${++n}'`] } } },
      },
      () => {},
    );
    const a = await request(dynamic).get('/healthz');
    const b = await request(dynamic).get('/healthz');
    expect(a.headers['content-security-policy']).toContain("'nonce-1'");
    expect(b.headers['content-security-policy']).toContain("'nonce-2'");
  });

  it.each<[ErrorFlavour, string, string | undefined]>([
    ['vault', '{"errors":[]}\n', 'application/json'],
    ['registry', '{"errors":["not found"]}', 'application/json'],
    ['boxes', '{"errors":["not found"],"success":false}', 'application/json'],
    ['nomad', 'not found', 'text/plain; charset=utf-8'],
    ['empty', '', undefined],
  ])('404 in the %s shape', async (flavour, body, type) => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: flavour, metrics: false }, () => {});
    const res = await request(app).get('/nowhere');
    expect(res.status).toBe(404);
    expect(res.text).toBe(body);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('405 with Allow for a hand-written route with another method', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'boxes', metrics: false }, (a) => {
      a.get('/api/v1/box/:user/:name', (_req, res) => {
        res.json({ ok: true });
      });
    });
    const res = await request(app).delete('/api/v1/box/u/n');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body).toEqual({ errors: ['method DELETE not allowed'], success: false });
  });

  it('applies the body policy with the configured depth to declared and hand-written routes, in the flavour', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'boxes', metrics: false, maxBodyDepth: 3 }, (a, kit) => {
      mountPaths(a, sampleTable(), { prefix: '/v1/kv' });
      a.post('/hand', kit.jsonBody, (req, res) => {
        res.json({ body: req.body as unknown });
      });
    });
    const json = (path: string, body: string) => request(app).post(path).set('Content-Type', 'application/json').send(body);
    const deep = await json('/v1/kv/data/x', '{"data":{"a":{"b":[1]}}}');
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({ errors: ['failed to parse JSON input: field data.a.b: nesting deeper than 3 levels'], success: false });
    const ok = await json('/v1/kv/data/x', '{"data":{"a":{"__proto__":1}}}');
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('"data":{"a":{"__proto__":1}}');
    const hand = await json('/hand', '{"a":"x\\u0000"}');
    expect(hand.status).toBe(400);
    expect(hand.body).toEqual({ errors: ['failed to parse JSON input: field a contains a NUL character (\\u0000), which cannot be stored'], success: false });
    expect((await json('/hand', '{"a":[[1]]}')).body).toEqual({ body: { a: [[1]] } });
  });

  it('custom notFound handler', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp(
      {
        service: 's',
        logger,
        errorFlavour: 'vault',
        metrics: false,
        notFound: (req, _res, next) => next(new NotFoundError(`no handler for route "${req.path.slice(4)}". route entry not found.`)),
      },
      () => {},
    );
    const res = await request(app).get('/v1/foo/bar');
    expect(res.status).toBe(404);
    expect(res.text).toBe('{"errors":["no handler for route \\"foo/bar\\". route entry not found."]}\n');
  });

  it('/healthz always 200; /readyz follows the readiness checks', async () => {
    const { logger } = capturedLogger();
    let checks: Record<string, boolean> = { postgres: true, redis: true };
    let fail = false;
    const app = createKitApp(
      {
        service: 's',
        logger,
        errorFlavour: 'registry',
        metrics: false,
        readiness: async () => {
          if (fail) throw new Error('timeout');
          return checks;
        },
      },
      () => {},
    );
    const health = await request(app).get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await request(app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { postgres: true, redis: true } });
    checks = { postgres: true, redis: false };
    const notReady = await request(app).get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toEqual({ status: 'unavailable', checks: { postgres: true, redis: false } });
    fail = true;
    const broken = await request(app).get('/readyz');
    expect(broken.status).toBe(503);
    expect((await request(app).get('/healthz')).status).toBe(200);
  });

  it('/metrics exposes the request histogram labelled by route pattern', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'vault' }, (a) => {
      mountPaths(a, sampleTable(), { prefix: '/v1/secret' });
      a.get('/v1/sys/health', (_req, res) => {
        res.json({ ok: true });
      });
    });
    await request(app).get('/v1/secret/data/a/b/c');
    await request(app).get('/v1/secret/data/other');
    await request(app).get('/v1/sys/health');
    await request(app).get('/nothing/here');
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(res.text).toContain('http_request_duration_seconds_count{method="GET",route="/v1/secret/data/*path",status="200"} 2');
    expect(res.text).toContain('http_request_duration_seconds_count{method="GET",route="/v1/sys/health",status="200"} 1');
    expect(res.text).toContain('http_request_duration_seconds_count{method="GET",route="<unmatched>",status="404"} 1');
    expect(res.text).not.toContain('a/b/c');
  });

  it('logs one JSON line per request with the route pattern, not the raw URL', async () => {
    const { logger, lines, flush } = capturedLogger('secrets');
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault', metrics: false }, (a) => {
      mountPaths(a, sampleTable(), { prefix: '/v1/secret' });
    });
    await request(app).get('/v1/secret/data/top/secret?version=2').set('X-Request-Id', 'log-1').set('X-Vault-Token', 'hvs.x');
    await flush();
    const line = lines.find((l) => l.request_id === 'log-1');
    expect(line).toEqual({
      level: 'info',
      message: 'request',
      service: 'secrets',
      timestamp: expect.any(String),
      method: 'GET',
      route: '/v1/secret/data/*path',
      status: 200,
      duration_ms: expect.any(Number),
      request_id: 'log-1',
      bytes: Buffer.byteLength(JSON.stringify({ op: 'read', path: 'top/secret', version: 2 })),
    });
    expect(JSON.stringify(lines)).not.toContain('top/secret');
    expect(JSON.stringify(lines)).not.toContain('hvs.x');
  });

  it('builds no request record when the logger is above info', async () => {
    const { logger, lines, flush } = capturedLogger('secrets');
    logger.level = 'warn';
    const info = jest.spyOn(logger, 'info');
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault', metrics: false }, (a) => {
      mountPaths(a, sampleTable(), { prefix: '/v1/secret' });
    });
    const res = await request(app).get('/v1/secret/data/x').set('X-Request-Id', 'quiet-1');
    expect(res.status).toBe(200);
    await flush();
    expect(info).not.toHaveBeenCalled();
    expect(lines.find((l) => l.request_id === 'quiet-1')).toBeUndefined();
    // Back at info, the same request is logged.
    // (written by writeInfoRecord straight to the logger's line batch, not through logger.info)
    logger.level = 'info';
    await request(app).get('/v1/secret/data/x').set('X-Request-Id', 'loud-1');
    await flush();
    expect(lines.find((l) => l.request_id === 'loud-1')).toMatchObject({ message: 'request', status: 200 });
  });

  it('413 in the flavour shape for a declared Content-Length over the limit', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'vault', metrics: false, maxRequestBytes: 64 }, (a) => {
      mountPaths(a, sampleTable(), { prefix: '/v1/secret' });
    });
    const res = await request(app).post('/v1/secret/data/x').send({ data: { v: 'x'.repeat(100) } });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.text).toBe('{"errors":["failed to parse JSON input: http: request body too large"]}\n');
    const small = await request(app).post('/v1/secret/data/x').send({ data: { v: 1 } });
    expect(small.status).toBe(200);
  });

  it('jsonBody middleware for hand-written routes honours the app limit', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'boxes', metrics: false, maxRequestBytes: 32 }, (a, kit) => {
      a.post('/echo', kit.jsonBody, (req, res) => {
        res.json({ got: req.body as unknown });
      });
      // A streaming upload route simply does not use the body reader.
      a.put('/upload', async (req, res) => {
        let n = 0;
        for await (const chunk of req) n += (chunk as Buffer).length;
        res.json({ bytes: n });
      });
    });
    expect((await request(app).post('/echo').send({ a: 1 })).body).toEqual({ got: { a: 1 } });
    const big = await request(app).post('/echo').send({ a: 'y'.repeat(64) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ errors: ['request body too large'], success: false });
    const upload = await request(app).put('/upload').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(1000));
    expect(upload.body).toEqual({ bytes: 1000 });
  });
});
