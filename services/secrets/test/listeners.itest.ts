// Issue 28, item 2 (listeners from the HCL file, TLS) and the listener half of item 4
// (errors node:http answers before the app: unknown methods, oversized headers), against
// the real service process with two listeners: HTTPS with a certificate signed by a test
// CA, and plain HTTP on loopback with its own settings.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import express from 'express';
import vault from 'node-vault';
import { createListener } from '@selfstack/http-kit';
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { envSchema, parseServerConfigText } from '../src/config';
import { makeTestCa, type TestCa } from './fixtures/test-ca';
import { startFailing, startService, type ServiceProcess } from './fixtures/service-process';
import './harness';

const run = promisify(execFile);
const ROOT_TOKEN = 'listeners-root-token';

async function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('curl', ['-sS', ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Sends raw bytes over TLS (verified against `ca`) and returns the whole answer. */
function rawTls(url: string, ca: Buffer, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca, servername: 'localhost' }, () => socket.end(text));
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

function splitResponse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [line, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  return { status: Number((line ?? '').split(' ')[1]), headers, body: raw.slice(end + 4) };
}

describe('listeners from the HCL file', () => {
  let db: TestDatabase;
  let dir: string;
  let ca: TestCa;
  let caPem: Buffer;
  let svc: ServiceProcess;
  let httpsUrl = '';
  let plainUrl = '';

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'secrets-listeners-'));
    ca = makeTestCa(dir);
    caPem = readFileSync(ca.caCert);
    const config = join(dir, 'server.hcl');
    writeFileSync(
      config,
      `
listener "tcp" {
  address         = "127.0.0.1:0"
  tls_cert_file   = "${ca.serverCert}"
  tls_key_file    = "${ca.serverKey}"
  tls_min_version = "tls12"
  custom_response_headers {
    "default" = { "X-Listener" = ["tls"] }
  }
}
listener "tcp" {
  address                = "127.0.0.1:0"
  tls_disable            = true
  require_request_header = true
  max_request_size       = 2048
  custom_response_headers {
    "default" = { "X-Listener" = ["plain"] }
  }
}
`,
    );
    svc = await startService(
      { DATABASE_URL: db.url, SECRETS_CONFIG: config, SECRETS_DEV_MODE: '1', SECRETS_DEV_ROOT_TOKEN: ROOT_TOKEN, SECRETS_DEV_STATE_FILE: join(dir, 'dev.json'), LOG_LEVEL: 'info' },
      2,
    );
    [httpsUrl, plainUrl] = svc.urls as [string, string];
  });
  afterAll(async () => {
    await svc?.stop();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS on the TLS listener and plain HTTP on the other', () => {
    expect(httpsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(plainUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('curl verifies the certificate against the test CA, and refuses it without', async () => {
    const ok = await curl(['--cacert', ca.caCert, '-D', '-', `${httpsUrl}/v1/sys/health`]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^HTTP\/1\.1 200/);
    expect(ok.stdout).toMatch(/\r\nx-listener: tls\r\n/i);
    expect(ok.stdout).toMatch(/\r\nstrict-transport-security: max-age=31536000; includeSubDomains\r\n/i);
    expect(ok.stdout).toContain('"initialized":true');
    const untrusted = await curl([`${httpsUrl}/v1/sys/health`]);
    expect(untrusted.code).toBe(60);
    // Plain HTTP to the TLS port is not served as HTTP.
    const plain = await curl(['-o', '/dev/null', '-w', '%{http_code}', `${httpsUrl.replace('https', 'http')}/v1/sys/health`]);
    expect(plain.stdout).not.toBe('200');
  });

  it('accepts the LIST method over TLS, also on a kept-alive connection after other requests', async () => {
    const w = await curl(['--cacert', ca.caCert, '-H', `X-Vault-Token: ${ROOT_TOKEN}`, '-X', 'POST', '-d', '{"data":{"a":"1"}}', `${httpsUrl}/v1/secret/data/tls/one`]);
    expect(w.code).toBe(0);
    const list = await curl(['--cacert', ca.caCert, '-H', `X-Vault-Token: ${ROOT_TOKEN}`, '-X', 'LIST', `${httpsUrl}/v1/secret/metadata/tls`]);
    expect(JSON.parse(list.stdout).data.keys).toEqual(['one']);

    const agent = new https.Agent({ ca: caPem, keepAlive: true, maxSockets: 1 });
    const call = (method: string, path: string) =>
      new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
        const req = https.request(`${httpsUrl}${path}`, { method, agent, headers: { 'X-Vault-Token': ROOT_TOKEN } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, socket: req.socket }));
        });
        req.on('error', reject);
        req.end();
      });
    const a = await call('GET', '/v1/secret/data/tls/one');
    const b = await call('LIST', '/v1/secret/metadata/tls');
    const c = await call('GET', '/v1/secret/data/tls/one');
    const d = await call('LIST', '/v1/secret/metadata/tls/');
    agent.destroy();
    expect([a.status, b.status, c.status, d.status]).toEqual([200, 200, 200, 200]);
    expect(a.socket).toBe(d.socket);
    expect(JSON.parse(b.body).data.keys).toEqual(['one']);
    expect(JSON.parse(d.body).data.keys).toEqual(['one']);
  });

  it('node-vault works against the TLS listener with the CA', async () => {
    const client = vault({ endpoint: httpsUrl, token: ROOT_TOKEN, requestOptions: { ca: caPem } });
    await client.write('secret/data/tls/nv', { data: { k: 'v' } });
    expect((await client.read('secret/data/tls/nv')).data.data).toEqual({ k: 'v' });
    expect((await client.list('secret/metadata/tls')).data.keys).toEqual(['nv', 'one']);
    const untrusted = vault({ endpoint: httpsUrl, token: ROOT_TOKEN });
    await expect(untrusted.read('secret/data/tls/nv')).rejects.toThrow(/certificate/i);
  });

  it('each listener has its own settings: the request-header rule and size limit of the plain one', async () => {
    const seal = (headers: string[]) => curl(['-o', '-', '-w', '\n%{http_code}', ...headers.flatMap((h) => ['-H', h]), `${plainUrl}/v1/sys/seal-status`]);
    for (const headers of [[], ['X-Secrets-Request: false'], ['X-Secrets-Request: 0'], ['X-Vault-Request: yes']]) {
      const r = await seal(headers);
      const [body, status] = r.stdout.split('\n').filter((l) => l !== '');
      expect(status).toBe('412');
      expect(JSON.parse(body ?? '')).toEqual({ errors: ["missing 'X-Secrets-Request' header: it must be sent with the value true"] });
    }
    for (const header of ['X-Secrets-Request: true', 'X-Vault-Request: true']) {
      const r = await seal([header]);
      expect(r.stdout.trim().endsWith('200')).toBe(true);
    }
    const big = await curl(['-o', '-', '-w', '\n%{http_code}', '-H', 'X-Secrets-Request: true', '-H', `X-Vault-Token: ${ROOT_TOKEN}`, '-X', 'POST', '-d', JSON.stringify({ data: { x: 'y'.repeat(4000) } }), `${plainUrl}/v1/secret/data/big`]);
    expect(big.stdout.trim().endsWith('413')).toBe(true);
    // The TLS listener has neither rule.
    const tlsSeal = await curl(['--cacert', ca.caCert, '-o', '/dev/null', '-w', '%{http_code}', `${httpsUrl}/v1/sys/seal-status`]);
    expect(tlsSeal.stdout).toBe('200');
    const hdr = await curl(['-D', '-', '-o', '/dev/null', '-H', 'X-Secrets-Request: true', `${plainUrl}/v1/sys/seal-status`]);
    expect(hdr.stdout).toMatch(/\r\nx-listener: plain\r\n/i);
  });

  it('an unknown HTTP method is 405 with Allow and the error body, with the listener headers', async () => {
    for (const method of ['FOO', 'HELP']) {
      const res = splitResponse(await rawTls(httpsUrl, caPem, `${method} /v1/secret/data/x HTTP/1.1\r\nHost: localhost\r\n\r\n`));
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, LIST');
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['x-listener']).toBe('tls');
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      expect(JSON.parse(res.body)).toEqual({ errors: [] });
    }
    // A method node:http knows but the API does not: the app answers, same shape.
    const propfind = await curl(['--cacert', ca.caCert, '-D', '-', '-X', 'PROPFIND', `${httpsUrl}/v1/secret/data/x`]);
    expect(propfind.stdout).toMatch(/^HTTP\/1\.1 405/);
    expect(propfind.stdout).toMatch(/\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, LIST\r\n/i);
    expect(propfind.stdout.trim().endsWith('{"errors":[]}')).toBe(true);
  });

  it('oversized headers are 431 with the error body; a malformed request 400 with one', async () => {
    const big = splitResponse(await rawTls(httpsUrl, caPem, `GET /v1/sys/health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ errors: ['request header fields too large'] });
    expect(big.headers['x-listener']).toBe('tls');
    const bad = splitResponse(await rawTls(httpsUrl, caPem, 'GET /v1/sys/health HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n'));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ errors: ['malformed HTTP request'] });
  });
});

describe('listener configuration', () => {
  let dir: string;
  let ca: TestCa;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'secrets-listener-config-'));
    ca = makeTestCa(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = envSchema.parse({});

  it('TLS without a certificate fails at start, naming the keys', async () => {
    const config = join(dir, 'no-cert.hcl');
    writeFileSync(config, 'listener "tcp" {\n  address = "127.0.0.1:0"\n}\n');
    const r = await startFailing({ SECRETS_CONFIG: config, DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/none' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${config}: listener.tcp.0.tls_cert_file: required: TLS is enabled on this listener (set tls_disable = true to serve plain HTTP)`);
    expect(r.stderr).toContain(`${config}: listener.tcp.0.tls_key_file: required`);
  });

  it('names unreadable files, a key that does not match, bad versions and bad booleans', async () => {
    const problems = async (block: string): Promise<string> => {
      try {
        await parseServerConfigText(`listener "tcp" {\n${block}\n}\n`, 't.hcl', env);
        return '';
      } catch (err) {
        return (err as Error & { problems?: { where: string; message: string }[] }).problems?.map((p) => `${p.where}: ${p.message}`).join('\n') ?? String(err);
      }
    };
    expect(await problems(`tls_cert_file = "${dir}/nope.crt"\ntls_key_file = "${ca.serverKey}"`)).toBe(`t.hcl: listener.tcp.0.tls_cert_file: cannot read ${dir}/nope.crt: file not found`);
    expect(await problems(`tls_cert_file = "${ca.serverCert}"\ntls_key_file = "${ca.strangerKey}"`)).toMatch(/^t\.hcl: listener\.tcp\.0\.tls_cert_file: the certificate and key cannot be used: /);
    expect(await problems(`tls_cert_file = "${ca.serverCert}"\ntls_key_file = "${ca.serverKey}"\ntls_min_version = "tls14"`)).toBe(
      't.hcl: listener.tcp.0.tls_min_version: invalid value "tls14": one of tls10, tls11, tls12, tls13',
    );
    expect(await problems('tls_disable = "maybe"')).toBe('t.hcl: listener.tcp.0.tls_disable: invalid boolean "maybe"');
    expect(await problems('tls_disable = "true"')).toBe('');
    expect(await problems('tls_disable = 1')).toBe('');
  });

  it('tls_min_version is enforced by the listener', async () => {
    const config = await parseServerConfigText(
      `listener "tcp" {\n  tls_cert_file = "${ca.serverCert}"\n  tls_key_file = "${ca.serverKey}"\n  tls_min_version = "tls13"\n}\n`,
      't.hcl',
      env,
    );
    const t = config.listeners[0]?.tls;
    expect(t?.minVersion).toBe('TLSv1.3');
    const app = express();
    app.get('/', (_req, res) => void res.send('ok'));
    const l = await createListener(app, { port: 0, host: '127.0.0.1', tls: { cert: t?.cert, key: t?.key, minVersion: t?.minVersion, maxVersion: t?.maxVersion } });
    const caPem = readFileSync(ca.caCert);
    const handshake = (maxVersion: tls.SecureVersion) =>
      new Promise<string>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port: l.port, ca: caPem, servername: 'localhost', maxVersion }, () => {
          resolve(s.getProtocol() ?? '');
          s.end();
        });
        s.on('error', (err) => resolve(`error: ${err.message}`));
      });
    expect(await handshake('TLSv1.3')).toBe('TLSv1.3');
    expect(await handshake('TLSv1.2')).toMatch(/^error: .*(protocol version|alert)/i);
    await l.close();
  });
});
