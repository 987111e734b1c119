import express from 'express';
import { execFile } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { createKitApp, createListener, definePath, listRequestStart, mountPaths, prototypeClassesFor, LINGER_MS, LIST_MARKER_HEADER, type Listener } from '../src';
import { RawClient } from './raw-http';
import { capturedLogger, sampleTable } from './sample-table';

describe('createListener', () => {
  let listener: Listener;
  let aborted: Array<string> = [];
  let released: (() => void) | undefined;

  beforeAll(async () => {
    const { logger } = capturedLogger();
    const echo = definePath({
      pattern: 'echo/*rest',
      summary: 'echo',
      fields: { rest: { in: 'path', schema: z.string(), description: 'rest' } },
      takesArbitraryInput: true,
      operations: {
        read: (ctx) => ({ method: ctx.method, op: ctx.operation, marker: ctx.req.headers[LIST_MARKER_HEADER] ?? null }),
        list: (ctx) => ({ method: ctx.method, op: ctx.operation, rest: ctx.params.rest }),
        update: (ctx) => ({ method: ctx.method, op: ctx.operation, body: ctx.input }),
      },
    });
    const wait = definePath({
      pattern: 'wait',
      summary: 'blocks until the client goes away',
      operations: {
        read: (ctx) =>
          new Promise((resolve) => {
            released = () => resolve({ released: true });
            ctx.signal.addEventListener('abort', () => {
              aborted.push(ctx.requestId);
              resolve(undefined);
            });
          }),
      },
    });
    // Which path the request came through: node:http's own parser on the TCP socket, or
    // the framed path a connection is moved to once it sends LIST. `slow` answers after
    // 50 ms, so requests pipelined behind it are still waiting when a LIST arrives.
    const via = definePath({
      pattern: 'via/:name',
      summary: 'reports the socket type',
      fields: { name: { in: 'path', schema: z.string(), description: 'name' } },
      operations: {
        read: async (ctx) => {
          if (ctx.params.name === 'slow') await new Promise((r) => setTimeout(r, 50));
          return { name: ctx.params.name, method: ctx.method, native: ctx.req.socket instanceof net.Socket };
        },
        list: (ctx) => ({ name: ctx.params.name, method: ctx.method, native: ctx.req.socket instanceof net.Socket }),
      },
    });
    const app = createKitApp({ service: 'secrets', logger, errorFlavour: 'vault', jsonWithoutContentType: true, maxRequestBytes: 1024, metrics: false }, (a) => {
      mountPaths(a, [echo, wait, via], { prefix: '/v1' });
      mountPaths(a, sampleTable(), { prefix: '/v1/secret' });
    });
    listener = await createListener(app, { port: 0, host: '127.0.0.1', maxRequestBytes: 64 * 1024 });
  });

  afterAll(async () => {
    await listener.close({ drainTimeoutMs: 1000 });
  });

  it('answers LIST, then another request on the same keep-alive connection', async () => {
    const c = new RawClient(listener.port);
    c.write('LIST /v1/echo/a/b HTTP/1.1\r\nHost: x\r\n\r\n');
    const [first] = await c.read(1);
    expect(first?.status).toBe(200);
    expect(first?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(first?.body ?? '')).toEqual({ method: 'LIST', op: 'list', rest: 'a/b' });
    c.write('GET /v1/echo/c HTTP/1.1\r\nHost: x\r\n\r\n');
    const [second] = await c.read(1);
    expect(second?.status).toBe(200);
    expect(JSON.parse(second?.body ?? '')).toEqual({ method: 'GET', op: 'read', marker: null });
    expect(c.closed).toBe(false);
    c.destroy();
  });

  it('serves ordinary requests on node:http\'s own parser and moves a connection to the framed path at its first LIST', async () => {
    const c = new RawClient(listener.port);
    c.write('GET /v1/via/a HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(JSON.parse((await c.read(1))[0]?.body ?? '')).toEqual({ name: 'a', method: 'GET', native: true });
    c.write('LIST /v1/via/b HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(JSON.parse((await c.read(1))[0]?.body ?? '')).toEqual({ name: 'b', method: 'LIST', native: false });
    c.write('GET /v1/via/c HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(JSON.parse((await c.read(1))[0]?.body ?? '')).toEqual({ name: 'c', method: 'GET', native: false });
    expect(c.closed).toBe(false);
    c.destroy();
    // Other connections are not affected.
    const d = new RawClient(listener.port);
    d.write('GET /v1/via/d HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(JSON.parse((await d.read(1))[0]?.body ?? '')).toEqual({ name: 'd', method: 'GET', native: true });
    d.destroy();
  });

  it('a LIST pipelined behind requests still being answered waits for them; answers stay in order', async () => {
    const c = new RawClient(listener.port);
    c.write(
      'GET /v1/via/slow HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /v1/via/slow HTTP/1.1\r\nHost: x\r\n\r\n' +
        'LIST /v1/via/after HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /v1/via/last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const responses = await c.read(4);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(responses.map((r) => JSON.parse(r.body) as unknown)).toEqual([
      { name: 'slow', method: 'GET', native: true },
      { name: 'slow', method: 'GET', native: true },
      { name: 'after', method: 'LIST', native: false },
      { name: 'last', method: 'GET', native: false },
    ]);
    await c.waitClosed();
  });

  it.each([
    ['L', 'IST /v1/via/split HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['LI', 'ST /v1/via/split HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['LIS', 'T /v1/via/split HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['LIST /v1/via/sp', 'lit HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('a LIST split across reads (%j first) is answered', async (first, rest) => {
    const c = new RawClient(listener.port);
    c.write('GET /v1/via/before HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.read(1);
    c.write(first);
    await new Promise((r) => setTimeout(r, 30));
    c.write(rest);
    const [res] = await c.read(1);
    expect(res?.status).toBe(200);
    expect(JSON.parse(res?.body ?? '')).toEqual({ name: 'split', method: 'LIST', native: false });
    c.destroy();
  });

  it('cuts off a request body still arriving after its response once it passes the connection cap', async () => {
    // GET ignores its body: the response ends while the client is still sending, and
    // node:http reads and drops the rest; past the 64 KiB cap the connection is closed.
    const c = new RawClient(listener.port);
    c.write('GET /v1/via/body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n');
    const [res] = await c.read(1);
    expect(res?.status).toBe(200);
    expect(c.closed).toBe(false);
    const chunk = `4000\r\n${'z'.repeat(0x4000)}\r\n`;
    for (let i = 0; i < 8 && !c.closed; i++) {
      c.write(chunk);
      await new Promise((r) => setTimeout(r, 5));
    }
    await c.waitClosed(LINGER_MS + 2000);
    // Under the cap, the connection stays usable.
    const d = new RawClient(listener.port);
    d.write('GET /v1/via/small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n');
    expect((await d.read(1))[0]?.status).toBe(200);
    d.write(`${chunk}0\r\n\r\nGET /v1/via/next HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(JSON.parse((await d.read(1))[0]?.body ?? '')).toEqual({ name: 'next', method: 'GET', native: true });
    d.destroy();
  });

  it('handles pipelined LIST, chunked POST and LIST in one write', async () => {
    const c = new RawClient(listener.port);
    const body = '{"k":"LIST /v1/echo/x HTTP/1.1"}';
    c.write(
      'LIST /v1/echo/one HTTP/1.1\r\nHost: x\r\n\r\n' +
        'POST /v1/echo/two HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
        `${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n0\r\n\r\n` +
        'LIST /v1/echo/three/ HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /v1/echo/four HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const responses = await c.read(4);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(responses.map((r) => JSON.parse(r.body) as unknown)).toEqual([
      { method: 'LIST', op: 'list', rest: 'one' },
      { method: 'POST', op: 'update', body: { k: 'LIST /v1/echo/x HTTP/1.1' } },
      { method: 'LIST', op: 'list', rest: 'three/' },
      { method: 'GET', op: 'read', marker: null },
    ]);
    await c.waitClosed();
  });

  it('does not let clients forge the LIST marker', async () => {
    const c = new RawClient(listener.port);
    c.write(`GET /v1/echo/f HTTP/1.1\r\nHost: x\r\n${LIST_MARKER_HEADER}: guess\r\n\r\n`);
    const [res] = await c.read(1);
    expect(JSON.parse(res?.body ?? '')).toEqual({ method: 'GET', op: 'read', marker: null });
    c.write(`LIST /v1/echo/g HTTP/1.1\r\nHost: x\r\n${LIST_MARKER_HEADER}: guess\r\n\r\n`);
    const [list] = await c.read(1);
    expect(JSON.parse(list?.body ?? '')).toEqual({ method: 'LIST', op: 'list', rest: 'g' });
    c.destroy();
  });

  it('answers malformed input with Node 400 and keeps serving', async () => {
    const c = new RawClient(listener.port);
    c.write('FOO /v1/echo/x HTTP/1.1\r\nHost: x\r\n\r\n');
    const [bad] = await c.read(1);
    expect(bad?.status).toBe(400);
    await c.waitClosed();
    const d = new RawClient(listener.port);
    d.write('LIST /v1/echo/x HTTP/1.1\r\nContent-Length: abc\r\n\r\n');
    const [bad2] = await d.read(1);
    expect(bad2?.status).toBe(400);
    await d.waitClosed();
    const tls = new RawClient(listener.port);
    tls.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
    const [bad3] = await tls.read(1);
    expect(bad3?.status).toBe(400);
    await tls.waitClosed();
    const e = new RawClient(listener.port);
    e.write('GET /v1/echo/ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect((await e.read(1))[0]?.status).toBe(200);
  });

  it('clientErrorResponse answers parser errors in the service shape: unknown method 405, oversized head 431', async () => {
    const app = express();
    app.get('/x', (_req, res) => void res.send('ok'));
    const shaped = await createListener(app, {
      port: 0,
      host: '127.0.0.1',
      clientErrorResponse: (status) => ({ headers: { 'Content-Type': 'application/json', 'X-Shape': 'service' }, body: JSON.stringify({ errors: [], status }) }),
    });
    try {
      const c = new RawClient(shaped.port);
      c.write('FOO /x HTTP/1.1\r\nHost: x\r\n\r\n');
      const [foo] = await c.read(1);
      expect(foo?.status).toBe(405);
      expect(foo?.headers['x-shape']).toBe('service');
      expect(JSON.parse(foo?.body ?? '')).toEqual({ errors: [], status: 405 });
      await c.waitClosed();
      const d = new RawClient(shaped.port);
      d.write(`GET /x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const [big] = await d.read(1);
      expect(big?.status).toBe(431);
      expect(JSON.parse(big?.body ?? '')).toEqual({ errors: [], status: 431 });
      await d.waitClosed();
      // LIST is still served, not refused as an unknown method.
      const e = new RawClient(shaped.port);
      e.write('LIST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect((await e.read(1))[0]?.status).toBe(404);
    } finally {
      await shaped.close();
    }
  });

  it('real HTTP clients can send LIST', async () => {
    const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: listener.port, method: 'LIST', path: '/v1/secret/metadata/app/' }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body.status).toBe(200);
    expect(JSON.parse(body.text)).toEqual({ op: 'list', path: 'app/', keys: ['a', 'b/'] });
  });

  it('413 in the flavour shape for declared and chunked bodies over the limit, then stays healthy', async () => {
    const big = JSON.stringify({ data: { v: 'x'.repeat(2000) } });
    const c = new RawClient(listener.port);
    c.write(`POST /v1/secret/data/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
    const [declared] = await c.read(1);
    expect(declared?.status).toBe(413);
    expect(declared?.headers.connection).toBe('close');
    expect(declared?.headers['content-type']).toBe('application/json');
    expect(declared?.body).toBe('{"errors":["failed to parse JSON input: http: request body too large"]}\n');
    await c.waitClosed();

    const d = new RawClient(listener.port);
    d.write('POST /v1/secret/data/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    for (let i = 0; i < 4; i++) d.write(`200\r\n${'y'.repeat(512)}\r\n`);
    const [chunked] = await d.read(1);
    expect(chunked?.status).toBe(413);
    expect(chunked?.body).toBe('{"errors":["failed to parse JSON input: http: request body too large"]}\n');
    await d.waitClosed();

    const e = new RawClient(listener.port);
    e.write('PUT /v1/secret/data/a HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\n\r\n{"data":{"a":1}}');
    const [ok] = await e.read(1);
    expect(ok?.status).toBe(200);
    expect(JSON.parse(ok?.body ?? '')).toEqual({ op: 'create', path: 'a', data: { a: 1 }, unknown: [] });
    e.destroy();
  });

  it('drops a connection whose body passes the listener hard cap', async () => {
    const c = new RawClient(listener.port);
    c.write('PUT /v1/echo/stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = `8000\r\n${'z'.repeat(0x8000)}\r\n`;
    for (let i = 0; i < 3 && !c.closed; i++) c.write(chunk);
    await c.waitClosed();
  });

  it('a client still sending a too-large body reads the 413 before the connection closes (lingering close)', async () => {
    // 4 MB declared and sent against the app's 1 KiB limit: the app answers 413 at once
    // with Connection: close while most of the body is still in flight; the listener
    // half-closes, drops the rest, and the connection ends once the client closes (or after
    // LINGER_MS). (Closing with unread bytes resets the connection, which can make a
    // client's kernel drop an unread 413; loopback rarely shows that, so this is a check of
    // the lingering path, not a reproduction of the loss.)
    const size = 4 * 1024 * 1024;
    for (let round = 0; round < 3; round++) {
      const c = new RawClient(listener.port);
      c.write(`PUT /v1/echo/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      for (let sent = 0; sent < size && !c.closed; sent += 64 * 1024) c.write(Buffer.alloc(64 * 1024, 0x20));
      const [res] = await c.read(1);
      expect(res?.status).toBe(413);
      expect(res?.headers.connection).toBe('close');
      expect(res?.body).toBe('{"errors":["failed to parse JSON input: http: request body too large"]}\n');
      await c.waitClosed(LINGER_MS + 2000);
    }
  });

  it('after a response that closes the connection, reads and drops what the client still sends instead of resetting', async () => {
    // Closing a socket with unread bytes makes the kernel answer with a reset, which can
    // destroy a response the client has not read yet; the listener half-closes and keeps
    // reading instead, so a client still sending sees its writes succeed and a clean end.
    const socket = net.connect({ port: listener.port, host: '127.0.0.1', allowHalfOpen: true });
    let error: Error | null = null;
    let text = '';
    let ended = false;
    socket.on('error', (e) => (error = e));
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('end', () => (ended = true));
    socket.write(`PUT /v1/echo/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024}\r\n\r\n`);
    for (let i = 0; i < 100 && !ended; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ended).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    for (let i = 0; i < 20; i++) {
      socket.write(Buffer.alloc(64 * 1024, 0x20));
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise<void>((resolve) => socket.end(resolve));
    await new Promise((r) => socket.once('close', r));
    expect(error).toBeNull();
  });

  it('a body over the connection cap still gets the app\'s 413 when the cap equals the app limit', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 'scheduler', logger, errorFlavour: 'nomad', maxRequestBytes: 1024, metrics: false }, (a) => {
      mountPaths(a, [definePath({ pattern: 'echo', summary: 'echo', takesArbitraryInput: true, operations: { update: (ctx) => ({ body: ctx.input }) } })], { prefix: '/v1' });
    });
    const l = await createListener(app, { port: 0, host: '127.0.0.1', maxRequestBytes: 1024 });
    try {
      for (const size of [1100, 64 * 1024]) {
        const c = new RawClient(l.port);
        c.write(`PUT /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
        c.write(Buffer.alloc(size, 0x20));
        const [res] = await c.read(1);
        expect(res?.status).toBe(413);
        expect(res?.body).toBe('request body too large');
        const started = Date.now();
        await c.waitClosed(LINGER_MS + 2000);
        expect(Date.now() - started).toBeLessThan(LINGER_MS + 1000);
      }
      // A client that keeps the connection open and keeps sending is cut off after LINGER_MS.
      const d = new RawClient(l.port);
      d.write('PUT /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      const pump = setInterval(() => {
        if (!d.closed) d.write(`400\r\n${' '.repeat(0x400)}\r\n`);
      }, 20);
      try {
        const [res] = await d.read(1);
        expect(res?.status).toBe(413);
        await d.waitClosed(LINGER_MS + 2000);
      } finally {
        clearInterval(pump);
      }
    } finally {
      await l.close({ drainTimeoutMs: 100 });
    }
  });

  it('aborts ctx.signal when the client disconnects', async () => {
    aborted = [];
    const c = new RawClient(listener.port);
    c.write('GET /v1/wait HTTP/1.1\r\nHost: x\r\nX-Request-Id: wait-1\r\n\r\n');
    for (let i = 0; i < 50 && !released; i++) await new Promise((r) => setTimeout(r, 10));
    expect(released).toBeDefined();
    c.destroy();
    for (let i = 0; i < 50 && aborted.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(aborted).toEqual(['wait-1']);
  });

  it('close() refuses new connections', async () => {
    const { logger } = capturedLogger();
    const app = createKitApp({ service: 's', logger, errorFlavour: 'registry', metrics: false }, () => {});
    const l = await createListener(app, { port: 0 });
    const idle = new RawClient(l.port);
    idle.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect((await idle.read(1))[0]?.status).toBe(200);
    await l.close({ drainTimeoutMs: 1000 });
    await idle.waitClosed();
    await expect(
      new Promise((resolve, reject) => {
        const s = net.connect(l.port, '127.0.0.1', () => resolve('connected'));
        s.on('error', reject);
      }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('listRequestStart (where a LIST node:http rejected begins)', () => {
  const err = (raw: string, bytesParsed: number, code = 'HPE_INVALID_METHOD') => ({ code, bytesParsed, rawPacket: Buffer.from(raw, 'latin1') });
  const text = (b: Buffer | null) => (b === null ? null : b.toString('latin1'));

  it('finds the request two bytes before the error (llhttp stops at the S)', () => {
    expect(text(listRequestStart(err('LIST /a HTTP/1.1\r\n\r\n', 2)))).toBe('LIST /a HTTP/1.1\r\n\r\n');
    const pipelined = 'GET /a HTTP/1.1\r\nHost: x\r\n\r\nLIST /b HTTP/1.1\r\n\r\n';
    expect(text(listRequestStart(err(pipelined, pipelined.indexOf('LIST') + 2)))).toBe('LIST /b HTTP/1.1\r\n\r\n');
  });

  it('puts back the L or LI an earlier read carried', () => {
    expect(text(listRequestStart(err('IST /a HTTP/1.1\r\n\r\n', 1)))).toBe('LIST /a HTTP/1.1\r\n\r\n');
    expect(text(listRequestStart(err('ST /a HTTP/1.1\r\n\r\n', 0)))).toBe('LIST /a HTTP/1.1\r\n\r\n');
    expect(text(listRequestStart(err('LIS', 2)))).toBe('LIS');
  });

  it('is null for anything else', () => {
    expect(listRequestStart(err('LIX /a HTTP/1.1\r\n\r\n', 2))).toBeNull();
    expect(listRequestStart(err('LISTEN /a HTTP/1.1\r\n\r\n', 2))).toBeNull();
    expect(listRequestStart(err('list /a HTTP/1.1\r\n\r\n', 0))).toBeNull();
    expect(listRequestStart(err('FOO /a HTTP/1.1\r\n\r\n', 0))).toBeNull();
    expect(listRequestStart(err('LIST /a HTTP/1.1\r\n\r\n', 2, 'HPE_INVALID_URL'))).toBeNull();
    expect(listRequestStart({ code: 'HPE_INVALID_METHOD' })).toBeNull();
    expect(listRequestStart(err('LIST', 9))).toBeNull();
  });
});

describe('prototypeClassesFor (requests and responses born with the app prototypes)', () => {
  it('gives an Express app classes whose instances already have its prototypes', () => {
    const app = express();
    const classes = prototypeClassesFor(app);
    expect(classes).toBeDefined();
    const socket = new net.Socket();
    const req = new classes!.IncomingMessage(socket);
    const res = new classes!.ServerResponse(req);
    expect(Object.getPrototypeOf(req)).toBe(app.request);
    expect(Object.getPrototypeOf(res)).toBe(app.response);
    expect(req).toBeInstanceOf(http.IncomingMessage);
    expect(res).toBeInstanceOf(http.ServerResponse);
    // node:http's own constructor ran on them.
    expect(res.statusCode).toBe(200);
    expect(res.headersSent).toBe(false);
    expect(req.headers).toEqual({});
    socket.destroy();
  });

  it('gives an app one set of classes, whichever listener asks', () => {
    const app = express();
    const first = prototypeClassesFor(app);
    const request = app.request;
    expect(prototypeClassesFor(app)).toBe(first);
    expect(app.request).toBe(request);
    // The app's own properties moved to the new prototypes: req.app still finds the app.
    const req = new first!.IncomingMessage(new net.Socket());
    expect((req as unknown as { app: unknown }).app).toBe(app);
  });

  it('keeps requests and responses fast-property objects sharing one map (V8 natives, child process)', async () => {
    // A request/response whose properties went to dictionary mode, or got a map of its
    // own, makes every property access in node:http and Express on it slower; the
    // fixture serves 200 POSTs through the kit behind createListener and counts both.
    const fixture = join(__dirname, 'fixtures', 'object-shapes.ts');
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', fixture], { cwd: join(__dirname, '..'), timeout: 30_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      );
    });
    expect(JSON.parse(out)).toEqual({ requests: 200, slowRequest: 0, slowResponse: 0, otherRequestMap: 0, otherResponseMap: 0, statuses: [200] });
  }, 60_000);

  it('leaves other request listeners to node:http defaults', () => {
    expect(prototypeClassesFor((_req: http.IncomingMessage, _res: http.ServerResponse) => undefined)).toBeUndefined();
    const fake = Object.assign(() => undefined, { request: {}, response: {} });
    expect(prototypeClassesFor(fake)).toBeUndefined();
    expect(prototypeClassesFor(undefined)).toBeUndefined();
  });

  it("makes Express's per-request Object.setPrototypeOf a no-op behind createListener (and only there)", async () => {
    const app = express();
    app.get('/p', (req, res) => {
      res.json({ query: req.query, path: req.path, sameProto: Object.getPrototypeOf(res) === app.response });
    });
    const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
    // Counted from here: the requests' prototypes, not the classes' set up above.
    const swapped: unknown[] = [];
    const original = Object.setPrototypeOf;
    Object.setPrototypeOf = ((o: object, p: object | null) => {
      if (Object.getPrototypeOf(o) !== p) swapped.push(o);
      return original(o, p);
    }) as typeof Object.setPrototypeOf;
    const plain = http.createServer(app);
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const get = (port: number) =>
        new Promise<{ status: number; body: unknown }>((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port, path: '/p?a=1' }, (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
            })
            .on('error', reject);
        });
      const viaListener = await get(listener.port);
      expect(viaListener).toEqual({ status: 200, body: { query: { a: '1' }, path: '/p', sameProto: true } });
      expect(swapped).toHaveLength(0);
      // Control: a plain node:http server hands Express objects it must re-prototype.
      const viaPlain = await get((plain.address() as net.AddressInfo).port);
      expect(viaPlain).toEqual(viaListener);
      expect(swapped).toHaveLength(2);
    } finally {
      Object.setPrototypeOf = original;
      plain.close();
      await listener.close({ drainTimeoutMs: 100 });
    }
  });
});
