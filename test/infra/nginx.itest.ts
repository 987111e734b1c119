// The real nginx binary in front of stand-in upstreams: routing by prefix, Vault's LIST
// method, unlimited box uploads, unbuffered scheduler streams, keep-alive and TLS.
// The config is infra/nginx rendered by nginx-config.ts (only addresses/paths change).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenPorts, renderNginx, type UpstreamName } from './nginx-config';

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

// Raw request over one TCP connection; resolves with status line, headers and body.
function rawRequest(port: number, head: string, body?: Buffer): Promise<{ status: number; body: string }> {
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
      resolveReq({ status: Number(text.split(' ')[1]), body: text.slice(end + 4) });
    });
  });
}

describeNginx('nginx gateway (real binary)', () => {
  const prefix = mkdtempSync(join(tmpdir(), 'selfstack-nginx-'));
  const seen: Seen[] = [];
  const upstreamServers: Server[] = [];
  const ports: Record<number, number> = {};
  let nginx: ChildProcess | undefined;
  let stderr = '';
  let gw = 0;

  beforeAll(async () => {
    // A throwaway CA and a server certificate for 127.0.0.1/localhost.
    const tls = join(prefix, 'pki');
    mkdirSync(tls);
    const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: tls, stdio: 'pipe' });
    ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=selfstack test CA', '-days', '2');
    ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=localhost');
    writeFileSync(join(tls, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    ossl('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '2', '-extfile', 'san.ext');

    const upstreams = {} as Record<UpstreamName, string>;
    for (const name of UPSTREAMS) {
      const srv = await startUpstream(name, seen);
      upstreamServers.push(srv);
      upstreams[name] = `127.0.0.1:${(srv.address() as AddressInfo).port}`;
    }
    for (const p of listenPorts()) ports[p] = await freePort();
    gw = ports[8080]!;
    const conf = renderNginx({ prefix, upstreams, ports, tlsDir: tls });

    execFileSync(NGINX, ['-t', '-p', prefix, '-c', conf], { stdio: 'pipe' });
    nginx = spawn(NGINX, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${gw}/_gateway/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline || nginx.exitCode !== null) throw new Error(`nginx did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      nginx.kill('SIGQUIT');
      await exited;
    }
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
