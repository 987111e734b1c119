// The scheduler as deployed with SCHEDULER_WORKERS=2: its real main.ts in a child process
// (a node:cluster primary and two workers on one port, Redis between them, a test
// database). Blocking queries held by either worker wake on a write that lands on either
// one; /metrics tells the workers apart; SIGTERM stops all of them with exit 0.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createTestDatabase, freePortBelowEphemeral, testRedisUrl, waitFor, type TestDatabase } from '@selfstack/testing';

const MAIN = path.resolve(__dirname, '../src/main.ts');

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function call(port: number, method: string, p: string, body?: unknown, agent: http.Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port, path: p, method, agent, timeout: 30_000, headers: data ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', reject);
    req.end(data);
  });
}

/** Blocking-query gauges of the workers reached by `polls` new connections. */
async function waiters(port: number, polls = 6): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < polls; i++) {
    const m = await call(port, 'GET', '/metrics');
    for (const [, w, v] of m.body.matchAll(/^scheduler_blocking_queries\{worker="(\d+)"\} (\d+)$/gm)) out.set(w as string, Number(v));
  }
  return out;
}

const job = (id: string) => ({ Job: { ID: id, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } });

describe('scheduler with SCHEDULER_WORKERS=2', () => {
  jest.setTimeout(90_000);
  let db: TestDatabase;
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let port: number;
  let out = '';
  const output = () => out;

  beforeAll(async () => {
    db = await createTestDatabase();
    port = await freePortBelowEphemeral();
    // No engine: its evaluation of the registered job would be a second write the woken
    // readers may already see (the answer's index is the write's only without it).
    child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: testRedisUrl(), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', SCHEDULER_WORKERS: '2', SCHEDULER_ENGINE_WORKERS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor('both workers', async () => ((await waiters(port)).size === 2 ? true : undefined), 75_000, 100, output);
  });

  afterAll(async () => {
    child.kill('SIGKILL');
    await db.drop();
  });

  it('wakes the blocking queries of both workers on one write, with the write\'s index', async () => {
    const before = await call(port, 'GET', '/v1/jobs');
    expect(before.status).toBe(200);
    const index = Number(before.headers['x-scheduler-index']);
    // Keep-alive connections are handed to the workers in turn: 12 land on both.
    const agents = Array.from({ length: 12 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const blocked = agents.map((a) => call(port, 'GET', `/v1/jobs?index=${index}&wait=60s`, undefined, a));
    const held = await waitFor(
      'every blocked client registered',
      async () => {
        const w = await waiters(port);
        const sum = [...w.values()].reduce((a, b) => a + b, 0);
        return w.size === 2 && sum === 12 ? w : undefined;
      },
      30_000,
      100,
      output,
    );
    expect([...held.values()].every((n) => n > 0)).toBe(true);

    const write = await call(port, 'PUT', '/v1/jobs', job('cross-worker'));
    expect(write.status).toBe(200);
    const written = Number(write.headers['x-scheduler-index']);
    expect(written).toBeGreaterThan(index);
    const answers = await Promise.all(blocked);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(Number(a.headers['x-scheduler-index'])).toBe(written);
      expect(Number(a.headers['x-nomad-index'])).toBe(written);
      expect((JSON.parse(a.body) as Array<{ ID: string }>).map((j) => j.ID)).toContain('cross-worker');
    }
    for (const a of agents) a.destroy();
  });

  it('stops every worker gracefully on SIGTERM to the primary (exit 0)', async () => {
    child.kill('SIGTERM');
    await expect(exited).resolves.toBe(0);
    expect(out.match(/"message":"shutdown complete"/g)).toHaveLength(2);
    expect(out).toContain('"message":"worker stopped"');
  });
});
