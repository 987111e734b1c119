// Measuring a target: autocannon for HTTP, a closed-loop worker pool for functions.
// Both report operations per second and latency percentiles in milliseconds.
import autocannon from 'autocannon';
import type { Target } from './scenario';

export interface Figures {
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly total: number;
  /** Failed operations (HTTP errors, timeouts, non-2xx; thrown function calls). */
  readonly failures: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export async function measureHttp(
  target: Extract<Target, { kind: 'http' }>,
  options: { durationMs: number; connections: number },
): Promise<Figures> {
  const result = await autocannon({
    url: target.url,
    connections: options.connections,
    duration: Math.max(1, Math.round(options.durationMs / 1000)),
    ...(target.requests
      ? {
          requests: target.requests.map((r) => ({
            path: r.path,
            ...(r.method ? { method: r.method } : {}),
            ...(r.headers ? { headers: { ...r.headers } } : {}),
            ...(r.body !== undefined ? { body: r.body } : {}),
            ...(r.pathFor ? { setupRequest: (req: { path?: string }) => ({ ...req, path: r.pathFor!() }) } : {}),
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

export function measureTarget(target: Target, options: { durationMs: number; connections: number }): Promise<Figures> {
  return target.kind === 'http'
    ? measureHttp(target, options)
    : measureFunction(target.run, { durationMs: options.durationMs, concurrency: target.concurrency ?? options.connections });
}
