// What the request log costs a KV v2 read (issue 30, item 2): two secrets services in this
// process, one logging at `info` (a request line per request) and one at `warn`, measured
// in alternating wrk slices (info, warn, warn, info, ...) so that both see the same phases
// of a machine whose speed drifts; prints each one's req/s and CPU per request and their
// ratios. Not a `make bench` scenario: its result is a ratio of two services, not of one to
// a baseline.
//
//   npx tsx bench/log-cost.ts [slices=12] > /dev/null     (stdout carries the log lines)
//   LOG_COST_ORDER=warn,info    set up the warn service first
import { measureTarget, type Figures } from './measure';
import { DEFAULT_DATABASE_URL, discoverScenarios } from './run';

async function main(): Promise<void> {
  const slices = Number(process.argv[2] ?? 12);
  const scenario = (await discoverScenarios()).find((x) => x.name === 'secrets-kv2-read');
  if (!scenario) throw new Error('scenario secrets-kv2-read not found');
  const ctx = {
    databaseUrl: process.env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL,
    durationMs: 3000,
    connections: 32,
    client: 'wrk' as const,
    warmupMs: 1000,
    log: (m: string) => process.stderr.write(`log-cost: ${m}\n`),
  };
  const order = (process.env['LOG_COST_ORDER'] ?? 'info,warn').split(',').map((l) => (l === 'warn' ? 'warn' : 'info'));
  const services = new Map<'info' | 'warn', Awaited<ReturnType<typeof scenario.setup>>>();
  for (const level of order) services.set(level, await scenario.setup({ ...ctx, logLevel: level }));
  const got: Record<'info' | 'warn', Figures[]> = { info: [], warn: [] };
  try {
    const measure = (level: 'info' | 'warn', durationMs: number) =>
      measureTarget(services.get(level)!.target, { durationMs, connections: ctx.connections, client: 'wrk' });
    for (const level of ['info', 'warn'] as const) await measure(level, 2000); // warm-up
    for (let i = 0; i < slices; i++) {
      for (const level of i % 2 === 0 ? (['info', 'warn'] as const) : (['warn', 'info'] as const)) got[level].push(await measure(level, 3000));
    }
  } finally {
    for (const s of services.values()) await s.teardown();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const level of ['info', 'warn'] as const) {
    const f = got[level];
    process.stderr.write(
      `${level}: req/s ${mean(f.map((x) => x.reqPerSec)).toFixed(0)} [${f.map((x) => x.reqPerSec.toFixed(0)).join(' ')}], ` +
        `CPU ${mean(f.map((x) => x.cpuUsPerRequest ?? 0)).toFixed(1)} us/request [${f.map((x) => (x.cpuUsPerRequest ?? 0).toFixed(0)).join(' ')}], p99 ${mean(f.map((x) => x.p99Ms)).toFixed(1)} ms\n`,
    );
  }
  const rate = mean(got.info.map((x) => x.reqPerSec)) / mean(got.warn.map((x) => x.reqPerSec));
  const cpu = mean(got.warn.map((x) => x.cpuUsPerRequest ?? 0)) / mean(got.info.map((x) => x.cpuUsPerRequest ?? 0));
  process.stderr.write(`info against warn: req/s x${rate.toFixed(3)}, CPU per request (warn/info) x${cpu.toFixed(3)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`log-cost failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
