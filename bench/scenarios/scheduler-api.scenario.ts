// Issue 4, item 8: the workload scheduler through the whole service (buildApp, the
// production listener, Prisma over PostgreSQL, the Redis bus when REDIS_URL is set):
//
// - scheduler-jobs-filter: GET /v1/jobs with a go-bexpr filter over 10,000 jobs (the
//   filter runs on every full job, as Nomad does), reported against the Postgres point read.
// - scheduler-blocking-wakeup: 1,000 clients blocked on GET /v1/jobs?index=N; one op is
//   "arm 1,000 clients, register a job, then every blocked client has its answer" (the
//   op's latency includes arming; it is not the wake-up figure). The wake-up figures are
//   per client, write response to that client's response, both taken in the clients'
//   thread with one monotonic clock: p50/p99/max are logged at teardown, next to the same
//   run's bare node:http floor (same clients, same response bytes, no scheduler) and the
//   ratio between the two. Each op runs one scheduler round and one floor round. The
//   same rounds are also logged as the servers saw them (the write's response and each
//   woken response handed to the kernel, on the server's clock): the client figures add
//   one client thread reading 1,000 responses that arrive at once.
//
// - scheduler-blocking-wakeup-workers: the same rounds against the scheduler as deployed
//   with SCHEDULER_WORKERS (its main.ts in a child process, one worker per CPU, at least 2;
//   armed when the workers' scheduler_blocking_queries gauges add up to the clients).
//
// SCHEDULER_BENCH_JOBS / SCHEDULER_BENCH_WAITERS shrink it for a quick look;
// SCHEDULER_BENCH_WARMUP (default 2, and 2 per worker process for the workers variant)
// sets the unrecorded warm-up rounds.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { createPrismaClient, type Prisma } from '@selfstack/db';
import { createListener } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { buildApp } from '../../services/scheduler/src/app';
import { openSchedulerDb, type SchedulerDb } from '../../services/scheduler/src/clients';
import { composeScheduler } from '../../services/scheduler/src/compose';
import { idleGcOptions, loadSchedulerEnv } from '../../services/scheduler/src/config';
import { canonicalizeJob, summaryFor } from '../../services/scheduler/src/features/jobs/job-spec';
import { percentile } from '../measure';
import type { Scenario, ScenarioContext, ScenarioInstance } from '../scenario';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';
import { sampleResponse, type SampledResponse } from '../baselines';
import { freePortBelowEphemeral } from '@selfstack/testing';




const TIERS = ['gold', 'silver', 'bronze', 'iron'];
const DRIVERS = ['docker', 'exec', 'raw_exec', 'java'];

async function seedJobs(prisma: ReturnType<typeof createPrismaClient>, count: number): Promise<void> {
  const index = 2;
  for (let start = 0; start < count; start += 1000) {
    const rows: Prisma.SchedulerJobCreateManyInput[] = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const job = canonicalizeJob(
        {
          ID: `job-${String(i).padStart(5, '0')}`,
          Priority: 10 + (i % 90),
          Datacenters: [`dc${i % 3}`],
          Meta: { tier: TIERS[i % TIERS.length] as string, team: `team-${i % 50}` },
          TaskGroups: [
            {
              Name: 'web',
              Count: 1 + (i % 5),
              Tasks: [{ Name: 'server', Driver: DRIVERS[i % DRIVERS.length], Config: { image: `app:${i % 20}` }, Env: { MODE: 'prod' } }],
            },
          ],
        },
        { namespace: 'default', region: 'global' },
      );
      const stored = { ...job, Status: 'pending', CreateIndex: index, ModifyIndex: index, JobModifyIndex: index, SubmitTime: Date.now() * 1e6 };
      rows.push({
        namespace: 'default',
        id: stored.ID,
        version: 0,
        type: stored.Type,
        status: stored.Status,
        data: stored as unknown as Prisma.InputJsonValue,
        summary: summaryFor(stored, null, index) as unknown as Prisma.InputJsonValue,
        createIndex: BigInt(index),
        modifyIndex: BigInt(index),
        jobModifyIndex: BigInt(index),
      });
    }
    await prisma.schedulerJob.createMany({ data: rows });
  }
  await prisma.$executeRawUnsafe(
    `INSERT INTO scheduler.table_index ("table", "index") VALUES ('jobs', ${index}), ('job_summary', ${index}) ON CONFLICT ("table") DO UPDATE SET "index" = EXCLUDED."index"`,
  );
  await prisma.$executeRawUnsafe(`UPDATE scheduler.state_index SET value = ${index} WHERE id = 1`);
}

interface Started {
  url: string;
  port: number;
  /** The http.Server requests are parsed by (for the server-side clock). */
  server: http.Server;
  state: SchedulerDb['state'];
  teardown(): Promise<void>;
}

async function startScheduler(ctx: ScenarioContext, jobs: number): Promise<Started> {
  const db = await createBenchDatabase(ctx.databaseUrl, 'scheduler');
  const { name, url } = db;
  const logger = createLogger({ service: 'scheduler-bench', level: 'error' });
  const redisUrl = process.env['REDIS_URL'];
  const bus: Bus = redisUrl ? createRedisBus({ url: redisUrl, prefix: `bench:${name}:`, logger }) : createMemoryBus();
  let clients: SchedulerDb | undefined;
  try {
    clients = await openSchedulerDb({ databaseUrl: url, bus, logger, prismaPoolSize: 16 });
    const { prisma, state, readPool } = clients;
    const started = Date.now();
    await seedJobs(prisma, jobs);
    ctx.log(`scheduler: seeded ${jobs} jobs in ${Date.now() - started} ms (database ${name})`);
    ctx.log(`scheduler: wake-ups through ${redisUrl ? 'Redis' : 'the in-memory bus'}`);
    const app = buildApp(
      composeScheduler(
        { prisma, state, logger, readPool },
        { region: 'global', datacenter: 'dc1', nodeName: 'bench', advertiseAddr: '127.0.0.1:4646', aclEnabled: false, nodeSecret: '', peers: {}, version: '2.0.6' },
      ),
    );
    // Blocked clients sit idle between rounds: keep their connections (no reconnects mid-round).
    // The idle collection as main.ts configures it by default (SCHEDULER_IDLE_GC_MS).
    const idleGc = idleGcOptions(loadSchedulerEnv(process.env).SCHEDULER_IDLE_GC_MS);
    const listener = await createListener(app, { port: 0, host: '127.0.0.1', keepAliveTimeoutMs: 120_000, ...(idleGc ? { idleGc } : {}) });
    const opened = clients;
    return {
      url: listener.url,
      port: listener.port,
      server: listener.server,
      state,
      async teardown() {
        await listener.close({ drainTimeoutMs: 100 });
        await opened.close();
        await bus.close();
        await db.drop();
      },
    };
  } catch (err) {
    await clients?.close();
    await bus.close();
    await db.drop();
    throw err;
  }
}

function getJson(agent: http.Agent, port: number, path: string): Promise<{ status: number; index: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, index: Number(res.headers['x-scheduler-index']) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

// The blocked clients and the writer live in a worker thread with their own event loop (as
// remote clients would), so the server's loop only pays for the server side of the 1,000
// responses, and every timestamp is taken on the client side with one clock: the write's
// response (its commit has returned) is t0, each blocked client's response is t - t0.
//
// The blocked clients are raw keep-alive sockets with a minimal HTTP/1.1 response reader
// (status line, Content-Length, X-Scheduler-Index), not node:http clients: with 1,000
// responses arriving at once, node:http's own client machinery (parser objects,
// IncomingMessage streams, events) costs the measuring thread ~0.1 ms per response, which
// would put a ~100 ms queue on the client side of every figure, the floor's included. A
// remote client pays that on its own machine, not in the server's wake-up latency.
const WAITER_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const net = require('node:net');
const writer = new http.Agent({ keepAlive: true, maxSockets: 1 });
const now = () => Number(process.hrtime.bigint()) / 1e6;
const CRLF2 = Buffer.from('\\r\\n\\r\\n');
let round = null;
// One pool of sockets per server port, reused across rounds (keep-alive, no reconnects).
const pools = new Map();
function settle() {
  if (round && round.left === 0 && round.t0 !== undefined) {
    const r = round;
    round = null;
    parentPort.postMessage({ type: 'done', times: r.times.map((t) => t - r.t0), failed: r.failed, writeStatus: r.writeStatus, writeIndex: r.writeIndex });
  }
}
// A client: one socket, one outstanding GET at a time; onResponse(status, index) per reply.
function client(port) {
  const c = { socket: null, buf: null, need: -1, status: 0, index: 0, onResponse: null, onError: null };
  const sock = net.connect({ host: '127.0.0.1', port });
  sock.setNoDelay(true);
  c.socket = sock;
  sock.on('data', (chunk) => {
    c.buf = c.buf ? Buffer.concat([c.buf, chunk]) : chunk;
    for (;;) {
      if (c.need < 0) {
        const end = c.buf.indexOf(CRLF2);
        if (end < 0) return;
        const head = c.buf.subarray(0, end).toString('latin1');
        const lines = head.split('\\r\\n');
        c.status = Number(lines[0].split(' ')[1]);
        let len = -1;
        c.index = 0;
        for (let i = 1; i < lines.length; i++) {
          const colon = lines[i].indexOf(':');
          const name = lines[i].slice(0, colon).trim().toLowerCase();
          const value = lines[i].slice(colon + 1).trim();
          if (name === 'content-length') len = Number(value);
          else if (name === 'x-scheduler-index') c.index = Number(value);
          else if (name === 'transfer-encoding') { c.onError && c.onError('unexpected transfer-encoding ' + value); return; }
        }
        if (len < 0) { c.onError && c.onError('response without Content-Length'); return; }
        c.buf = c.buf.subarray(end + 4);
        c.need = len;
      }
      if (c.buf.length < c.need) return;
      c.buf = c.buf.subarray(c.need);
      c.need = -1;
      const cb = c.onResponse;
      c.onResponse = null;
      if (cb) cb(c.status, c.index);
      if (c.buf.length === 0) { c.buf = null; return; }
    }
  });
  sock.on('error', (e) => c.onError && c.onError(String(e)));
  sock.on('close', () => c.onError && c.onError('connection closed by the server'));
  return c;
}
parentPort.on('message', (msg) => {
  if (msg.type === 'close') {
    for (const pool of pools.values()) for (const c of pool) { c.onError = null; c.socket.destroy(); }
    writer.destroy();
    process.exit(0);
  }
  if (msg.type === 'arm') {
    const r = { times: [], left: msg.count, failed: '', t0: undefined, writeStatus: 0, writeIndex: 0 };
    round = r;
    let pool = pools.get(msg.port);
    if (!pool) { pool = []; pools.set(msg.port, pool); }
    while (pool.length < msg.count) pool.push(client(msg.port));
    const request = Buffer.from('GET ' + msg.path + ' HTTP/1.1\\r\\nHost: 127.0.0.1:' + msg.port + '\\r\\nAccept: application/json\\r\\n\\r\\n');
    for (let i = 0; i < msg.count; i++) {
      const c = pool[i];
      let done = false;
      c.onResponse = (status, idx) => {
        if (done) return;
        done = true;
        const t = now();
        if (status !== 200 || !(idx > msg.armedAt)) r.failed = 'status ' + status + ' index ' + idx;
        r.times.push(t);
        r.left--;
        settle();
      };
      c.onError = (e) => {
        if (done) return;
        done = true;
        r.failed = e;
        r.times.push(0);
        r.left--;
        settle();
      };
      c.socket.write(request);
    }
    return;
  }
  if (msg.type === 'write') {
    const r = round;
    const data = JSON.stringify(msg.body);
    const req = http.request(
      { host: '127.0.0.1', port: msg.port, path: msg.path, method: 'PUT', agent: writer, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          r.t0 = now();
          r.writeStatus = res.statusCode;
          r.writeIndex = Number(res.headers['x-scheduler-index']);
          settle();
        });
      },
    );
    req.on('error', (e) => { r.failed = String(e); r.t0 = now(); settle(); });
    req.end(data);
  }
});
`;

interface RoundResult {
  type: 'done';
  times: number[];
  failed: string;
  writeStatus: number;
  writeIndex: number;
}

/**
 * The floor under the wake-up figure, measured in the same run: a bare node:http server
 * (no Express, no kit, no Postgres, no Redis) holds the same number of keep-alive GETs
 * from the same client thread and, when a PUT arrives, answers it and then every held
 * request at once with the scheduler's own response (same headers, same body bytes). What
 * remains between the two is what the scheduler adds; the floor itself is what one Node
 * event loop needs to write that many HTTP responses on this machine.
 */
type Sample = Pick<SampledResponse, 'headers' | 'body'>;

async function startBareFloor(): Promise<{ port: number; server: http.Server; held(): number; use(sample: Sample): void; close(): Promise<void> }> {
  let sample: Sample = { headers: [], body: Buffer.from('[]') };
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (req.method !== 'PUT') {
      held.push(res);
      return;
    }
    req.resume();
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
      const batch = held.splice(0);
      for (const r of batch) {
        for (const [k, v] of sample.headers) r.setHeader(k, v);
        r.setHeader('Content-Length', sample.body.length);
        r.end(sample.body);
      }
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    server,
    held: () => held.length,
    use: (next) => {
      sample = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The same round seen from the server: when the write's response and each woken response
 * were handed to the kernel, on the server thread's own clock. 'prefinish' is emitted by
 * `end()` right after the last bytes went to the socket (a small response is written
 * synchronously there); 'finish' waits for the write's completion callback, which a busy
 * loop runs only after the whole burst of responses. The client
 * figures add what one client thread needs to read 1,000 responses arriving at once
 * (remote clients would each read their own); this one does not. Recorded by a second
 * 'request' listener, so the app itself is unchanged.
 */
function serverClock(server: http.Server): { take(): number[] } {
  let written: bigint | null = null;
  const woken: bigint[] = [];
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method === 'PUT') res.once('prefinish', () => (written = process.hrtime.bigint()));
    else if (req.url?.includes('index=')) res.once('prefinish', () => woken.push(process.hrtime.bigint()));
  });
  return {
    take() {
      const t0 = written;
      const out = t0 === null ? [] : woken.map((t) => Number(t - t0) / 1e6);
      written = null;
      woken.length = 0;
      return out;
    },
  };
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms, max ${(sorted[sorted.length - 1] ?? 0).toFixed(2)} ms`;
}

/** The scheduler under a wake-up round: where it listens and how to tell it is armed. */
interface WakeTarget {
  port: number;
  /** Every blocked client is registered as a waiter. */
  armed(count: number): Promise<boolean>;
  /** Server-side clock of the round (in-process scheduler only). */
  clock?: { take(): number[] };
  teardown(): Promise<void>;
}

async function inProcessTarget(ctx: ScenarioContext): Promise<WakeTarget> {
  const s = await startScheduler(ctx, 10);
  return { port: s.port, armed: async (count) => s.state.waiterCount() >= count, clock: serverClock(s.server), teardown: () => s.teardown() };
}

/** `scheduler_blocking_queries{worker="N"} V` lines of one /metrics answer. */
function waitersByWorker(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^scheduler_blocking_queries\{worker="(\d+)"\} (\d+)$/gm)) out.set(m[1] as string, Number(m[2]));
  return out;
}

function fetchText(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // A new connection each time: the primary hands connections to the workers in turn,
    // so successive polls reach every worker.
    http
      .get({ host: '127.0.0.1', port, path, agent: false, headers: { Connection: 'close' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * The scheduler as deployed with SCHEDULER_WORKERS: its own main.ts in a child process
 * (the primary and its workers on one port, Redis between them), not in the bench
 * process. Armed when every worker's `scheduler_blocking_queries` gauge, read from
 * /metrics, adds up to the blocked clients.
 */
async function workersTarget(ctx: ScenarioContext, workers: number): Promise<WakeTarget> {
  const redisUrl = process.env['REDIS_URL'];
  if (!redisUrl) throw new Error('the workers variant needs REDIS_URL (make bench sets it)');
  const db = await createBenchDatabase(ctx.databaseUrl, 'scheduler');
  const prisma = createPrismaClient({ url: db.url, poolSize: 2 });
  let child: ChildProcess | undefined;
  try {
    await seedJobs(prisma, 10);
    await prisma.$disconnect();
    const port = await freePortBelowEphemeral();
    const root = join(__dirname, '..', '..');
    child = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--inspect') && !a.startsWith('--cpu-prof')), join(root, 'services/scheduler/src/main.ts')], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: redisUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error', SCHEDULER_WORKERS: String(workers) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const proc = child;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const upBy = Date.now() + 60_000;
    const seen = new Map<string, number>();
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`scheduler exited with ${proc.exitCode} while starting`);
      if (Date.now() > upBy) throw new Error('scheduler workers did not all answer within 60 s');
      try {
        for (const [w, v] of waitersByWorker(await fetchText(port, '/metrics'))) seen.set(w, v);
        if (seen.size >= workers) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    ctx.log(`scheduler: main.ts with SCHEDULER_WORKERS=${workers} on port ${port} (database ${db.name})`);
    return {
      port,
      async armed(count) {
        // A fresh figure from every worker (their counts only grow while clients arrive, so
        // figures read a moment apart still add up to no more than the truth).
        const fresh = new Map<string, number>();
        for (let i = 0; i < workers * 4 && fresh.size < workers; i++) {
          for (const [w, v] of waitersByWorker(await fetchText(port, '/metrics'))) fresh.set(w, v);
        }
        let sum = 0;
        for (const v of fresh.values()) sum += v;
        return fresh.size >= workers && sum >= count;
      },
      async teardown() {
        proc.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
        if (proc.exitCode === null) proc.kill('SIGKILL');
        await db.drop();
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    await prisma.$disconnect();
    await db.drop();
    throw err;
  }
}

/**
 * GC pauses of this process (where the in-process scheduler runs) from mark() on, as
 * "kind:ms" per pause: the p99 of a round follows whether a scavenge fell in its wake-up.
 */
function gcWatch(): { mark(): void; since(): string } {
  const kinds: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
  let from = performance.now();
  const seen: Array<{ at: number; text: string }> = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      seen.push({ at: e.startTime, text: `${kinds[kind] ?? kind}:${e.duration.toFixed(1)}` });
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    mark() {
      from = performance.now();
      seen.length = 0;
    },
    since() {
      return seen
        .filter((e) => e.at >= from)
        .map((e) => e.text)
        .join(',');
    },
  };
}

/** The watched jobs: `wake-0` .. `wake-(WAKE_SET-1)`; round r updates wake-(r % WAKE_SET). */
const WAKE_SET = 10;

function wakeJob(i: number, round: number): unknown {
  return { Job: { ID: `wake-${i}`, Meta: { round: String(round) }, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } };
}

function putJson(agent: http.Agent, port: number, path: string, body: unknown): Promise<{ status: number; index: number }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'PUT', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, index: Number(res.headers['x-scheduler-index']) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/**
 * SCHEDULER_BENCH_PROFILE=dir: a CPU profile (the bench process's main thread, where the
 * in-process scheduler runs) of each recorded round, from just before the write is sent
 * until every blocked client has its answer; one `round-N.cpuprofile` per round.
 * `bench/profile-summary.ts` adds them up by function.
 */
async function roundProfiler(ctx: ScenarioContext, label: string) {
  const dir = process.env['SCHEDULER_BENCH_PROFILE'];
  if (!dir) return undefined;
  const { Session } = await import('node:inspector/promises');
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(dir, { recursive: true });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  ctx.log(`${label}: profiling recorded rounds into ${dir}`);
  return {
    dir,
    // Called right before the write is sent.
    begin() {
      void session.post('Profiler.start');
    },
    async stop(round: number) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(join(dir, `round-${round}.cpuprofile`), JSON.stringify(profile));
    },
    async close() {
      await session.post('Profiler.disable');
      session.disconnect();
    },
  };
}

type WakeVariant = 'in-process' | 'process' | 'workers';

/**
 * What the blocked clients watch: the job list (`/v1/jobs?prefix=wake-`, a round updates one
 * of WAKE_SET jobs), or one job (`/v1/job/wake-0`, every round updates it; issue 30 item 4).
 */
type Watch = 'list' | 'job';

function blockingWakeup(variant: WakeVariant, watch: Watch = 'list') {
  return (ctx: ScenarioContext) => runBlockingWakeup(ctx, variant, watch);
}

/** This isolate's heap and the memory outside it that V8 accounts (buffers), after a full GC. */
function settledMemory(gc: () => void): { heap: number; external: number; rss: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, rss: m.rss };
}

/** V8's gc() without starting node with --expose-gc (flag set at run time, read in a fresh context). */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

async function runBlockingWakeup(ctx: ScenarioContext, variant: WakeVariant, watch: Watch): Promise<ScenarioInstance> {
  const waiters = sizeFromEnv('SCHEDULER_BENCH_WAITERS', 1000);
  const idleEnv = Number(process.env['SCHEDULER_BENCH_IDLE_MS'] ?? 100);
  const idleMs = Number.isInteger(idleEnv) && idleEnv >= 0 ? idleEnv : 100;
  const workerCount = variant === 'workers' ? Math.max(2, availableParallelism()) : 1;
  const s = variant === 'in-process' ? await inProcessTarget(ctx) : await workersTarget(ctx, workerCount);
  const label =
    watch === 'job'
      ? 'scheduler-blocking-job'
      : variant === 'workers'
        ? `scheduler-blocking-wakeup-workers (${workerCount} worker processes)`
        : variant === 'process'
          ? 'scheduler-blocking-wakeup-process'
          : 'scheduler-blocking-wakeup';
  const watched = watch === 'job' ? '/v1/job/wake-0' : '/v1/jobs?prefix=wake-';
  const blockedPath = (index: number) => `${watched}${watch === 'job' ? '?' : '&'}index=${index}&wait=60s`;
  // Memory per waiter: this process holds the scheduler (in-process variant only), measured
  // in the last warm-up round, with every client blocked, against the same process idle.
  const gc = variant === 'in-process' ? exposeGc() : undefined;
  type PerWaiter = { heap: number; external: number; rss: number };
  let perWaiter: PerWaiter | undefined;
  let perHeldFloor: PerWaiter | undefined;
  const perClientOf = (idle: PerWaiter, held: PerWaiter): PerWaiter => ({
    heap: (held.heap - idle.heap) / waiters,
    external: (held.external - idle.external) / waiters,
    rss: (held.rss - idle.rss) / waiters,
  });
  const worker = new Worker(WAITER_WORKER, { eval: true, workerData: { waiters } });
  const reader = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const perClient: number[] = [];
  const firsts: number[] = [];
  const barePerClient: number[] = [];
  const bareFirsts: number[] = [];
  // The watched list is a fixed set of WAKE_SET jobs, registered here; each round updates
  // one of them (a new Meta value: a new job version), so every round answers the same
  // number of job stubs. (Registering a new job per round made the woken responses grow by
  // one stub a round, and the figures depend on how long the run was.)
  for (let i = 0; i < WAKE_SET; i++) {
    const put = await putJson(reader, s.port, '/v1/jobs', wakeJob(i, -1));
    if (put.status !== 200) throw new Error(`registering wake-${i} answered ${put.status}`);
  }
  let index = (await getJson(reader, s.port, '/v1/jobs')).index;
  reader.destroy();
  const profiler = await roundProfiler(ctx, label);
  const gcs = gcWatch();
  const floor = await startBareFloor();
  const floorSide = serverClock(floor.server);
  const perServer: number[] = [];
  const barePerServer: number[] = [];
  let n = 0;

  async function round(port: number, armedAt: number, path: string, armed: () => Promise<boolean>, body: unknown, beforeWrite?: () => void): Promise<RoundResult> {
    let settled: RoundResult | undefined;
    const answered = new Promise<RoundResult>((resolve) =>
      worker.once('message', (m: RoundResult) => {
        settled = m;
        resolve(m);
      }),
    );
    worker.postMessage({ type: 'arm', port, count: waiters, armedAt, path });
    // Every client is registered (as a waiter / held) before the write: no head start.
    // A client that failed while arming ends the round instead of hanging it.
    const armBy = Date.now() + 60_000;
    while (settled === undefined && !(await armed())) {
      if (Date.now() > armBy) throw new Error('blocked clients did not all arrive within 60 s');
      await new Promise((r) => setTimeout(r, 2));
    }
    if (settled !== undefined) throw new Error(`round ended while arming: ${settled.failed || 'unknown'}`);
    // The clients sit blocked for a moment before the write, as blocked clients do (they
    // wait up to minutes); same pause for the floor.
    if (idleMs > 0) await new Promise((r) => setTimeout(r, idleMs));
    const ended = settled as RoundResult | undefined; // set by the worker's message meanwhile
    if (ended !== undefined) throw new Error(`round ended before the write: ${ended.failed || 'unknown'}`);
    beforeWrite?.();
    worker.postMessage({ type: 'write', port, path: '/v1/jobs', body });
    const result = await answered;
    if (result.writeStatus !== 200) throw new Error(`register answered ${result.writeStatus}${result.failed ? ` (${result.failed})` : ''}`);
    if (result.failed) throw new Error(`blocked read failed: ${result.failed}`);
    return result;
  }

  // A client answered before the write's response arrived counts as 0 ms.
  const latencies = (times: number[]) => times.map((t) => Math.max(0, t)).sort((a, b) => a - b);

  const roundP99s: string[] = [];
  const bodyBytes: number[] = [];
  // One op: a scheduler round, then a floor round under the same conditions.
  const op = async (record: boolean, measureMemory = false): Promise<void> => {
    const armedAt = index;
    const roundNo = n++;
    const idle = measureMemory && gc ? settledMemory(gc) : undefined;
    const r = await round(s.port, armedAt, blockedPath(armedAt), () => s.armed(waiters), wakeJob(watch === 'job' ? 0 : roundNo % WAKE_SET, roundNo), () => {
      if (idle && gc) perWaiter = perClientOf(idle, settledMemory(gc));
      gcs.mark();
      if (record) profiler?.begin();
    });
    const gcInRound = gcs.since();
    if (record) await profiler?.stop(roundNo);
    const lat = latencies(r.times);
    const served = s.clock ? latencies(s.clock.take()) : undefined;
    index = r.writeIndex;
    // The floor answers with what the woken clients were just answered (headers and body).
    const sample = await sampleResponse(`http://127.0.0.1:${s.port}${watched}`);
    bodyBytes.push(sample.body.length);
    floor.use(sample);
    // The floor holds the same requests in this process: what node:http alone keeps per client.
    const floorIdle = measureMemory && gc ? settledMemory(gc) : undefined;
    const floorRound = await round(floor.port, 0, blockedPath(1), () => Promise.resolve(floor.held() >= waiters), {}, () => {
      if (floorIdle && gc) perHeldFloor = perClientOf(floorIdle, settledMemory(gc));
    });
    const b = latencies(floorRound.times);
    const bareServed = latencies(floorSide.take());
    if (!record) return;
    if ((served && served.length !== waiters) || bareServed.length !== waiters) {
      throw new Error(`server side saw ${served?.length ?? '-'} / ${bareServed.length} woken responses, expected ${waiters}`);
    }
    if (served) perServer.push(...served);
    barePerServer.push(...bareServed);
    perClient.push(...lat);
    firsts.push(lat[0] ?? 0);
    barePerClient.push(...b);
    bareFirsts.push(b[0] ?? 0);
    roundP99s.push(`${percentile(lat, 99).toFixed(0)}/${percentile(b, 99).toFixed(0)}${gcInRound ? `(gc ${gcInRound})` : ''}`);
  };
  // Warm-up rounds (both servers) are not recorded: the first wake-ups run cold code (JIT,
  // first Prisma/Redis use) and, with a few rounds per run, would be the whole p99 alone.
  // Each worker process sees 1/workers of the requests, so its code takes that many more
  // rounds to be as warm as the single process's.
  const defaultWarmup = variant === 'workers' ? 2 * workerCount : 2;
  const warmupEnv = Number(process.env['SCHEDULER_BENCH_WARMUP'] ?? defaultWarmup);
  const warmup = Number.isInteger(warmupEnv) && warmupEnv >= 0 ? warmupEnv : defaultWarmup;
  const warmStarted = Date.now();
  for (let i = 0; i < warmup; i++) await op(false, i === warmup - 1);
  if (warmup > 0) ctx.log(`${label}: ${warmup} warm-up rounds (not recorded) in ${Date.now() - warmStarted} ms`);
  const run = (): Promise<void> => op(true);
  return {
    target: { kind: 'function', run, concurrency: 1 },
    async teardown() {
      if (perClient.length > 0) {
        const ratio = (q: number) => (percentile([...perClient].sort((a, b) => a - b), q) / Math.max(0.001, percentile([...barePerClient].sort((a, b) => a - b), q))).toFixed(2);
        ctx.log(
          `${label}: ${perClient.length} wake-ups (${waiters} clients x ${firsts.length} writes); write-response to client-response ${summary(perClient)}; first client p50 ${percentile([...firsts].sort((a, b) => a - b), 50).toFixed(2)} ms`,
        );
        ctx.log(
          `${label}: bare node:http floor, same run (${waiters} held requests answered at once, same headers and body): ${summary(barePerClient)}; first client p50 ${percentile([...bareFirsts].sort((a, b) => a - b), 50).toFixed(2)} ms; scheduler/floor p50 x${ratio(50)}, p99 x${ratio(99)}`,
        );
        ctx.log(`${label}: p99 per round, scheduler/floor ms: ${roundP99s.join(' ')}`);
        ctx.log(`${label}: response body bytes per round: ${bodyBytes.join(' ')}`);
        if (perServer.length > 0) {
          ctx.log(
            `${label}: server side (write's response written -> each woken response written, server clock): scheduler ${summary(perServer)}; floor ${summary(barePerServer)}`,
          );
        }
      }
      if (perWaiter) {
        const kib = (b: number) => (b / 1024).toFixed(1);
        const floorPart = perHeldFloor ? `; the bare floor holding the same requests: V8 heap ${kib(perHeldFloor.heap)} KiB, RSS ${kib(perHeldFloor.rss)} KiB` : '';
        ctx.log(
          `${label}: memory per blocked client (scheduler process, ${waiters} held, after a full GC): V8 heap ${kib(perWaiter.heap)} KiB, external ${kib(perWaiter.external)} KiB, RSS ${kib(perWaiter.rss)} KiB (RSS also holds the clients' thread)${floorPart}`,
        );
      }
      if (profiler) ctx.log(`${label}: CPU profiles of the recorded rounds' wake windows in ${profiler.dir} (summary: npx tsx bench/profile-summary.ts ${profiler.dir})`);
      await profiler?.close();
      worker.postMessage({ type: 'close' });
      await worker.terminate();
      await floor.close();
      await s.teardown();
    },
  };
}

async function jobsFilter(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const jobs = sizeFromEnv('SCHEDULER_BENCH_JOBS', 10_000);
  const s = await startScheduler(ctx, jobs);
  const f = (e: string) => encodeURIComponent(e);
  return {
    target: {
      kind: 'http',
      url: s.url,
      requests: [
        { method: 'GET', path: `/v1/jobs?filter=${f('Meta.tier == "gold" and TaskGroups.0.Tasks.0.Driver == "docker"')}` },
        { method: 'GET', path: `/v1/jobs?filter=${f('Meta.team == "team-7" or "dc2" in Datacenters')}&per_page=100` },
        { method: 'GET', path: `/v1/jobs?filter=${f('TaskGroups.0.Tasks.0.Config.image matches "app:1[0-9]"')}&per_page=50` },
      ],
    },
    teardown: () => s.teardown(),
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'scheduler-jobs-filter',
    description: 'GET /v1/jobs?filter=<go-bexpr> over 10,000 jobs (filter evaluated on every full job)',
    baseline: 'pg-point-read',
    setup: jobsFilter,
  },
  {
    name: 'scheduler-blocking-wakeup',
    description: 'register a job with 1,000 clients blocked on /v1/jobs?index=N; op = arm, write until all 1,000 answered, then the same round on a bare node:http floor',
    baseline: 'node-http',
    setup: blockingWakeup('in-process'),
  },
  {
    name: 'scheduler-blocking-job',
    description:
      '1,000 clients blocked on one job (GET /v1/job/:id?index=N&wait=60s), one write to that job; op = arm, write until all 1,000 answered, then the same on a bare floor; logs the wake-up p50/p99 and the memory per blocked client',
    baseline: 'node-http',
    setup: blockingWakeup('in-process', 'job'),
  },
  {
    name: 'scheduler-blocking-wakeup-process',
    description:
      'the same wake-up rounds against the scheduler as deployed by default (its main.ts in a child process, SCHEDULER_WORKERS=1), apart from the benchmark harness and the floor',
    baseline: 'node-http',
    setup: blockingWakeup('process'),
  },
  {
    name: 'scheduler-blocking-wakeup-workers',
    description:
      'the same wake-up rounds against the scheduler as deployed with SCHEDULER_WORKERS (its main.ts in a child process: one worker per CPU, at least 2, on one port; Redis between them)',
    baseline: 'node-http',
    setup: blockingWakeup('workers'),
  },
];
