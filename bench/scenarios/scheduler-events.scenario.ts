// Issue 27, item 7: the event stream under fan-out. The scheduler as deployed (its main.ts
// in a child process, Redis when REDIS_URL is set) with SCHEDULER_BENCH_SUBSCRIBERS
// (default 500) clients following /v1/event/stream from a load process of their own
// (event-stream-subscribers.ts), while this process registers jobs at a steady
// SCHEDULER_BENCH_EVENT_RATE events per second (default 200: a job registration writes two
// events, the job and its evaluation, in one frame). One op is one paced write. The writes
// are open-loop: WRITERS workers take the next 1/rate slot each, so a registration that
// takes longer than a slot does not lower the rate (with one worker waiting for each answer,
// the rate was 1 / the registration time: ~25 registrations/s under this load, not 100).
//
// Reported at teardown: delivery latency per frame per subscriber (p50/p99/max, from the
// write being sent to the frame being parsed by the subscriber, so it includes the write
// itself; and the spread after the frame's first arrival on any stream, which leaves the
// write out), frames delivered against frames expected, the write rate reached, the CPU used
// by the server and by the subscribers' process (% of one core), and the server's memory
// sampled every 500 ms: resident set (first, middle, last, max and the slope of a
// least-squares line, MiB per minute) and V8 heap used right after the latest full GC
// (heap-probe.mjs; first, middle, last, slope), with V8's heap size and the memory
// outside it. V8 grows its heap for the first ~30 s of a run at this allocation rate and
// then holds it: the slope of the second half of the samples is the
// figure to read for "flat", and the heap after full GC for what is retained.: flat means the stream keeps nothing per subscriber or per frame
// that grows with time. Target (issue 27): p99 under 100 ms, memory flat.
//
// SCHEDULER_BENCH_PROFILE_DIR=<dir>: both processes run with --cpu-prof into <dir> (the
// server is stopped with SIGTERM and awaited so that it writes its profile); summarise with
// `npx tsx bench/profile-summary.ts <dir> 50` (one .cpuprofile per process).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { freePortBelowEphemeral } from '@selfstack/testing';
import { Client } from 'pg';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';
import { cpuNow, cpuSince, postgresBackends, processCpu, type ProcessCpu } from '../proc-cpu';
import type { Scenario, ScenarioContext, ScenarioInstance } from '../scenario';

const MAIN = join(__dirname, '..', '..', 'services', 'scheduler', 'src', 'main.ts');
const SUBSCRIBERS = join(__dirname, 'event-stream-subscribers.ts');
const HEAP_PROBE = join(__dirname, 'heap-probe.mjs');
const WRITERS = 16;

const total = (c: ProcessCpu | null): number => (c ? c.user + c.system : NaN);

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Least-squares slope of (ms, MiB) samples, in MiB per minute. */
export function slopePerMinute(samples: ReadonlyArray<readonly [number, number]>): number {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((s, [x]) => s + x, 0) / n;
  const my = samples.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of samples) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60_000;
}

function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      rl.close();
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    rl.on('line', (line) => {
      if (!pattern.test(line)) return;
      clearTimeout(timer);
      rl.close();
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what}: process exited with ${code}`));
    });
  });
}

async function setup(ctx: ScenarioContext): Promise<ScenarioInstance> {
  const subscribers = sizeFromEnv('SCHEDULER_BENCH_SUBSCRIBERS', 500);
  const eventRate = sizeFromEnv('SCHEDULER_BENCH_EVENT_RATE', 200);
  const writeEveryMs = 2000 / eventRate;
  // The scheduling engine (SCHEDULER_BENCH_ENGINE_WORKERS, default 0: off) evaluates each
  // registration's evaluation and writes more frames of its own (the evaluation's updates,
  // a blocked evaluation: no node runs docker here), about twice the events the issue's
  // 200 events/s name, and its CPU; scheduler-placement measures it.
  const engineWorkers = process.env.SCHEDULER_BENCH_ENGINE_WORKERS ?? '0';
  const db = await createBenchDatabase(ctx.databaseUrl, 'events');
  const port = await freePortBelowEphemeral();
  const base = `http://127.0.0.1:${port}`;
  const redisUrl = process.env.REDIS_URL ?? '';
  const profileDir = process.env.SCHEDULER_BENCH_PROFILE_DIR;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // The heap probe writes process.memoryUsage() as a JSON line to fd 3 every 500 ms.
  const server = spawn(process.execPath, [...profile, '--import', 'tsx', '--import', HEAP_PROBE, MAIN], {
    env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: redisUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SCHEDULER_WORKERS: '1', SCHEDULER_ENGINE_WORKERS: engineWorkers },
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
  });
  const heap: Array<[number, number]> = [];
  // process.memoryUsage() samples of the server (MiB), for the start / middle / end figures.
  const usage: Array<Record<'heapTotal' | 'external' | 'arrayBuffers', number>> = [];
  let heapT0 = 0;
  createInterface({ input: server.stdio[3] as NodeJS.ReadableStream }).on('line', (line) => {
    if (heapT0 === 0) return;
    const m = JSON.parse(line) as { heapUsed: number; heapTotal: number; external: number; arrayBuffers: number; heapAfterGc: number | null };
    // Heap retained after the latest full GC once there was one (garbage not counted).
    heap.push([Date.now() - heapT0, (m.heapAfterGc ?? m.heapUsed) / 2 ** 20]);
    usage.push({ heapTotal: m.heapTotal / 2 ** 20, external: m.external / 2 ** 20, arrayBuffers: m.arrayBuffers / 2 ** 20 });
  });
  let load: ChildProcess | undefined;
  const exited = (child: ChildProcess, ms: number): Promise<void> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(resolve, ms);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        });
  // The server's PostgreSQL backends, for their CPU time.
  const pg = new Client({ connectionString: db.url });
  const cleanup = async (): Promise<void> => {
    await pg.end().catch(() => undefined);
    if (!profileDir) load?.kill('SIGKILL');
    server.kill('SIGTERM');
    // A profiled server writes its profile when it exits.
    await exited(server, profileDir ? 20_000 : 200);
    server.kill('SIGKILL');
    if (profileDir) await exited(load as ChildProcess, 10_000);
    load?.kill('SIGKILL');
    await db.drop();
  };
  try {
    await pg.connect();
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${base}/readyz`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || server.exitCode !== null) throw new Error('scheduler did not become ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    load = spawn(process.execPath, [...profile, '--import', 'tsx', SUBSCRIBERS, `${base}/v1/event/stream`, String(subscribers)], { stdio: ['pipe', 'pipe', 'inherit'] });
    await waitForLine(load, /^READY$/, 60_000, `${subscribers} subscribers`);
    ctx.log(
      `scheduler-event-stream: ${subscribers} subscribers ready; writing ${eventRate} events/s (${eventRate / 2} job registrations/s), ${redisUrl ? 'Redis' : 'in-memory'} bus, ` +
        `engine workers ${engineWorkers}`,
    );
  } catch (err) {
    await cleanup();
    throw err;
  }

  const memory: Array<[number, number]> = [];
  const t0 = Date.now();
  heapT0 = t0;
  const sampler = setInterval(() => memory.push([Date.now() - t0, rssMiB(server.pid as number)]), 500);
  const backends = () => postgresBackends((q) => pg.query<{ pid: number }>(q));
  const cpuStart = { at: performance.now(), server: processCpu(server.pid as number), load: processCpu(load.pid as number), writer: process.cpuUsage(), pg: cpuNow(await backends()) };
  // The writer: keep-alive connections, gzip accepted as Nomad's API client asks for it; the
  // answer's body is not decoded (fetch spent ~3 ms of this process's CPU per registration,
  // inflating it included, on a machine where the server spends ~3.5).
  const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS });
  const register = (body: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = http.request(`${base}/v1/jobs`, { method: 'PUT', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Accept-Encoding': 'gzip' } }, (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          if (status !== 200) chunks.push(c);
        });
        res.on('end', () => resolve({ status, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  let writes = 0;
  let late = 0;
  // Sent -> answered, per registration (ms).
  const writeMs: number[] = [];
  let next: number | undefined;
  let firstSlot = 0;
  const jobIds = 50;

  return {
    target: {
      kind: 'function',
      concurrency: WRITERS,
      run: async () => {
        // Paced, open-loop: each call takes the next slot, whatever the answer time of
        // the calls before it; a slot missed by more than one interval counts as late.
        if (next === undefined) firstSlot = next = performance.now();
        next += writeEveryMs;
        const slot = next;
        const wait = slot - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        else if (-wait > writeEveryMs) late++;
        const n = writes++;
        const sent = String(performance.timeOrigin + performance.now());
        const res = await register(JSON.stringify({ Job: { ID: `stream-${n % jobIds}`, Meta: { sent }, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } }));
        if (res.status !== 200) throw new Error(`register: ${res.status} ${res.text}`);
        writeMs.push(performance.timeOrigin + performance.now() - Number(sent));
      },
    },
    async teardown() {
      clearInterval(sampler);
      const writeSeconds = (performance.now() - firstSlot) / 1000;
      const cpuEnd = { at: performance.now(), server: processCpu(server.pid as number), load: processCpu((load as ChildProcess).pid as number), writer: process.cpuUsage(cpuStart.writer) };
      const pgMs = cpuSince(cpuStart.pg, await backends());
      agent.destroy();
      const wallMs = cpuEnd.at - cpuStart.at;
      const pct = (ms: number) => `${((100 * ms) / wallMs).toFixed(0)} %`;
      // Let the last frames arrive.
      await new Promise((r) => setTimeout(r, 500));
      const line = waitForLine(load as ChildProcess, /^\{/, 30_000, 'the subscribers report');
      load?.stdin?.write('report\n');
      const r = JSON.parse(await line) as { frames: number; allFrames: number; errors: number; outOfOrder: number; p50: number; p99: number; max: number; spreadP50: number; spreadP99: number };
      const expected = writes * subscribers;
      const mem = memory.map(([, v]) => v);
      const heapMiB = heap.map(([, v]) => v);
      const mid = <T>(a: readonly T[]): T | undefined => a[Math.floor(a.length / 2)];
      const sortedWrites = [...writeMs].sort((a, b) => a - b);
      const writeAt = (p: number) => sortedWrites[Math.min(sortedWrites.length - 1, Math.floor((p / 100) * sortedWrites.length))] ?? NaN;
      ctx.log(
        `scheduler-event-stream: delivery p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms ` +
          `(fan-out spread after the first stream p50 ${r.spreadP50.toFixed(1)} ms, p99 ${r.spreadP99.toFixed(1)} ms); ` +
          `${r.frames} of ${expected} registration frames delivered (${((100 * r.frames) / Math.max(1, expected)).toFixed(2)} %), ${r.allFrames} frames in all, ` +
          `${r.outOfOrder} out of order, ${r.errors} errors; ` +
          `${writes} writes, ${(writes / Math.max(1e-9, writeSeconds)).toFixed(1)} registrations/s (${(2 * writes / Math.max(1e-9, writeSeconds)).toFixed(0)} events/s), ${late} started late, ` +
          `registration answered p50 ${writeAt(50).toFixed(1)} ms, p99 ${writeAt(99).toFixed(1)} ms; ` +
          `CPU server ${pct(total(cpuEnd.server) - total(cpuStart.server))} of a core (${pct((cpuEnd.server?.system ?? NaN) - (cpuStart.server?.system ?? NaN))} in the kernel; ` +
          `${((total(cpuEnd.server) - total(cpuStart.server)) / Math.max(1, writes)).toFixed(1)} ms per registration), ` +
          `PostgreSQL backends ${pct(pgMs)} (${(pgMs / Math.max(1, writes)).toFixed(1)} ms per registration), ` +
          `subscribers ${pct(total(cpuEnd.load) - total(cpuStart.load))}, writer ${pct((cpuEnd.writer.user + cpuEnd.writer.system) / 1000)}`,
      );
      ctx.log(
        `scheduler-event-stream: server RSS ${mem[0]?.toFixed(0)} / ${mid(mem)?.toFixed(0)} / ${mem.at(-1)?.toFixed(0)} MiB (start / middle / end, max ${Math.max(...mem).toFixed(0)}), ` +
          `slope ${slopePerMinute(memory).toFixed(2)} MiB/min over ${memory.length} samples (second half ${slopePerMinute(memory.slice(Math.floor(memory.length / 2))).toFixed(2)}); ` +
          `V8 heap after full GC ${heapMiB[0]?.toFixed(0)} / ${mid(heapMiB)?.toFixed(0)} / ${heapMiB.at(-1)?.toFixed(0)} MiB, slope ${slopePerMinute(heap).toFixed(2)} MiB/min ` +
          `(second half ${slopePerMinute(heap.slice(Math.floor(heap.length / 2))).toFixed(2)}); ` +
          (['heapTotal', 'external', 'arrayBuffers'] as const)
            .map((k) => `${k} ${usage[0]?.[k].toFixed(0)} / ${mid(usage)?.[k].toFixed(0)} / ${usage.at(-1)?.[k].toFixed(0)} MiB`)
            .join(', '),
      );
      await cleanup();
    },
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'scheduler-event-stream',
    description: `event stream fan-out: ${500} subscribers while ${200} events/s are written (paced writes; latency and memory logged)`,
    baseline: 'node-http',
    setup,
  },
];
