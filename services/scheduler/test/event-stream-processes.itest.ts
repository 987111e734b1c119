// Issue 27, item 6: two real scheduler processes (main.ts) sharing one Postgres database
// and a Redis of this test's own (so it can be killed and restarted without disturbing
// anything else): a subscriber on either process sees every event of both exactly once
// in index order, also across a Redis restart mid-stream (Postgres is the truth), and a
// client resumes on the other process by index with no gap and no repeat.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase, freePortBelowEphemeral, waitFor, type TestDatabase } from '@selfstack/testing';
import { openStream, type StreamClient } from './event-stream-client';

const MAIN = path.resolve(__dirname, '../src/main.ts');
jest.setTimeout(120_000);

function startRedis(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

async function redisUp(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createConnection({ host: '127.0.0.1', port }, () => {
      s.write('PING\r\n');
    });
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    s.once('error', () => resolve(false));
  });
}

async function put(port: number, p: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${p}`, { method: 'PUT', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const job = (id: string) => ({ Job: { ID: id, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } });

describe('event stream across two scheduler processes and a Redis restart', () => {
  let db: TestDatabase;
  let redisPort = 0;
  let redis: ChildProcess | undefined;
  const servers: { port: number; child: ChildProcess; out: string }[] = [];
  const streams: StreamClient[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    redisPort = await freePortBelowEphemeral();
    redis = startRedis(redisPort);
    await waitFor('private redis', async () => ((await redisUp(redisPort)) ? true : undefined), 10_000, 50);
    for (let i = 0; i < 2; i++) {
      const port = await freePortBelowEphemeral();
      const server = { port, out: '', child: undefined as unknown as ChildProcess };
      server.child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          SCHEDULER_EVENT_HEARTBEAT: '500ms',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      server.child.stdout?.on('data', (d: Buffer) => (server.out += d.toString()));
      server.child.stderr?.on('data', (d: Buffer) => (server.out += d.toString()));
      servers.push(server);
    }
    for (const s of servers) {
      await waitFor(`scheduler on ${s.port}`, async () => ((await fetch(`http://127.0.0.1:${s.port}/readyz`).then((r) => r.ok, () => false)) ? true : undefined), 60_000, 100, () => s.out);
    }
  });

  afterAll(async () => {
    for (const c of streams) c.close();
    for (const s of servers) s.child.kill('SIGKILL');
    redis?.kill('SIGKILL');
    await db.drop();
  });

  const jobKeys = (c: StreamClient) => c.events().filter((e) => e.Topic === 'Job').map((e) => e.Key);
  const strictlyIncreasing = (c: StreamClient) => {
    const idx = c.frames().map((f) => f.Index as number);
    return idx.every((v, i) => i === 0 || v > (idx[i - 1] as number));
  };

  it('every subscriber sees every write of both processes once, in order, across a Redis restart', async () => {
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const onA = await openStream(`http://127.0.0.1:${a.port}`, '/v1/event/stream');
    const onB = await openStream(`http://127.0.0.1:${b.port}`, '/v1/event/stream?topic=Job');
    streams.push(onA, onB);
    expect(onA.status).toBe(200);
    expect(onB.status).toBe(200);

    const ids = Array.from({ length: 10 }, (_, i) => `pj-${i}`);
    for (const [i, id] of ids.entries()) expect((await put(i % 2 === 0 ? a.port : b.port, '/v1/jobs', job(id))).status).toBe(200);
    for (const c of [onA, onB]) await c.waitFor('ten jobs', (x) => jobKeys(x).length === 10 || undefined);
    expect(jobKeys(onA)).toEqual(ids);
    expect(jobKeys(onB)).toEqual(ids);

    // Redis goes away: writes still succeed (Postgres is the truth) ...
    redis?.kill('SIGKILL');
    await waitFor('redis down', async () => ((await redisUp(redisPort)) ? undefined : true), 10_000, 50);
    const later = Array.from({ length: 5 }, (_, i) => `pj-late-${i}`);
    for (const id of later) expect((await put(b.port, '/v1/jobs', job(id))).status).toBe(200);
    // ... and comes back: the subscriber on the other process catches up from Postgres.
    redis = startRedis(redisPort);
    await waitFor('redis up again', async () => ((await redisUp(redisPort)) ? true : undefined), 10_000, 50);
    await onA.waitFor('the writes made while Redis was down', (x) => jobKeys(x).length === 15 || undefined, 30_000);
    await onB.waitFor('the same on the writing process', (x) => jobKeys(x).length === 15 || undefined, 30_000);
    expect(jobKeys(onA)).toEqual([...ids, ...later]);
    expect(jobKeys(onB)).toEqual([...ids, ...later]);
    expect(strictlyIncreasing(onA)).toBe(true);
    expect(strictlyIncreasing(onB)).toBe(true);
    // Each frame an index of its own, no index twice.
    expect(new Set(onA.frames().map((f) => f.Index)).size).toBe(onA.frames().length);

    // Resume on the other process from where B's subscriber stopped.
    const last = onB.frames().at(-1)?.Index as number;
    onB.close();
    expect((await put(a.port, '/v1/jobs', job('pj-after'))).status).toBe(200);
    const resumed = await openStream(`http://127.0.0.1:${a.port}`, `/v1/event/stream?topic=Job&index=${last + 1}`);
    streams.push(resumed);
    await resumed.waitFor('the job after', (x) => jobKeys(x).includes('pj-after') || undefined);
    expect(jobKeys(resumed)).toEqual(['pj-after']);
  });
});
