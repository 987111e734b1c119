// The real nginx binary in front of stand-in upstreams: routing by prefix, Vault's LIST
// method, unlimited box uploads, unbuffered scheduler streams, keep-alive and TLS, and the
// errors the gateway answers itself (413/502/504) in each API's shape.
// The config is infra/nginx rendered by nginx-config.ts (only addresses/paths change, and
// read timeouts for the 504 test).
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayError, listenPorts, renderNginx, type UpstreamName } from './nginx-config';

const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
const haveNginx = existsSync(NGINX);
if (!haveNginx) {
  // CI installs nginx (Debian package); a developer machine may not have it.
  console.warn(`nginx.itest: skipped, ${NGINX} not found (apt-get install nginx, or set NGINX_BIN)`);
}
const describeNginx = haveNginx ? describe : describe.skip;

const BULK_BYTES = 48 * 1024 * 1024;
const bulkWritten = new Map<string, number>();

const UPSTREAMS: UpstreamName[] = ['secrets', 'scheduler', 'boxes', 'registry', 'controller'];

interface Seen {
  upstream: UpstreamName;
  method: string;
  url: string;
  headers: Record<string, string>;
  bodyBytes: number;
  connection: number;
}

// A raw HTTP/1.1 server: Node's parser would reject LIST before any JavaScript runs, so
// the stand-in upstream parses request heads itself (Content-Length bodies, keep-alive).
function startUpstream(name: UpstreamName, seen: Seen[]): Promise<Server> {
  let connections = 0;
  const server = createServer((socket: Socket) => {
    const connection = ++connections;
    let buf = Buffer.alloc(0);
    let need: { head: Seen; remaining: number } | undefined;
    const respond = (req: Seen) => {
      seen.push(req);
      if (req.url.includes('bulk=1')) {
        // 48 MB as fast as the proxy accepts it; bulkWritten shows how far it got.
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ' + BULK_BYTES + '\r\n\r\n');
        const chunk = Buffer.alloc(64 * 1024, 1);
        let sent = 0;
        const pump = () => {
          while (sent < BULK_BYTES) {
            sent += chunk.length;
            const more = socket.write(chunk, () => {
              bulkWritten.set(req.url, (bulkWritten.get(req.url) ?? 0) + chunk.length);
            });
            if (!more) {
              socket.once('drain', pump);
              return;
            }
          }
        };
        pump();
        return;
      }
      if (req.url.startsWith('/v1/event/stream')) {
        // First event now, the rest 1.5 s later: a buffering proxy would hold the first.
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
        const first = `${JSON.stringify({ Index: 1, upstream: name })}\n`;
        socket.write(`${Buffer.byteLength(first).toString(16)}\r\n${first}\r\n`);
        setTimeout(() => {
          const second = `${JSON.stringify({ Index: 2 })}\n`;
          socket.write(`${Buffer.byteLength(second).toString(16)}\r\n${second}\r\n0\r\n\r\n`);
        }, 1500);
        return;
      }
      const own = /[?&]status=(\d{3})/.exec(req.url);
      if (own) {
        // The service's own error response: the gateway must pass it through untouched.
        const body = `own ${own[1]} from ${name}\n`;
        socket.write(
          `HTTP/1.1 ${own[1]} Upstream Says So\r\nContent-Type: text/x-upstream-error\r\nX-Upstream: ${name}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        return;
      }
      const body = JSON.stringify(req);
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body}`,
      );
    };
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (need) {
          const take = Math.min(need.remaining, buf.length);
          need.remaining -= take;
          need.head.bodyBytes += take;
          buf = buf.subarray(take);
          if (need.remaining > 0) return;
          const done = need.head;
          need = undefined;
          respond(done);
          continue;
        }
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        const [requestLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
        buf = buf.subarray(end + 4);
        const [method = '', url = ''] = (requestLine ?? '').split(' ');
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const head: Seen = { upstream: name, method, url, headers, bodyBytes: 0, connection };
        const length = Number(headers['content-length'] ?? 0);
        if (length > 0) need = { head, remaining: length };
        else respond(head);
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

function freePort(): Promise<number> {
  return new Promise((r) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => r(port));
    });
  });
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

// Raw request over one TCP connection; resolves with status line, headers and body.
function rawRequest(port: number, head: string, body?: Buffer): Promise<RawResponse> {
  return new Promise((resolveReq, reject) => {
    const s = createConnection({ host: '127.0.0.1', port });
    let data = Buffer.alloc(0);
    s.on('connect', () => {
      s.write(head);
      if (body) s.write(body);
    });
    s.on('data', (c: Buffer) => {
      data = Buffer.concat([data, c]);
    });
    s.on('error', reject);
    s.on('end', () => {
      const text = data.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const l of text.slice(0, end).split('\r\n').slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolveReq({ status: Number(text.split(' ')[1]), headers, body: text.slice(end + 4) });
    });
  });
}

/** A throwaway CA (ca.crt) and a server certificate for 127.0.0.1/localhost in `dir`. */
function makePki(dir: string): void {
  mkdirSync(dir);
  const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=selfstack test CA', '-days', '2');
  ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  ossl('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '2', '-extfile', 'san.ext');
}

interface Gateway {
  /** production listen port -> test port */
  ports: Record<number, number>;
  stop(): Promise<void>;
}

/** Renders infra/nginx into `prefix`, checks it with `nginx -t`, starts it and waits for health. */
async function startGateway(prefix: string, upstreams: Record<UpstreamName, string>, tlsDir: string, readTimeout?: string): Promise<Gateway> {
  const ports: Record<number, number> = {};
  for (const p of listenPorts()) ports[p] = await freePort();
  const conf = renderNginx({ prefix, upstreams, ports, tlsDir, ...(readTimeout === undefined ? {} : { readTimeout }) });

  execFileSync(NGINX, ['-t', '-p', prefix, '-c', conf], { stdio: 'pipe' });
  const nginx = spawn(NGINX, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  nginx.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${ports[8080]}/_gateway/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline || nginx.exitCode !== null) throw new Error(`nginx did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ports,
    stop: async () => {
      if (nginx.exitCode === null) {
        const exited = new Promise((r) => nginx.once('exit', r));
        nginx.kill('SIGQUIT');
        await exited;
      }
    },
  };
}

/** Status, Content-Type, Cache-Control and body of a plain GET (or of `init`). */
async function answer(port: number, path: string, init?: RequestInit) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    cacheControl: res.headers.get('cache-control'),
    body: await res.text(),
  };
}

/** The answer the gateway must give in place of `api` (the service's own error shape). */
function expectedAnswer(api: UpstreamName, status: 413 | 502 | 504) {
  const e = gatewayError(api, status);
  return { status, contentType: e.headers['Content-Type'], cacheControl: e.headers['Cache-Control'] ?? null, body: e.body };
}

describeNginx('nginx gateway (real binary)', () => {
  const prefix = mkdtempSync(join(tmpdir(), 'selfstack-nginx-'));
  const seen: Seen[] = [];
  const upstreamServers: Server[] = [];
  let ports: Record<number, number> = {};
  let gateway: Gateway | undefined;
  let gw = 0;

  beforeAll(async () => {
    const tls = join(prefix, 'pki');
    makePki(tls);
    const upstreams = {} as Record<UpstreamName, string>;
    for (const name of UPSTREAMS) {
      const srv = await startUpstream(name, seen);
      upstreamServers.push(srv);
      upstreams[name] = `127.0.0.1:${(srv.address() as AddressInfo).port}`;
    }
    gateway = await startGateway(prefix, upstreams, tls);
    ports = gateway.ports;
    gw = ports[8080]!;
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(upstreamServers.map((s) => new Promise((r) => s.close(r))));
    for (const s of upstreamServers) (s as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    rmSync(prefix, { recursive: true, force: true });
  });

  const get = async (path: string, port = gw) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    const text = await res.text();
    return { status: res.status, json: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Seen & { errors?: string[] }) : undefined, text };
  };

  it.each([
    ['/api/v1/box/hashicorp/precise64', 'boxes'],
    ['/.well-known/terraform.json', 'registry'],
    ['/v1/modules/hashicorp/consul/aws/versions', 'registry'],
    ['/v1/modules?limit=2', 'registry'],
    ['/v2/modules/hashicorp/consul/aws/downloads/summary', 'registry'],
    ['/v1/jobs?prefix=web', 'scheduler'],
    ['/v1/node/abc/allocations', 'scheduler'],
    ['/v1/sys/health', 'secrets'],
    ['/v1/secret/data/a%2Fb//c', 'secrets'],
  ])('routes %s to %s with the URI unchanged', async (path, upstream) => {
    const { status, json } = await get(path);
    expect(status).toBe(200);
    expect(json?.upstream).toBe(upstream);
    expect(json?.url).toBe(path);
    expect(json?.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(json?.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('answers unknown paths itself with 404', async () => {
    const { status, text } = await get('/nothing/here');
    expect(status).toBe(404);
    expect(JSON.parse(text).errors[0]).toMatch(/no route/);
  });

  it('serves each API on its own port too', async () => {
    expect((await get('/hashicorp/precise64', ports[3100])).json?.upstream).toBe('boxes');
    expect((await get('/v1/jobs', ports[8200])).json?.upstream).toBe('secrets');
    expect((await get('/v1/sys/health', ports[4646])).json?.upstream).toBe('scheduler');
    expect((await get('/.well-known/terraform.json', ports[3200])).json?.upstream).toBe('registry');
    expect((await get('/v1/scopes', ports[9200])).json?.upstream).toBe('controller');
  });

  it('passes the LIST method through unchanged', async () => {
    const res = await rawRequest(gw, 'LIST /v1/secret/metadata/ HTTP/1.1\r\nHost: gw\r\nX-Vault-Token: t\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as Seen;
    expect(body).toMatchObject({ upstream: 'secrets', method: 'LIST', url: '/v1/secret/metadata/' });
    expect(body.headers['x-vault-token']).toBe('t');
  });

  it('accepts a 40 MB upload on the box upload path but rejects it elsewhere (32m limit)', async () => {
    const size = 40 * 1024 * 1024;
    const body = Buffer.alloc(size, 7);
    const up = await rawRequest(gw, `PUT /api/v1/uploads/tok123 HTTP/1.1\r\nHost: gw\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`, body);
    expect(up.status).toBe(200);
    expect(JSON.parse(up.body)).toMatchObject({ upstream: 'boxes', method: 'PUT', bodyBytes: size });

    const big = await rawRequest(gw, `PUT /v1/secret/data/x HTTP/1.1\r\nHost: gw\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`, body);
    expect(big.status).toBe(413);
  });

  // 32 MiB + 1 MiB: over client_max_body_size 32m on every non-upload route.
  const OVERSIZED = Buffer.alloc(33 * 1024 * 1024, 7);
  const put = (port: number, path: string) =>
    rawRequest(port, `PUT ${path} HTTP/1.1\r\nHost: gw\r\nContent-Length: ${OVERSIZED.length}\r\nConnection: close\r\n\r\n`, OVERSIZED);
  const shape = (r: RawResponse) => ({ status: r.status, contentType: r.headers['content-type'], cacheControl: r.headers['cache-control'] ?? null, body: r.body });

  it.each([
    ['secrets', 8080, '/v1/secret/data/x'],
    // An extension must not pick another Content-Type (types {} in error-pages.conf).
    ['secrets', 8080, '/v1/secret/data/page.html'],
    ['scheduler', 8080, '/v1/jobs'],
    ['boxes', 8080, '/api/v1/boxes'],
    ['registry', 8080, '/v1/modules/ns/name/prov'],
    ['secrets', 8200, '/v1/secret/data/x'],
    ['scheduler', 4646, '/v1/jobs'],
    ['boxes', 3100, '/api/v1/boxes'],
    ['registry', 3200, '/v1/modules/ns/name/prov'],
    ['controller', 9200, '/v1/scopes'],
  ] as const)('answers an oversized body for %s (port %d, %s) with 413 in its error shape', async (api, port, path) => {
    const res = await put(ports[port]!, path);
    expect(shape(res)).toEqual(expectedAnswer(api, 413));
  });

  it('spells the 413 bodies out exactly (Vault with Cache-Control, Nomad plain text)', async () => {
    expect(shape(await put(gw, '/v1/secret/data/x'))).toEqual({
      status: 413,
      contentType: 'application/json',
      cacheControl: 'no-store',
      body: '{"errors":["failed to parse JSON input: http: request body too large"]}\n',
    });
    expect(shape(await put(gw, '/v1/jobs'))).toEqual({
      status: 413,
      contentType: 'text/plain; charset=utf-8',
      cacheControl: null,
      body: 'request body too large',
    });
    expect(shape(await put(gw, '/api/v1/boxes'))).toEqual({
      status: 413,
      contentType: 'application/json',
      cacheControl: null,
      body: '{"errors":["request body too large"],"success":false}',
    });
  });

  it('answers an oversized chunked body (no Content-Length) with the same 413', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const chunks = Buffer.concat([
      ...Array.from({ length: 33 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])),
      Buffer.from('0\r\n\r\n'),
    ]);
    const res = await rawRequest(gw, 'PUT /v1/job/web HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n', chunks);
    expect(shape(res)).toEqual(expectedAnswer('scheduler', 413));
  });

  it.each([
    ['secrets', 8080, '/v1/secret/data/x?status=502'],
    ['secrets', 8200, '/v1/sys/health?status=504'],
    ['scheduler', 8080, '/v1/jobs?status=502'],
    ['scheduler', 4646, '/v1/jobs?status=413'],
    ['boxes', 8080, '/api/v1/boxes?status=502'],
    ['boxes', 3100, '/api/v1/uploads/tok?status=504'],
    ['registry', 8080, '/v1/modules/ns/name/prov?status=413'],
    ['controller', 9200, '/v1/scopes?status=502'],
  ] as const)("passes the %s service's own error response through untouched (port %d, %s)", async (api, port, path) => {
    const status = Number(/status=(\d+)/.exec(path)![1]);
    const res = await fetch(`http://127.0.0.1:${ports[port]}${path}`);
    expect({ status: res.status, contentType: res.headers.get('content-type'), upstream: res.headers.get('x-upstream'), body: await res.text() }).toEqual({
      status,
      contentType: 'text/x-upstream-error',
      upstream: api,
      body: `own ${status} from ${api}\n`,
    });
  });

  it('streams scheduler events without buffering', async () => {
    const started = Date.now();
    const res = await fetch(`http://127.0.0.1:${gw}/v1/event/stream`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstAt = Date.now() - started;
    expect(new TextDecoder().decode(first.value)).toContain('"Index":1');
    // The upstream sends the second event 1.5 s after the first.
    expect(firstAt).toBeLessThan(1200);
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toContain('"Index":2');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });

  // Buffering shows in back-pressure: a buffering proxy drains the upstream into memory
  // and temp files although the client reads nothing; an unbuffered one stalls it.
  async function bytesDrainedWhileClientStalls(port: number, path: string): Promise<number> {
    const s = createConnection({ host: '127.0.0.1', port });
    s.pause();
    s.write(`GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 2000));
    const drained = bulkWritten.get(path) ?? 0;
    s.destroy();
    return drained;
  }

  it('does not buffer scheduler responses (back-pressure reaches the upstream)', async () => {
    const scheduler = await bytesDrainedWhileClientStalls(gw, '/v1/event/stream?bulk=1');
    expect(scheduler).toBeGreaterThan(0);
    expect(scheduler).toBeLessThan(BULK_BYTES / 2);
    // Control: the controller port keeps nginx's default buffering and drains it all,
    // which shows the probe above can tell the two apart.
    const buffered = await bytesDrainedWhileClientStalls(ports[9200]!, '/control?bulk=1');
    expect(buffered).toBe(BULK_BYTES);
  });

  it('reuses upstream connections (HTTP/1.1 keep-alive)', async () => {
    const before = seen.filter((s) => s.upstream === 'registry').length;
    for (let i = 0; i < 10; i++) await get(`/v1/modules/ns/name/prov/versions?i=${i}`);
    const mine = seen.filter((s) => s.upstream === 'registry').slice(before);
    expect(mine).toHaveLength(10);
    // Each nginx worker keeps its own idle pool, so allow one connection per worker,
    // but some connection must have carried several requests.
    const perConnection = new Map<number, number>();
    for (const s of mine) perConnection.set(s.connection, (perConnection.get(s.connection) ?? 0) + 1);
    expect(perConnection.size).toBeLessThan(10);
    expect(Math.max(...perConnection.values())).toBeGreaterThan(1);
    // The client's "Connection: close"/"keep-alive" must not reach the upstream.
    expect(mine[0]?.headers.connection).toBeUndefined();
  });

  it('serves registry discovery over TLS with the configured certificate', async () => {
    const ca = readFileSync(join(prefix, 'pki', 'ca.crt'));
    const body = await new Promise<string>((resolveReq, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port: ports[443], path: '/.well-known/terraform.json', ca, servername: 'localhost' },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolveReq(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const seenReq = JSON.parse(body) as Seen;
    expect(seenReq).toMatchObject({ upstream: 'registry', url: '/.well-known/terraform.json' });
    expect(seenReq.headers['x-forwarded-proto']).toBe('https');
  });
});

// Errors nginx produces when a service is not there: every upstream pointed at a port where
// nothing listens (502), or at a server that accepts and never answers, with the read
// timeouts rendered down to 1 s (504).
describeNginx('nginx gateway: its own 502/504 in each API\'s shape', () => {
  const prefix = mkdtempSync(join(tmpdir(), 'selfstack-nginx-down-'));
  const tls = join(prefix, 'pki');
  let down: Gateway | undefined;
  let hung: Gateway | undefined;
  let blackHole: Server | undefined;
  const held: Socket[] = [];

  beforeAll(async () => {
    makePki(tls);
    const nowhere = `127.0.0.1:${await freePort()}`;
    down = await startGateway(join(prefix, 'down'), Object.fromEntries(UPSTREAMS.map((u) => [u, nowhere])) as Record<UpstreamName, string>, tls);

    blackHole = createServer((s) => {
      held.push(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => blackHole!.listen(0, '127.0.0.1', r));
    const silent = `127.0.0.1:${(blackHole.address() as AddressInfo).port}`;
    hung = await startGateway(join(prefix, 'hung'), Object.fromEntries(UPSTREAMS.map((u) => [u, silent])) as Record<UpstreamName, string>, tls, '1s');
  });

  afterAll(async () => {
    await down?.stop();
    await hung?.stop();
    for (const s of held) s.destroy();
    await new Promise((r) => (blackHole ? blackHole.close(r) : r(undefined)));
    rmSync(prefix, { recursive: true, force: true });
  });

  // [api, production port, path, method]: the path-prefix port and the API's own port.
  const cases = [
    ['secrets', 8080, '/v1/secret/data/x', 'GET'],
    ['secrets', 8200, '/v1/sys/health', 'GET'],
    ['scheduler', 8080, '/v1/jobs?index=3&wait=5m', 'GET'],
    ['scheduler', 4646, '/v1/event/stream', 'GET'],
    ['boxes', 8080, '/api/v1/box/hashicorp/precise64', 'GET'],
    ['boxes', 8080, '/api/v1/uploads/tok123', 'PUT'],
    ['boxes', 3100, '/hashicorp/precise64', 'GET'],
    ['boxes', 3100, '/api/v1/box/u/b/version/1/provider/p/upload/direct', 'PUT'],
    ['registry', 8080, '/.well-known/terraform.json', 'GET'],
    ['registry', 8080, '/v1/modules/ns/name/prov/versions', 'GET'],
    ['registry', 3200, '/v1/modules/ns/name/prov/versions', 'GET'],
    ['controller', 9200, '/v1/scopes', 'GET'],
  ] as const;
  const init = (method: string): RequestInit => (method === 'PUT' ? { method, body: 'box bytes' } : { method });

  it.each(cases)('%s is down: port %d, %s %s -> 502 in its shape', async (api, port, path, method) => {
    expect(await answer(down!.ports[port]!, path, init(method))).toEqual(expectedAnswer(api, 502));
  });

  it('502 over TLS on 443 too (registry discovery)', async () => {
    const ca = readFileSync(join(tls, 'ca.crt'));
    const res = await new Promise<{ status: number; contentType: string | undefined; body: string }>((resolveReq, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: down!.ports[443], path: '/.well-known/terraform.json', ca, servername: 'localhost' }, (r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c.toString()));
        r.on('end', () => resolveReq({ status: r.statusCode ?? 0, contentType: r.headers['content-type'], body }));
      });
      req.on('error', reject);
      req.end();
    });
    const want = expectedAnswer('registry', 502);
    expect(res).toEqual({ status: 502, contentType: want.contentType, body: want.body });
  });

  it('a service that never answers: 504 in its shape on every route (read timeout rendered to 1 s)', async () => {
    const started = Date.now();
    const got = await Promise.all(cases.map(async ([api, port, path, method]) => ({ api, port, path, ...(await answer(hung!.ports[port]!, path, init(method))) })));
    expect(got).toEqual(cases.map(([api, port, path]) => ({ api, port, path, ...expectedAnswer(api, 504) })));
    // The timeout, not a refused connection, produced them.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(held.length).toBeGreaterThanOrEqual(cases.length);
  });
});
