// bench/wrk.ts drives the real wrk (Debian's package, installed by
// scripts/ensure-test-env.sh) against a local server: what it sends and what it reports.
import http from 'node:http';
import { measureHttp } from './measure';
import { parseWrkOutput, runWrk, wrkScript } from './wrk';

interface Seen {
  method: string;
  url: string;
  token: string | undefined;
  body: string;
}

async function withServer(status: (url: string) => number, fn: (url: string, seen: Seen[]) => Promise<void>): Promise<void> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', token: req.headers['x-vault-token'] as string | undefined, body: Buffer.concat(chunks).toString() });
      res.statusCode = status(req.url ?? '');
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as { port: number }).port}`, seen);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('wrk', () => {
  it('sends each spec with its method, headers and body, a random key per send, and reports the figures', async () => {
    await withServer(
      () => 200,
      async (url, seen) => {
        const figures = await runWrk({
          url,
          connections: 4,
          durationMs: 1000,
          requests: [
            { method: 'GET', path: '/v1/secret/data/read-{key}/x{key}', keys: 3, headers: { 'X-Vault-Token': 'hvs.t"\\ok' } },
            { method: 'POST', path: '/fixed', headers: { 'Content-Type': 'application/json' }, body: '{"data":{"a":"é","n":"42"}}' },
          ],
        });
        expect(figures.errors).toEqual({ connect: 0, read: 0, write: 0, status: 0, timeout: 0 });
        expect(figures.requests).toBeGreaterThan(100);
        // wrk stops counting at the deadline; the server may see a few more (in flight).
        expect(seen.length).toBeGreaterThanOrEqual(figures.requests);
        expect(figures.durationUs).toBeGreaterThan(900_000);
        expect(figures.p50Us).toBeGreaterThan(0);
        expect(figures.p99Us).toBeGreaterThanOrEqual(figures.p50Us);
        const gets = seen.filter((s) => s.method === 'GET');
        const posts = seen.filter((s) => s.method === 'POST');
        // The list is cycled through: as many of each, give or take the last round.
        expect(Math.abs(gets.length - posts.length)).toBeLessThanOrEqual(4);
        const keys = new Map<string, number>();
        for (const g of gets) {
          const m = /^\/v1\/secret\/data\/read-(\d)\/x(\d)$/.exec(g.url);
          expect(m).not.toBeNull();
          expect(m![1]).toBe(m![2]);
          keys.set(m![1]!, (keys.get(m![1]!) ?? 0) + 1);
          expect(g.token).toBe('hvs.t"\\ok');
        }
        expect([...keys.keys()].sort()).toEqual(['0', '1', '2']);
        for (const n of keys.values()) expect(n).toBeGreaterThan(gets.length / 6);
        for (const p of posts) expect([p.url, p.body]).toEqual(['/fixed', '{"data":{"a":"é","n":"42"}}']);
      },
    );
  }, 20_000);

  it('counts non-2xx answers as failures, and the server process CPU per request', async () => {
    await withServer(
      (u) => (u === '/bad' ? 500 : 200),
      async (url) => {
        const figures = await measureHttp(
          { kind: 'http', url, requests: [{ path: '/good' }, { path: '/bad' }] },
          { durationMs: 1000, connections: 2, client: 'wrk' },
        );
        expect(figures.total).toBeGreaterThan(0);
        expect(Math.abs(figures.failures - figures.total / 2)).toBeLessThanOrEqual(2);
        expect(figures.reqPerSec).toBeGreaterThan(0);
        // The server is this process: some CPU per request, and not absurdly much.
        expect(figures.cpuUsPerRequest).toBeGreaterThan(0);
        expect(figures.cpuUsPerRequest).toBeLessThan(100_000);
      },
    );
  }, 20_000);

  it('parses the figures line among wrk output, and says when there is none', () => {
    const script = wrkScript(undefined);
    expect(script).toContain('function done(summary, latency, requests)');
    expect(script).not.toContain('function request()');
    const out = 'Running 1s test @ http://x\nWRK_FIGURES {"requests":5,"durationUs":1000000,"p50Us":10,"p99Us":20,"errors":{"connect":0,"read":0,"write":0,"status":1,"timeout":0}}\n';
    expect(parseWrkOutput(out)).toEqual({ requests: 5, durationUs: 1_000_000, p50Us: 10, p99Us: 20, errors: { connect: 0, read: 0, write: 0, status: 1, timeout: 0 } });
    expect(() => parseWrkOutput('unable to connect')).toThrow('wrk printed no figures');
  });
});
