// Issue 27, item 7: the event stream under fan-out. The scheduler as deployed (its main.ts
// in a child process, Redis when REDIS_URL is set) with SCHEDULER_BENCH_SUBSCRIBERS
// (default 500) clients following /v1/event/stream from a load process of their own
// (event-stream-subscribers.ts), while this process registers jobs at a steady
// SCHEDULER_BENCH_EVENT_RATE events per second (default 200: a job registration writes two
// events, the job and its evaluation, in one frame). One op is one paced write.
//
// Reported at teardown: delivery latency per frame per subscriber (p50/p99/max, from the
// write being sent to the frame being parsed by the subscriber, so it includes the write
// itself), frames delivered against frames expected, and the server's resident memory
// sampled every 500 ms (first, last, max and the slope of a least-squares line, MiB per
// minute): flat means the stream buffers nothing per subscriber that grows with time.
// Target (issue 27): p99 under 100 ms, memory flat.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { freePortBelowEphemeral } from '@selfstack/testing';
import { createBenchDatabase, sizeFromEnv } from '../bench-database';
import type { Scenario, ScenarioContext, ScenarioInstance } from '../scenario';

const MAIN = join(__dirname, '..', '..', 'services', 'scheduler', 'src', 'main.ts');
const SUBSCRIBERS = join(__dirname, 'event-stream-subscribers.ts');

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
  const db = await createBenchDatabase(ctx.databaseUrl, 'events');
  const port = await freePortBelowEphemeral();
  const base = `http://127.0.0.1:${port}`;
  const redisUrl = process.env.REDIS_URL ?? '';
  const server = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: redisUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SCHEDULER_WORKERS: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let load: ChildProcess | undefined;
  const cleanup = async (): Promise<void> => {
    load?.kill('SIGKILL');
    server.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    server.kill('SIGKILL');
    await db.drop();
  };
  try {
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${base}/readyz`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || server.exitCode !== null) throw new Error('scheduler did not become ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    load = spawn(process.execPath, ['--import', 'tsx', SUBSCRIBERS, `${base}/v1/event/stream`, String(subscribers)], { stdio: ['pipe', 'pipe', 'inherit'] });
    await waitForLine(load, /^READY$/, 60_000, `${subscribers} subscribers`);
    ctx.log(`scheduler-event-stream: ${subscribers} subscribers ready; writing ${eventRate} events/s (${eventRate / 2} job registrations/s), ${redisUrl ? 'Redis' : 'in-memory'} bus`);
  } catch (err) {
    await cleanup();
    throw err;
  }

  const memory: Array<[number, number]> = [];
  const t0 = Date.now();
  const sampler = setInterval(() => memory.push([Date.now() - t0, rssMiB(server.pid as number)]), 500);
  let writes = 0;
  let next = performance.now();
  const jobIds = 50;

  return {
    target: {
      kind: 'function',
      concurrency: 1,
      run: async () => {
        // Paced: one registration per slot, whatever the answer time.
        next += writeEveryMs;
        const wait = next - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const n = writes++;
        const sent = String(performance.timeOrigin + performance.now());
        const res = await fetch(`${base}/v1/jobs`, {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ Job: { ID: `stream-${n % jobIds}`, Meta: { sent }, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }] } }),
        });
        if (res.status !== 200) throw new Error(`register: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      },
    },
    async teardown() {
      clearInterval(sampler);
      // Let the last frames arrive.
      await new Promise((r) => setTimeout(r, 500));
      const line = waitForLine(load as ChildProcess, /^\{/, 30_000, 'the subscribers report');
      load?.stdin?.write('report\n');
      const r = JSON.parse(await line) as { frames: number; errors: number; p50: number; p99: number; max: number };
      const expected = writes * subscribers;
      const mem = memory.map(([, v]) => v);
      ctx.log(
        `scheduler-event-stream: delivery p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms; ` +
          `${r.frames} of ${expected} frames delivered (${((100 * r.frames) / Math.max(1, expected)).toFixed(2)} %), ${r.errors} errors; ` +
          `server RSS ${mem[0]?.toFixed(0)} -> ${mem.at(-1)?.toFixed(0)} MiB (max ${Math.max(...mem).toFixed(0)}), slope ${slopePerMinute(memory).toFixed(2)} MiB/min over ${memory.length} samples`,
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
