// `make bench`: baselines and every registered scenario in one run, printed as a table
// and written as JSON to bench/results/ (git-ignored).
//
//   BENCH_DURATION=5s      per measurement (Go-style duration or seconds)
//   BENCH_CONNECTIONS=32   HTTP connections / function workers
//   BENCH_ONLY=a,b         only these scenarios (baselines always run)
//   BENCH_RESULTS_DIR      where the JSON goes (default bench/results)
//   BENCH_ADJACENT=1       measure each scenario's baseline again right before and right
//                          after it and compute its ratios from the mean of the two (0: from
//                          the run's first baselines)
//   BENCH_INTERLEAVE=0     N > 0: measure each scenario and its baseline in N slices each,
//                          alternating (baseline, scenario, scenario, baseline, ...), both up
//                          at once in one process, and compute its ratios from those
//                          baseline slices (replaces BENCH_ADJACENT's bracket)
//   BENCH_CLIENT=wrk       wrk, an external C client in its own process (default; issue 30);
//                          `thread`: autocannon in a worker thread of the server's process;
//                          `inline`: on the server's event loop (runs before the fifth round)
//   BENCH_LOG_LEVEL=info   the services' log level (`info`: a request line per request, as
//                          make dev runs them; `warn` to measure without it)
//   BENCH_WARMUP=1s        unrecorded load before each HTTP measurement (0: none)
//   BENCH_ISOLATE=1        each measurement in a process of its own (bench/isolate.ts);
//                          0: all in this process, one after another
//   BENCH_CHILD_NODE_ARGS  extra node flags for those processes, e.g.
//                          `--cpu-prof --cpu-prof-dir=/tmp/p` (a profile per measurement)
//   DATABASE_URL           PostgreSQL for the point-read baseline and scenarios
//                          (default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Scenarios: files bench/scenarios/*.scenario.ts exporting `scenarios: Scenario[]`
// (bench/scenario.ts). Other files in that folder are helpers or standalone scripts.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { booleanEnv, ConfigError, databaseUrlEnv, durationEnv, loadEnv } from '@selfstack/config';
import { BASELINES } from './baselines';
import { adminQuery } from './bench-database';
import { runIsolated, runIsolatedPaired } from './isolate';
import { measureTarget, type ClientMode, type Figures } from './measure';
import type { BaselineName, Scenario, ScenarioContext } from './scenario';

type LogLevelName = NonNullable<ScenarioContext['logLevel']>;

const BENCH_DIR = __dirname;
export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface ScenarioResult extends Figures {
  readonly name: string;
  readonly description: string;
  readonly baseline: BaselineName;
  /** The baseline figures the ratios are computed from: the mean of the measurements
   * right before and right after the scenario (`bracket`), or the run's first ones when
   * adjacent baselines are off. */
  readonly baselineFigures: Figures;
  /** The baseline measured right before and right after the scenario (adjacent only). */
  readonly bracket?: { readonly before: Figures; readonly after: Figures };
  /** Slices of each the scenario and its baseline alternated in (interleaved only). */
  readonly interleaved?: { readonly slices: number };
  /** reqPerSec / baseline reqPerSec (higher is better). */
  readonly throughputRatio: number;
  /** p99 / baseline p99 (lower is better). */
  readonly p99Ratio: number;
  /**
   * Baseline CPU per request / the scenario's (higher is better; wrk runs only). On a
   * saturated one-process server it bounds the throughput ratio, and it moves far less than
   * req/s when other work shares the machine.
   */
  readonly cpuRatio?: number;
}

export interface BenchReport {
  readonly startedAt: string;
  readonly node: string;
  readonly cpus: number;
  readonly durationMs: number;
  readonly connections: number;
  readonly client: ClientMode;
  /** The services' log level (BENCH_LOG_LEVEL). */
  readonly logLevel: LogLevelName;
  readonly warmupMs: number;
  /** Whether each measurement ran in a process of its own. */
  readonly isolated: boolean;
  /** Slices per scenario and baseline when they alternated (0: not interleaved). */
  readonly interleave: number;
  /** The bench's PostgreSQL settings that shape its figures (postgresSettings). */
  readonly postgres: PostgresSettings;
  readonly baselines: Readonly<Record<BaselineName, Figures>>;
  readonly scenarios: ScenarioResult[];
  readonly failed: { name: string; error: string }[];
}

/** Loads every `*.scenario.ts` in `dir`; names must be unique and not a baseline's. */
export async function discoverScenarios(dir = join(BENCH_DIR, 'scenarios')): Promise<Scenario[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.scenario.ts'))
    .sort();
  const found: Scenario[] = [];
  for (const f of files) {
    const mod = (await import(join(dir, f))) as { scenarios?: unknown };
    if (!Array.isArray(mod.scenarios)) throw new Error(`${f} must export "scenarios: Scenario[]"`);
    for (const s of mod.scenarios as Scenario[]) {
      if (!s || typeof s.name !== 'string' || typeof s.setup !== 'function' || !(s.baseline in BASELINES)) {
        throw new Error(`${f}: invalid scenario ${JSON.stringify((s as { name?: unknown })?.name)} (needs name, setup and a known baseline)`);
      }
      if (s.name in BASELINES || found.some((x) => x.name === s.name)) throw new Error(`${f}: duplicate scenario name ${s.name}`);
      found.push(s);
    }
  }
  return found;
}

/** The coarsest p99 any measurement reports (autocannon's whole milliseconds). */
export const P99_RESOLUTION_MS = 1;

/** The resolution of a client's latencies: whole ms for autocannon, microseconds for wrk. */
export function p99Resolution(client: ClientMode): number {
  return client === 'wrk' ? 0.001 : P99_RESOLUTION_MS;
}

export function ratios(
  result: Figures,
  baseline: Figures,
  resolutionMs = P99_RESOLUTION_MS,
): { throughputRatio: number; p99Ratio: number; cpuRatio?: number } {
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const cpu = result.cpuUsPerRequest !== undefined && baseline.cpuUsPerRequest !== undefined ? { cpuRatio: round(baseline.cpuUsPerRequest / result.cpuUsPerRequest) } : {};
  return {
    ...cpu,
    throughputRatio: round(result.reqPerSec / baseline.reqPerSec),
    // autocannon reports whole milliseconds, so a p99 of 0 means "under 1 ms". Both sides are
    // floored at the client's resolution: a 3 ms p99 against a baseline's 0 is 3x, not 3000x.
    p99Ratio: round(Math.max(result.p99Ms, resolutionMs) / Math.max(baseline.p99Ms, resolutionMs)),
  };
}

/**
 * The baseline during a scenario, estimated from the measurements on either side of it:
 * mean rates and percentiles, summed counts. (One measurement right before was the
 * estimate until 2026-11-25: on this shared machine the bare server sometimes measured
 * half of what it had a minute earlier, and a dip just before a scenario doubled its
 * ratio.)
 */
export function bracketMean(before: Figures, after: Figures): Figures {
  const mean = (a: number, b: number) => (a + b) / 2;
  return {
    reqPerSec: mean(before.reqPerSec, after.reqPerSec),
    p50Ms: mean(before.p50Ms, after.p50Ms),
    p99Ms: mean(before.p99Ms, after.p99Ms),
    total: before.total + after.total,
    failures: before.failures + after.failures,
    ...meanCpu([before, after]),
  };
}

/**
 * Figures of one target measured in several slices of equal length: mean rates and
 * percentiles (a slice's p99 is of its own requests; their mean stands for the whole),
 * summed counts.
 */
export function combineSlices(slices: readonly Figures[]): Figures {
  if (slices.length === 0) throw new Error('combineSlices: no slices');
  const mean = (pick: (f: Figures) => number) => slices.reduce((n, f) => n + pick(f), 0) / slices.length;
  return {
    reqPerSec: mean((f) => f.reqPerSec),
    p50Ms: mean((f) => f.p50Ms),
    p99Ms: mean((f) => f.p99Ms),
    total: slices.reduce((n, f) => n + f.total, 0),
    failures: slices.reduce((n, f) => n + f.failures, 0),
    ...meanCpu(slices),
  };
}

/** CPU per request over several measurements, weighted by their requests (when all have it). */
function meanCpu(parts: readonly Figures[]): Pick<Figures, 'cpuUsPerRequest'> {
  if (parts.some((f) => f.cpuUsPerRequest === undefined)) return {};
  const requests = parts.reduce((n, f) => n + f.total, 0);
  return { cpuUsPerRequest: parts.reduce((n, f) => n + (f.cpuUsPerRequest ?? 0) * f.total, 0) / requests };
}

/** Which target each measurement of a paired run is, in order: B S, S B, B S, ... */
export function pairedOrder(slices: number): ('baseline' | 'scenario')[] {
  const out: ('baseline' | 'scenario')[] = [];
  for (let i = 0; i < slices; i++) out.push(...(i % 2 === 0 ? (['baseline', 'scenario'] as const) : (['scenario', 'baseline'] as const)));
  return out;
}

/**
 * A scenario and its baseline set up side by side and measured in `slices` slices each,
 * alternating (pairedOrder), `ctx.durationMs` in all per target. On a machine whose speed
 * drifts by tens of percent within minutes, both then see the same phases: the bracket's
 * baselines, taken before and after, miss what happens during the scenario. The idle one
 * of the two servers waits without load. Each target's first slice follows the warm-up.
 */
export async function runPaired(scenario: Scenario, ctx: ScenarioContext, slices: number): Promise<{ figures: Figures; baseline: Figures }> {
  const sliceMs = ctx.durationMs / slices;
  if (!Number.isInteger(slices) || slices < 1 || sliceMs < 1000) {
    throw new Error(`interleaving ${ctx.durationMs} ms in ${slices} slices: each slice must be at least 1 s`);
  }
  const base = await BASELINES[scenario.baseline].setup(ctx);
  try {
    const instance = await scenario.setup(ctx);
    try {
      const measured = { baseline: [] as Figures[], scenario: [] as Figures[] };
      for (const which of pairedOrder(slices)) {
        const target = which === 'baseline' ? base.target : instance.target;
        const warmupMs = measured[which].length === 0 ? ctx.warmupMs : 0;
        measured[which].push(await measureTarget(target, { durationMs: sliceMs, connections: ctx.connections, client: ctx.client, warmupMs }));
      }
      return { figures: combineSlices(measured.scenario), baseline: combineSlices(measured.baseline) };
    } finally {
      await instance.teardown();
    }
  } finally {
    await base.teardown();
  }
}

export async function runOne(scenario: Scenario, ctx: ScenarioContext): Promise<Figures> {
  const instance = await scenario.setup(ctx);
  try {
    return await measureTarget(instance.target, { durationMs: ctx.durationMs, connections: ctx.connections, client: ctx.client, warmupMs: ctx.warmupMs });
  } finally {
    await instance.teardown();
  }
}

/** PostgreSQL settings that move the figures of scenarios that write. */
export const POSTGRES_SETTINGS = ['server_version', 'autovacuum', 'fsync', 'synchronous_commit', 'shared_buffers'] as const;
export type PostgresSettings = Readonly<Record<(typeof POSTGRES_SETTINGS)[number], string>>;

/**
 * The bench PostgreSQL's settings, recorded with every run. They are the server's own, not
 * the service's: a machine whose PostgreSQL runs without autovacuum (some CI images) keeps
 * every dead row version a write scenario leaves (a KV v2 write updates one row and
 * replaces another) for the whole run, and without fsync or synchronous_commit it skips
 * the commits' WAL flushes; neither is how PostgreSQL is deployed (infra/).
 */
export async function postgresSettings(url: string): Promise<PostgresSettings> {
  const rows = await adminQuery<{ name: string; value: string }>(
    url,
    'SELECT "name", current_setting("name") AS "value" FROM unnest($1::text[]) AS "s"("name")',
    [POSTGRES_SETTINGS],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.value])) as PostgresSettings;
}

/** What a run's log says about the bench's PostgreSQL: its settings, and what is unusual. */
export function describePostgres(settings: PostgresSettings): string[] {
  const lines = [`PostgreSQL ${POSTGRES_SETTINGS.map((k) => (k === 'server_version' ? settings[k] : `${k}=${settings[k]}`)).join(', ')}`];
  if (settings.autovacuum !== 'on') {
    lines.push('autovacuum is off on this PostgreSQL: scenarios that write keep every dead row version they leave for the run (a deployed PostgreSQL vacuums)');
  }
  if (settings.fsync !== 'on' || settings.synchronous_commit === 'off') {
    lines.push('commits on this PostgreSQL do not wait for their WAL flush (fsync or synchronous_commit off): writes measure faster than they would deployed');
  }
  return lines;
}

export async function runBench(options: {
  databaseUrl: string;
  durationMs: number;
  connections: number;
  only?: readonly string[];
  log?: (message: string) => void;
  scenariosDir?: string;
  /**
   * Measure the scenario's baseline again right before and right after it, and compute
   * its ratios from the mean of the two (default true). On a shared or noisy machine
   * throughput drifts by tens of percent within minutes; baselines taken on both sides of
   * their scenario keep most of that drift out of the ratio.
   */
  adjacentBaselines?: boolean;
  /** Where the HTTP load generator runs (bench/measure.ts). */
  client?: ClientMode;
  /** The services' log level (default info). */
  logLevel?: LogLevelName;
  /** Unrecorded load before each HTTP measurement (default none). */
  warmupMs?: number;
  /** Each measurement in a process of its own (default true; bench/isolate.ts). */
  isolate?: boolean;
  /**
   * N > 0: each scenario and its baseline in N alternating slices (runPaired), its ratios
   * from those baseline slices; adjacent baselines are then not measured (default 0).
   */
  interleave?: number;
}): Promise<BenchReport> {
  const log = options.log ?? (() => undefined);
  const client = options.client ?? 'wrk';
  const logLevel = options.logLevel ?? 'info';
  const warmupMs = options.warmupMs ?? 0;
  const ctx: ScenarioContext = { databaseUrl: options.databaseUrl, durationMs: options.durationMs, connections: options.connections, client, logLevel, warmupMs, log };
  const all = await discoverScenarios(options.scenariosDir);
  const unknown = (options.only ?? []).filter((n) => !all.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) in BENCH_ONLY: ${unknown.join(', ')} (have: ${all.map((s) => s.name).join(', ') || 'none'})`);
  const selected = options.only && options.only.length > 0 ? all.filter((s) => options.only!.includes(s.name)) : all;
  const startedAt = new Date().toISOString();
  const postgres = await postgresSettings(options.databaseUrl);
  for (const line of describePostgres(postgres)) log(line);

  const isolate = options.isolate ?? true;
  const { log: _log, ...childCtx } = ctx;
  const dir = options.scenariosDir ? { scenariosDir: options.scenariosDir } : {};
  const measure = (kind: 'baseline' | 'scenario', scenario: Scenario): Promise<Figures> =>
    isolate ? runIsolated({ kind, name: scenario.name, ctx: childCtx, ...dir }, log) : runOne(scenario, ctx);
  const interleave = options.interleave ?? 0;
  const adjacent = options.adjacentBaselines ?? true;
  const baselines = {} as Record<BaselineName, Figures>;

  /** A scenario's figures, the baseline figures its ratios come from, and how those were taken. */
  async function measureScenario(s: Scenario): Promise<{ figures: Figures; base: Figures; how: Pick<ScenarioResult, 'bracket' | 'interleaved'> }> {
    if (interleave > 0) {
      log(`${s.name} and baseline ${s.baseline} in ${interleave} alternating slices each`);
      const paired = isolate
        ? await runIsolatedPaired({ kind: 'paired', name: s.name, slices: interleave, ctx: childCtx, ...dir }, log)
        : await runPaired(s, ctx, interleave);
      return { figures: paired.figures, base: paired.baseline, how: { interleaved: { slices: interleave } } };
    }
    if (!adjacent) return { figures: await measure('scenario', s), base: baselines[s.baseline], how: {} };
    log(`baseline ${s.baseline} again, before ${s.name}`);
    const before = await measure('baseline', BASELINES[s.baseline]);
    const figures = await measure('scenario', s);
    log(`baseline ${s.baseline} again, after ${s.name}`);
    const after = await measure('baseline', BASELINES[s.baseline]);
    return { figures, base: bracketMean(before, after), how: { bracket: { before, after } } };
  }

  for (const [name, scenario] of Object.entries(BASELINES) as [BaselineName, Scenario][]) {
    log(`baseline ${name}: ${scenario.description}`);
    baselines[name] = await measure('baseline', scenario);
  }
  const results: ScenarioResult[] = [];
  const failed: { name: string; error: string }[] = [];
  for (const s of selected) {
    log(`scenario ${s.name}: ${s.description}`);
    try {
      const { figures, base, how } = await measureScenario(s);
      results.push({ name: s.name, description: s.description, baseline: s.baseline, baselineFigures: base, ...how, ...figures, ...ratios(figures, base, p99Resolution(client)) });
    } catch (err) {
      failed.push({ name: s.name, error: (err as Error).message });
      log(`scenario ${s.name} failed: ${(err as Error).message}`);
    }
  }
  return {
    startedAt,
    node: process.version,
    cpus: cpus().length,
    durationMs: options.durationMs,
    connections: options.connections,
    client,
    logLevel,
    warmupMs,
    isolated: isolate,
    interleave,
    postgres,
    baselines,
    scenarios: results,
    failed,
  };
}

export function formatReport(report: BenchReport): string {
  const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const cpu = (f: Figures) => (f.cpuUsPerRequest === undefined ? '' : fmt(f.cpuUsPerRequest, 0));
  const rows: string[][] = [];
  for (const [name, f] of Object.entries(report.baselines)) {
    rows.push([name, '(baseline)', fmt(f.reqPerSec), fmt(f.p50Ms, 2), fmt(f.p99Ms, 2), cpu(f), '1.000', '1.000', f.cpuUsPerRequest === undefined ? '' : '1.000', String(f.failures)]);
  }
  for (const s of report.scenarios) {
    rows.push([
      s.name,
      s.baseline,
      fmt(s.reqPerSec),
      fmt(s.p50Ms, 2),
      fmt(s.p99Ms, 2),
      cpu(s),
      fmt(s.throughputRatio, 3),
      fmt(s.p99Ratio, 3),
      s.cpuRatio === undefined ? '' : fmt(s.cpuRatio, 3),
      String(s.failures),
      `${fmt(s.baselineFigures.reqPerSec)} / ${fmt(s.baselineFigures.p99Ms, 2)}`,
      s.bracket ? `${fmt(s.bracket.before.reqPerSec)} / ${fmt(s.bracket.after.reqPerSec)}` : s.interleaved ? `interleaved, ${s.interleaved.slices} slices` : '',
    ]);
  }
  for (const f of report.failed) rows.push([f.name, 'FAILED', f.error.slice(0, 60), '', '', '', '', '', '', '', '', '']);
  const headers = ['scenario', 'vs', 'req/s', 'p50 ms', 'p99 ms', 'cpu us/req', 'x req/s', 'x p99', 'x cpu', 'errors', 'baseline req/s / p99 ms', 'before / after req/s'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const benchEnv = z.object({
  DATABASE_URL: databaseUrlEnv,
  BENCH_DURATION: durationEnv('5s'),
  BENCH_CONNECTIONS: z.string().regex(/^[1-9]\d*$/, { message: 'must be a positive integer' }).transform(Number).default(32),
  BENCH_ONLY: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : [])),
  BENCH_RESULTS_DIR: z.string().min(1).default(join(BENCH_DIR, 'results')),
  BENCH_ADJACENT: booleanEnv(true),
  BENCH_CLIENT: z.enum(['wrk', 'thread', 'inline']).default('wrk'),
  BENCH_LOG_LEVEL: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
  BENCH_WARMUP: durationEnv('1s'),
  BENCH_ISOLATE: booleanEnv(true),
  BENCH_INTERLEAVE: z.string().regex(/^\d+$/, { message: 'must be a whole number of slices (0: off)' }).transform(Number).default(0),
});

async function main(): Promise<number> {
  let env: z.output<typeof benchEnv>;
  try {
    env = loadEnv(benchEnv, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const report = await runBench({
    databaseUrl,
    durationMs: env.BENCH_DURATION,
    connections: env.BENCH_CONNECTIONS,
    only: env.BENCH_ONLY,
    adjacentBaselines: env.BENCH_ADJACENT,
    client: env.BENCH_CLIENT,
    logLevel: env.BENCH_LOG_LEVEL,
    warmupMs: env.BENCH_WARMUP,
    isolate: env.BENCH_ISOLATE,
    interleave: env.BENCH_INTERLEAVE,
    log: (m) => process.stderr.write(`bench: ${m}\n`),
  }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED') {
      throw new Error(`cannot reach PostgreSQL at ${databaseUrl}: start it (or \`make dev\`) or set DATABASE_URL`);
    }
    throw err;
  });
  process.stdout.write(`\n${formatReport(report)}\n`);
  const dir = isAbsolute(env.BENCH_RESULTS_DIR) ? env.BENCH_RESULTS_DIR : resolve(env.BENCH_RESULTS_DIR);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nresults: ${file}\n`);
  return report.failed.length > 0 ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`bench failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
