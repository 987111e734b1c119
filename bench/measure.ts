// Measuring a target: autocannon for HTTP, a closed-loop worker pool for functions.
// Both report operations per second and latency percentiles in milliseconds.
//
// autocannon runs in a worker thread of its own (its `workers: 1`), as a remote client
// would run on its own machine: the server's event loop pays for the server side of each
// request only, not for building requests, parsing responses and recording latencies. On
// the same loop the client's work sat in every response's latency (a request waited while
// the loop served the client's other connections) and took part of the server's CPU.
// Baselines are measured the same way, so ratios compare like with like. `inline` (make
// bench's BENCH_CLIENT=inline) runs autocannon on the server's own loop, as bench runs
// before 2026-11-22 (fifth round) did, for comparison with their figures.
//
// `wrk` (the default since issue 30) is an external C client in a process of its own
// (bench/wrk.ts): this process then holds only the server, so its CPU time over the
// measurement, divided by the requests answered, is the server's CPU per request.
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Target } from './scenario';
import { prepareWrk } from './wrk';

export interface Figures {
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly total: number;
  /** Failed operations (HTTP errors, timeouts, non-2xx; thrown function calls). */
  readonly failures: number;
  /**
   * This process's CPU time (user + system) per answered request, in microseconds: the
   * server's, when the load comes from another process (wrk). Absent otherwise.
   */
  readonly cpuUsPerRequest?: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

/** autocannon's setupRequest for specs with `keys`, loaded by path in its worker thread. */
export const RANDOM_KEY_SETUP = join(__dirname, 'random-key.js');

export type ClientMode = 'wrk' | 'thread' | 'inline';

export interface MeasureOptions {
  durationMs: number;
  connections: number;
  /** Where the HTTP load generator runs (default its own thread). */
  client?: ClientMode;
  /** Unrecorded HTTP load before the measurement (default none). */
  warmupMs?: number;
}

type RandomKeyRequest = { path?: string; pathTemplate?: string; keys?: number };

/** The same setupRequest as a function, for a client on this thread. */
function randomKeyFunction(): (req: RandomKeyRequest) => RandomKeyRequest {
  // A plain CommonJS file (the worker thread loads it by path), so required, not imported.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(RANDOM_KEY_SETUP) as (req: RandomKeyRequest) => RandomKeyRequest;
}

/** wrk in its own process; the warm-up is a wrk run of its own whose figures are dropped. */
async function measureWrk(target: Extract<Target, { kind: 'http' }>, options: MeasureOptions): Promise<Figures> {
  const prepare = (durationMs: number) => prepareWrk({ url: target.url, requests: target.requests, connections: options.connections, durationMs });
  if ((options.warmupMs ?? 0) >= 1000) await prepare(options.warmupMs ?? 0).run();
  const measured = prepare(options.durationMs);
  const before = process.cpuUsage();
  const w = await measured.run();
  const cpu = process.cpuUsage(before);
  const e = w.errors;
  return {
    reqPerSec: w.requests / (w.durationUs / 1e6),
    p50Ms: w.p50Us / 1000,
    p99Ms: w.p99Us / 1000,
    total: w.requests,
    failures: e.connect + e.read + e.write + e.status + e.timeout,
    cpuUsPerRequest: w.requests > 0 ? (cpu.user + cpu.system) / w.requests : Number.NaN,
  };
}

export async function measureHttp(
  target: Extract<Target, { kind: 'http' }>,
  options: MeasureOptions,
): Promise<Figures> {
  if ((options.client ?? 'wrk') === 'wrk') return measureWrk(target, options);
  const thread = options.client === 'thread';
  const warmupSec = Math.round((options.warmupMs ?? 0) / 1000);
  const result = await autocannon({
    url: target.url,
    connections: options.connections,
    duration: Math.max(1, Math.round(options.durationMs / 1000)),
    // Not recorded: the same load first, so the figures are the steady state (JIT-compiled
    // code, filled caches and pools), not the first second after a cold start.
    ...(warmupSec > 0 ? { warmup: { connections: options.connections, duration: warmupSec } } : {}),
    ...(thread ? { workers: 1 } : {}),
    ...(target.requests
      ? {
          requests: target.requests.map((r) => ({
            path: r.path,
            ...(r.method ? { method: r.method } : {}),
            ...(r.headers ? { headers: { ...r.headers } } : {}),
            ...(r.body !== undefined ? { body: r.body } : {}),
            ...(r.keys !== undefined ? { setupRequest: thread ? RANDOM_KEY_SETUP : randomKeyFunction(), pathTemplate: r.path, keys: r.keys } : {}),
          })),
        }
      : {}),
  });
  return {
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

export async function measureFunction(
  run: () => Promise<unknown>,
  options: { durationMs: number; concurrency: number },
): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await run();
        latencies.push(performance.now() - t0);
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const elapsedSec = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    reqPerSec: latencies.length / elapsedSec,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    total: latencies.length,
    failures,
  };
}

export function measureTarget(target: Target, options: MeasureOptions): Promise<Figures> {
  return target.kind === 'http'
    ? measureHttp(target, options)
    : measureFunction(target.run, { durationMs: options.durationMs, concurrency: target.concurrency ?? options.connections });
}
