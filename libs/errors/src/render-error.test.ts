import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { createLogger } from '@selfstack/logger';
import {
  AppError,
  BadRequestError,
  ForbiddenError,
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  errorMiddleware,
  formatMultiError,
  renderError,
  toAppError,
} from './index';

describe('AppError hierarchy', () => {
  it.each([
    [BadRequestError, 400],
    [ForbiddenError, 403],
    [NotFoundError, 404],
    [MethodNotAllowedError, 405],
    [PayloadTooLargeError, 413],
    [TooManyRequestsError, 429],
    [InternalError, 500],
    [ServiceUnavailableError, 503],
  ])('%p has status %i', (Ctor, status) => {
    const err = new Ctor('boom');
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(status);
    expect(err.messages).toEqual(['boom']);
    expect(err.name).toBe(Ctor.name);
  });

  it('withRequestId: each exposed message names the request id', () => {
    const err = new ServiceUnavailableError(['try again', 'later'], { withRequestId: true });
    expect(renderError('registry', err, 'r9').body).toBe('{"errors":["try again (request id r9)","later (request id r9)"]}');
    expect(renderError('registry', new ServiceUnavailableError('try again'), 'r9').body).toBe('{"errors":["try again"]}');
  });

  it('does not expose 500 messages by default but exposes 503', () => {
    expect(new InternalError('db password wrong').expose).toBe(false);
    expect(new ServiceUnavailableError('Vault is sealed').expose).toBe(true);
  });
});

describe('formatMultiError', () => {
  it('formats like go-multierror', () => {
    expect(formatMultiError(['permission denied'])).toBe('1 error occurred:\n\t* permission denied\n\n');
    expect(formatMultiError(['permission denied', 'invalid token'])).toBe('2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n');
  });
});

describe('renderError', () => {
  const err = new ForbiddenError('1 error occurred:\n\t* permission denied\n\n');

  it('vault: {"errors":[...]} with a trailing newline and no-store', () => {
    expect(renderError('vault', err, 'r1')).toEqual({
      status: 403,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
      body: '{"errors":["1 error occurred:\\n\\t* permission denied\\n\\n"]}\n',
    });
  });

  it('vault: an empty error list is allowed', () => {
    expect(renderError('vault', new NotFoundError(), 'r1').body).toBe('{"errors":[]}\n');
  });

  it('registry: {"errors":[...]} without newline', () => {
    expect(renderError('registry', new NotFoundError('not found'), 'r1')).toEqual({
      status: 404,
      headers: { 'Content-Type': 'application/json' },
      body: '{"errors":["not found"]}',
    });
  });

  it('boxes: adds success:false', () => {
    expect(renderError('boxes', new NotFoundError('box not found'), 'r1').body).toBe('{"errors":["box not found"],"success":false}');
  });

  it('nomad: plain text, message only, no newline', () => {
    expect(renderError('nomad', new NotFoundError('job not found'), 'r1')).toEqual({
      status: 404,
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      body: 'job not found',
    });
  });

  it('empty: empty body, no content type', () => {
    expect(renderError('empty', new ServiceUnavailableError('x'), 'r1')).toEqual({ status: 503, headers: {}, body: '' });
  });

  it('unknown errors become 500 without leaking the detail', () => {
    const r = renderError('vault', new Error('connection string postgres://u:pw@h'), 'req-42');
    expect(r.status).toBe(500);
    expect(r.body).toBe('{"errors":["internal error (request id req-42)"]}\n');
    expect(renderError('nomad', 'thrown string', 'req-43').body).toBe('internal error (request id req-43)');
  });

  it('merges error headers', () => {
    const r = renderError('registry', new MethodNotAllowedError('nope', { headers: { Allow: 'GET' } }), 'r');
    expect(r.headers).toEqual({ 'Content-Type': 'application/json', Allow: 'GET' });
  });

  it('body override replaces the flavour body', () => {
    const envelope = { request_id: 'r', data: { data: null } };
    const r = renderError('vault', new NotFoundError([], { body: envelope }), 'r');
    expect(r.status).toBe(404);
    expect(r.body).toBe(JSON.stringify(envelope) + '\n');
    expect(renderError('vault', new NotFoundError([], { body: '' }), 'r')).toEqual({ status: 404, headers: {}, body: '' });
  });

  it('maps body-parser errors', () => {
    const tooLarge = Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413, expose: true });
    expect(renderError('vault', tooLarge, 'r')).toMatchObject({
      status: 413,
      body: '{"errors":["failed to parse JSON input: http: request body too large"]}\n',
    });
    expect(renderError('boxes', tooLarge, 'r').body).toBe('{"errors":["request body too large"],"success":false}');
    const parse = Object.assign(new SyntaxError('Unexpected token } in JSON at position 5'), { type: 'entity.parse.failed', status: 400, expose: true });
    expect(renderError('registry', parse, 'r')).toMatchObject({
      status: 400,
      body: '{"errors":["failed to parse JSON input: Unexpected token } in JSON at position 5"]}',
    });
  });

  it('keeps exposed http-errors 4xx and hides non-exposed ones', () => {
    const unsupported = Object.assign(new Error('unsupported charset "X"'), { status: 415, expose: true, type: 'charset.unsupported' });
    expect(toAppError(unsupported, 'registry').status).toBe(415);
    const hidden = Object.assign(new Error('secret detail'), { status: 502, expose: false });
    expect(renderError('registry', hidden, 'r').body).toBe('{"errors":["internal error (request id r)"]}');
  });
});

describe('errorMiddleware', () => {
  function capture() {
    const stream = new PassThrough();
    const lines: Array<Record<string, unknown>> = [];
    stream.on('data', (d: Buffer) => {
      for (const l of d.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
    });
    return { logger: createLogger({ service: 't', destination: stream, batchMs: 0 }), lines };
  }

  it('renders the flavour and logs 5xx detail with the same request id', async () => {
    const { logger, lines } = capture();
    const app = express();
    app.use((_req, res, next) => {
      res.locals.requestId = 'rid-1';
      next();
    });
    app.get('/boom', () => {
      throw new Error('db exploded');
    });
    app.get('/nf', () => {
      throw new NotFoundError('no such job');
    });
    app.use(errorMiddleware({ flavour: 'nomad', logger }));

    const res = await request(app).get('/boom');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('internal error (request id rid-1)');
    await new Promise((r) => setImmediate(r));
    expect(lines).toEqual([expect.objectContaining({ level: 'error', request_id: 'rid-1', error: 'db exploded', status: 500 })]);

    const nf = await request(app).get('/nf');
    expect(nf.status).toBe(404);
    expect(nf.text).toBe('no such job');
    expect(lines).toHaveLength(1);
  });

  it('answers 413 with Connection: close', async () => {
    const { logger } = capture();
    const app = express();
    app.post('/x', () => {
      throw new PayloadTooLargeError('too big');
    });
    app.use(errorMiddleware({ flavour: 'boxes', logger }));
    const res = await request(app).post('/x').send({ a: 1 });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.body).toEqual({ errors: ['too big'], success: false });
  });

  it('logs no failure for a handler aborted because its client went away, and still logs other AbortErrors', async () => {
    const { logger, lines } = capture();
    const app = express();
    let aborted: () => void = () => undefined;
    const handlerDone = new Promise<void>((r) => (aborted = r));
    app.get('/wait', (req, res, next) => {
      // As a blocking query does: the request's signal fires when the response closes.
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      controller.signal.addEventListener('abort', () => {
        next(controller.signal.reason);
        setImmediate(aborted);
      });
    });
    app.get('/abort-here', () => {
      throw new DOMException('This operation was aborted', 'AbortError');
    });
    app.use(errorMiddleware({ flavour: 'nomad', logger }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as AddressInfo;
      const req = httpRequest({ host: '127.0.0.1', port, path: '/wait' });
      req.on('error', () => undefined);
      req.end();
      await new Promise((r) => setTimeout(r, 50));
      req.destroy();
      await handlerDone;
      await new Promise((r) => setTimeout(r, 20));
      expect(lines.filter((l) => l.level === 'error')).toEqual([]);
      // The client is still there: a real failure, answered and logged.
      const res = await request(server).get('/abort-here');
      expect(res.status).toBe(500);
      await new Promise((r) => setImmediate(r));
      expect(lines).toEqual([expect.objectContaining({ level: 'error', message: 'request failed', status: 500, error: expect.stringContaining('aborted') })]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
