// runAccessMatrix against a small real server: what it reports and in which order it
// sends serial cells (the per-service matrices rely on both).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runAccessMatrix, type AccessMatrix } from './access-matrix';
import type { SweepRoute } from './hostile-sweep';

const route = (method: string, pattern: string): SweepRoute => ({ method, pattern, label: '/', params: [], dataFields: [], stream: false, streamsResponse: false, unauthenticated: false });

let server: http.Server;
let base = '';
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['x-token'] ?? '-'}`);
    const admin = req.headers['x-token'] === 'admin';
    if (req.url === '/open') return void res.writeHead(200).end('ok');
    if (req.url === '/leaky') return void res.writeHead(200).end('leaked');
    if (req.url === '/plain-denial') return void res.writeHead(403, { 'Content-Type': 'text/plain' }).end('no');
    if (!admin) return void res.writeHead(403, { 'Content-Type': 'application/json' }).end('{"errors":["denied"]}');
    res.writeHead(req.method === 'DELETE' ? 204 : 200).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const CALLERS = ['anon', 'admin'] as const;
type Caller = (typeof CALLERS)[number];
const jsonErrors = (res: { headers: http.IncomingHttpHeaders }) => (String(res.headers['content-type']).startsWith('application/json') ? undefined : 'not JSON');

describe('runAccessMatrix', () => {
  it('passes when every cell answers as its row says', async () => {
    const matrix: AccessMatrix<Caller> = {
      routes: [route('GET', '/open'), route('DELETE', '/thing/:id')],
      callers: CALLERS,
      params: { id: '7' },
      rows: [
        { route: 'GET /open', expect: { other: 200 } },
        { route: 'DELETE /thing/:id', expect: { admin: 204, anon: 403 } },
      ],
    };
    const result = await runAccessMatrix(matrix, { baseUrl: base, auth: (c) => ({ 'X-Token': c }), denialShape: jsonErrors });
    expect(result).toEqual({ cells: 4, failures: [], statuses: { '200': 2, '204': 1, '403': 1 } });
  });

  it('reports a wrong status and a denial outside the error shape, with the row note', async () => {
    const matrix: AccessMatrix<Caller> = {
      routes: [route('GET', '/leaky'), route('GET', '/plain-denial')],
      callers: CALLERS,
      rows: [
        { route: 'GET /leaky', expect: { admin: 200, anon: 403 }, note: 'admins only' },
        { route: 'GET /plain-denial', expect: { other: 403 } },
      ],
    };
    const result = await runAccessMatrix(matrix, { baseUrl: base, auth: (c) => ({ 'X-Token': c }), denialShape: jsonErrors });
    expect(result.failures).toEqual([
      'GET /leaky as anon (/leaky): expected 403, got 200 [admins only]: "leaked"',
      'GET /plain-denial as admin (/plain-denial): 403 not in the error shape: not JSON: "no"',
      'GET /plain-denial as anon (/plain-denial): 403 not in the error shape: not JSON: "no"',
    ]);
  });

  it('applies setup overrides and sends serial cells last, one at a time, each followed by heal', async () => {
    seen.length = 0;
    const order: string[] = [];
    const matrix: AccessMatrix<Caller> = {
      routes: [route('GET', '/open'), route('DELETE', '/thing/:id')],
      callers: CALLERS,
      rows: [
        { route: 'DELETE /thing/:id', serial: true, path: ({ caller }) => `/thing/${caller}`, expect: { admin: 204, anon: 403 } },
        { route: 'GET /open', setup: async ({ caller }) => ({ headers: { 'X-Token': `fresh-${caller}` } }), expect: { other: 200 } },
      ],
    };
    const result = await runAccessMatrix(matrix, {
      baseUrl: base,
      auth: (c) => ({ 'X-Token': c }),
      denialShape: jsonErrors,
      concurrency: 1,
      heal: async () => void order.push(`heal after ${seen[seen.length - 1]}`),
    });
    expect(result.failures).toEqual([]);
    expect(seen).toEqual(['GET /open fresh-anon', 'GET /open fresh-admin', 'DELETE /thing/anon anon', 'DELETE /thing/admin admin']);
    expect(order).toEqual(['heal after DELETE /thing/anon anon', 'heal after DELETE /thing/admin admin']);
  });
});
