// Two scheduler replicas over one database (issue 25 items 1 and 7): two real main.ts
// processes, each with its own engine, share the evaluations of many jobs registered and
// re-registered through both at once. Every allocation is placed exactly once: each job
// ends with its count of allocations under distinct names, no node holds more than its
// capacity, every evaluation is settled, and both replicas did part of the work.
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { createTestDatabase, freePortBelowEphemeral, testRedisUrl, waitFor, type TestDatabase } from '@selfstack/testing';

const MAIN = path.resolve(__dirname, '../src/main.ts');

interface Replica {
  url: string;
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

async function startReplica(db: TestDatabase): Promise<Replica> {
  const port = await freePortBelowEphemeral();
  let out = '';
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: testRedisUrl(), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'debug', SCHEDULER_ENGINE_WORKERS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor('replica listening', async () => ((await request(url).get('/v1/status/leader').catch(() => null))?.status === 200 ? true : undefined), 30_000, 100, () => out);
  return { url, child, out: () => out, exited };
}

describe('two scheduler replicas sharing one database', () => {
  jest.setTimeout(180_000);
  let db: TestDatabase;
  let a: Replica;
  let b: Replica;

  beforeAll(async () => {
    db = await createTestDatabase();
    [a, b] = await Promise.all([startReplica(db), startReplica(db)]);
  });

  afterAll(async () => {
    for (const r of [a, b]) r?.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
    await db.drop();
  });

  it('places every allocation exactly once', async () => {
    const NODES = 8;
    const JOBS = 24;
    const COUNT = 8;
    for (let i = 0; i < NODES; i++) {
      const res = await request(i % 2 === 0 ? a.url : b.url)
        .put('/v1/internal/node/register')
        .send({
          Node: {
            ID: randomUUID(),
            SecretID: randomUUID(),
            Name: `n${i}`,
            Datacenter: 'dc1',
            Status: 'ready',
            NodeResources: { Cpu: { CpuShares: 3000 }, Memory: { MemoryMB: 8192 }, Disk: { DiskMB: 100_000 } },
            Drivers: { docker: { Detected: true, Healthy: true } },
          },
        });
      expect(res.status).toBe(200);
    }
    const job = (i: number, image: string) => ({
      Job: { ID: `job-${i}`, TaskGroups: [{ Name: 'g', Count: COUNT, Tasks: [{ Name: 't', Driver: 'docker', Config: { image }, Resources: { CPU: 100, MemoryMB: 64 } }] }] },
    });
    // Every job registered through one replica and re-registered (a new version) through
    // the other, all at once: several evaluations per job, racing over both engines.
    const writes: Array<Promise<request.Response>> = [];
    for (let i = 0; i < JOBS; i++) {
      writes.push(request(i % 2 === 0 ? a.url : b.url).put('/v1/jobs').send(job(i, 'v1')));
      writes.push(request(i % 2 === 0 ? b.url : a.url).put('/v1/jobs').send(job(i, 'v2')));
    }
    for (const r of await Promise.all(writes)) expect(r.status).toBe(200);

    await waitFor(
      'every evaluation settled',
      async () => {
        const open = await request(a.url).get('/v1/evaluations?filter=' + encodeURIComponent('Status == "pending" or Status == "blocked"'));
        return open.status === 200 && (open.body as unknown[]).length === 0 ? true : undefined;
      },
      120_000,
      250,
      () => a.out().slice(-2000) + b.out().slice(-2000),
    );

    const allocs = (await request(a.url).get('/v1/allocations')).body as Array<Record<string, unknown>>;
    const live = allocs.filter((x) => x['DesiredStatus'] === 'run');
    expect(live).toHaveLength(JOBS * COUNT);
    for (let i = 0; i < JOBS; i++) {
      const mine = live.filter((x) => x['JobID'] === `job-${i}`);
      expect(mine.map((x) => x['Name']).sort()).toEqual(Array.from({ length: COUNT }, (_, k) => `job-${i}.g[${k}]`).sort());
      // Every live allocation runs the job's newest version.
      expect(new Set(mine.map((x) => x['JobVersion']))).toEqual(new Set([1]));
    }
    // No node over its capacity (3000 MHz = 30 allocations of 100).
    const perNode = new Map<string, number>();
    for (const x of live) perNode.set(String(x['NodeID']), (perNode.get(String(x['NodeID'])) ?? 0) + 1);
    for (const n of perNode.values()) expect(n).toBeLessThanOrEqual(30);
    // Every evaluation ended complete or cancelled (superseded), none failed.
    const evals = (await request(b.url).get('/v1/evaluations')).body as Array<Record<string, unknown>>;
    expect(evals.filter((e) => e['Status'] === 'failed')).toEqual([]);
    // Both engines took part.
    const processedA = (a.out().match(/"message":"evaluation processed"/g) ?? []).length;
    const processedB = (b.out().match(/"message":"evaluation processed"/g) ?? []).length;
    expect(processedA).toBeGreaterThan(0);
    expect(processedB).toBeGreaterThan(0);
    // No evaluation was processed by both.
    const ids = (text: string) => new Set([...text.matchAll(/"evalId":"([0-9a-f-]+)"[^\n]*"message":"evaluation processed"/g)].map((m) => m[1]));
    expect(ids(a.out()).size).toBe(processedA);
    expect(ids(b.out()).size).toBe(processedB);
    const both = [...ids(a.out())].filter((id) => ids(b.out()).has(id));
    expect(both).toEqual([]);
  });
});
