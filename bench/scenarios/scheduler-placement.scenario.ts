// Scheduling throughput (issue 25 item 7): the scheduler as deployed (its main.ts in a
// child process: API, engine with its default worker slots, Redis bus), 100 ready nodes;
// one op = a round placing 10,000 allocations (100 service jobs of count 100, registered
// 8 at a time through the API) until every evaluation completed, then the state is reset.
// Reported per round (teardown log): placements per second from the first register to the
// last allocation committed, and the evaluation latency (CreateTime to the ModifyTime of
// its completion, server clock) p50/p99. Not a timed test: figures, not assertions.
//
// Also per round: CPU time of the server process and of the PostgreSQL backends serving it
// (/proc, Linux only), per placement.
//
//   SCHEDULER_BENCH_NODES=100  SCHEDULER_BENCH_JOBS=100  SCHEDULER_BENCH_COUNT=100
//   SCHEDULER_BENCH_ENGINE_WORKERS (default: the server's default)
//   SCHEDULER_BENCH_SERVER_PROFILE=dir: the server runs with --cpu-prof into dir (written
//     when it exits at teardown; `npx tsx bench/profile-summary.ts dir 50` sums it up)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePortBelowEphemeral } from '@selfstack/testing';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';
import { percentile } from '../measure';
import { cpuNow, cpuSince, postgresBackends } from '../proc-cpu';
import type { Scenario, ScenarioContext, ScenarioInstance } from '../scenario';

function send(port: number, method: string, path: string, body: unknown, agent: http.Agent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? '' : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

interface Round {
  placements: number;
  seconds: number;
  evalP50: number;
  evalP99: number;
  evals: number;
}

async function setup(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const redisUrl = process.env['REDIS_URL'];
  if (!redisUrl) throw new Error('scheduler-placement needs REDIS_URL (make bench sets it)');
  const nodes = sizeFromEnv('SCHEDULER_BENCH_NODES', 100);
  const jobs = sizeFromEnv('SCHEDULER_BENCH_JOBS', 100);
  const count = sizeFromEnv('SCHEDULER_BENCH_COUNT', 100);
  const db = await createBenchDatabase(ctx.databaseUrl, 'placement');
  const port = await freePortBelowEphemeral();
  const root = join(__dirname, '..', '..');
  const engineWorkers = process.env['SCHEDULER_BENCH_ENGINE_WORKERS'];
  const profileDir = process.env['SCHEDULER_BENCH_SERVER_PROFILE'];
  const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--inspect') && !a.startsWith('--cpu-prof')), ...profileArgs, join(root, 'services/scheduler/src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      ...(engineWorkers ? { SCHEDULER_ENGINE_WORKERS: engineWorkers } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const pg = new Client({ connectionString: db.url });
  const rounds: Round[] = [];
  try {
    const upBy = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`scheduler exited with ${child.exitCode} while starting`);
      if (Date.now() > upBy) throw new Error('scheduler did not answer within 60 s');
      const ok = await send(port, 'GET', '/v1/status/leader', undefined, agent).then((r) => r.status === 200, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await pg.connect();
    for (let i = 0; i < nodes; i++) {
      const r = await send(port, 'PUT', '/v1/internal/node/register', {
        Node: {
          ID: randomUUID(),
          SecretID: randomUUID(),
          Name: `bench-${i}`,
          Datacenter: `dc${i % 4}`,
          Status: 'ready',
          Attributes: { 'kernel.name': 'linux' },
          NodeResources: { Cpu: { CpuShares: 40_000 }, Memory: { MemoryMB: 65_536 }, Disk: { DiskMB: 1_000_000 } },
          Drivers: { docker: { Detected: true, Healthy: true } },
        },
      }, agent);
      if (r.status !== 200) throw new Error(`node register answered ${r.status}: ${r.text}`);
    }
    ctx.log(`scheduler-placement: main.ts on port ${port}, ${nodes} nodes, rounds of ${jobs} jobs x ${count} (database ${db.name})`);
  } catch (err) {
    child.kill('SIGKILL');
    await pg.end().catch(() => undefined);
    await db.drop();
    throw err;
  }

  let round = 0;
  async function run(): Promise<void> {
    round++;
    // The server's PostgreSQL backends (not this client's), for their CPU time.
    const backends = () => postgresBackends((q) => pg.query<{ pid: number }>(q));
    const pgCpu0 = cpuNow(await backends());
    const serverCpu0 = cpuNow([child.pid as number]);
    const started = performance.now();
    const queue = Array.from({ length: jobs }, (_, i) => i);
    const spec = (i: number) => ({
      Job: {
        ID: `bench-${round}-${i}`,
        Datacenters: ['dc*'],
        Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
        TaskGroups: [{ Name: 'web', Count: count, EphemeralDisk: { SizeMB: 10 }, Tasks: [{ Name: 'app', Driver: 'docker', Config: { image: 'app:1' }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
      },
    });
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const r = await send(port, 'PUT', '/v1/jobs', spec(i), agent);
          if (r.status !== 200) throw new Error(`register answered ${r.status}: ${r.text}`);
        }
      }),
    );
    const registered = (performance.now() - started) / 1000;
    const want = jobs * count;
    for (;;) {
      const { rows } = await pg.query<{ placed: number; open: number }>(
        `SELECT (SELECT COUNT(*)::int FROM scheduler.allocations) AS placed,
                (SELECT COUNT(*)::int FROM scheduler.evaluations WHERE status IN ('pending', 'blocked')) AS open`,
      );
      const r = rows[0] as { placed: number; open: number };
      if (r.open === 0 && r.placed >= want) break;
      if (performance.now() - started > 600_000) throw new Error(`round ${round}: ${r.placed}/${want} placed after 10 min`);
      await new Promise((res) => setTimeout(res, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const serverCpu = cpuSince(serverCpu0, []);
    const pgCpu = cpuSince(pgCpu0, await backends());
    const { rows: evals } = await pg.query<{ ms: number }>(
      `SELECT (((data->>'ModifyTime')::bigint - (data->>'CreateTime')::bigint) / 1e6)::float8 AS ms FROM scheduler.evaluations WHERE status = 'complete'`,
    );
    const lat = evals.map((e) => e.ms).sort((a, b) => a - b);
    const placed = (await pg.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM scheduler.allocations`)).rows[0]?.n ?? 0;
    rounds.push({ placements: placed, seconds, evalP50: percentile(lat, 50), evalP99: percentile(lat, 99), evals: lat.length });
    ctx.log(`scheduler-placement round ${round}: the ${jobs} registers took ${registered.toFixed(2)} s of it`);
    ctx.log(
      `scheduler-placement round ${round}: CPU server ${serverCpu} ms (${((serverCpu * 1000) / Math.max(1, placed)).toFixed(0)} µs per placement), ` +
        `PostgreSQL backends ${pgCpu} ms (${((pgCpu * 1000) / Math.max(1, placed)).toFixed(0)} µs per placement); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
    ctx.log(
      `scheduler-placement round ${round}: ${placed} placements in ${seconds.toFixed(2)} s = ${(placed / seconds).toFixed(0)} placements/s; ` +
        `evaluation latency p50 ${percentile(lat, 50).toFixed(1)} ms, p99 ${percentile(lat, 99).toFixed(1)} ms over ${lat.length} evaluations`,
    );
    // Reset for the next round: the rows the round wrote (nodes stay).
    await pg.query(`DELETE FROM scheduler.allocations; DELETE FROM scheduler.evaluations; DELETE FROM scheduler.jobs; DELETE FROM scheduler.job_versions; DELETE FROM scheduler.deployments`);
  }

  return {
    target: { kind: 'function', run, concurrency: 1 },
    async teardown() {
      if (rounds.length > 0) {
        const rates = rounds.map((r) => r.placements / r.seconds).sort((a, b) => a - b);
        const p99s = rounds.map((r) => r.evalP99).sort((a, b) => a - b);
        ctx.log(
          `scheduler-placement: ${rounds.length} round(s); placements/s min ${rates[0]?.toFixed(0)} median ${percentile(rates, 50).toFixed(0)} max ${rates[rates.length - 1]?.toFixed(0)}; ` +
            `evaluation p99 median ${percentile(p99s, 50).toFixed(1)} ms (target >= 1,500 placements/s)`,
        );
      }
      agent.destroy();
      await pg.end().catch(() => undefined);
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      await db.drop();
    },
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'scheduler-placement',
    description: 'place 10,000 allocations (100 jobs x 100) over 100 nodes through the API with the scheduler in its own process; op = one round until every evaluation completed',
    baseline: 'pg-point-read',
    setup,
  },
];
