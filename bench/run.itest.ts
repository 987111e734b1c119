// One short `make bench` run: both baselines and a scenario measured in the same run,
// against the real PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBench } from './run';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Runs `fn` with a scenarios folder holding one file, removed afterwards. */
async function withScenarioFile<T>(file: string, source: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-scenarios-'));
  writeFileSync(join(dir, file), source);
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One short run of `express-json` against the real PostgreSQL. */
const runExpress = (adjacentBaselines?: boolean) =>
  runBench({
    databaseUrl: DATABASE_URL,
    durationMs: 1000,
    connections: 8,
    only: ['express-json'],
    ...(adjacentBaselines === undefined ? {} : { adjacentBaselines }),
  });

describe('bench/run.ts', () => {
  it('measures the baselines and reports a scenario as ratios to its baseline', async () => {
    const report = await runExpress();
    expect(report.failed).toEqual([]);
    // The bench PostgreSQL's settings, as the server reports them.
    expect(report.postgres.server_version).toMatch(/^\d+(\.\d+)?/);
    expect(['on', 'off']).toContain(report.postgres.autovacuum);
    expect(['on', 'off']).toContain(report.postgres.fsync);
    expect(['on', 'off', 'local', 'remote_write', 'remote_apply']).toContain(report.postgres.synchronous_commit);
    expect(report.postgres.shared_buffers).toMatch(/^\d+(kB|MB|GB)$/);
    for (const f of Object.values(report.baselines)) {
      expect(f.total).toBeGreaterThan(0);
      expect(f.failures).toBe(0);
      expect(f.reqPerSec).toBeGreaterThan(0);
    }
    expect(report.scenarios).toHaveLength(1);
    const s = report.scenarios[0]!;
    expect(s.name).toBe('express-json');
    // Ratios come from the baseline measured again right before and right after the
    // scenario (their mean).
    const { before, after } = s.bracket!;
    expect(before.total).toBeGreaterThan(0);
    expect(after.total).toBeGreaterThan(0);
    expect(before).not.toBe(report.baselines['node-http']);
    expect(s.baselineFigures.reqPerSec).toBeCloseTo((before.reqPerSec + after.reqPerSec) / 2, 6);
    expect(s.baselineFigures.total).toBe(before.total + after.total);
    expect(s.throughputRatio).toBeCloseTo(s.reqPerSec / s.baselineFigures.reqPerSec, 2);
    expect(Number.isFinite(s.p99Ratio)).toBe(true);
  });

  it('with adjacent baselines off, uses the run\'s first baseline', async () => {
    const report = await runExpress(false);
    const s = report.scenarios[0]!;
    expect(s.baselineFigures).toBe(report.baselines['node-http']);
    expect(s.bracket).toBeUndefined();
    expect(s.throughputRatio).toBeCloseTo(s.reqPerSec / report.baselines['node-http'].reqPerSec, 2);
  });

  it('measures each scenario in a process of its own (and in this one with isolate off)', async () => {
    // A scenario that reports the process it was set up in: through its figures' failures
    // (1 = the benchmark's own process), the only channel a scenario has.
    await withScenarioFile(
      'where.scenario.ts',
      `export const scenarios = [{
        name: 'where',
        description: 'reports whether it runs in the benchmark process',
        baseline: 'node-http',
        async setup() {
          const inParent = String(process.pid) === process.env.BENCH_PARENT_PID || process.env.BENCH_PARENT_PID === undefined;
          return { target: { kind: 'function', concurrency: 1, run: async () => { if (inParent) throw new Error('in the parent'); } }, teardown: async () => undefined };
        },
      }];\n`,
      async (dir) => {
        const base = { databaseUrl: DATABASE_URL, durationMs: 1000, connections: 2, only: ['where'], scenariosDir: dir, adjacentBaselines: false };
        const isolated = await runBench(base);
        expect(isolated.failed).toEqual([]);
        expect(isolated.isolated).toBe(true);
        expect(isolated.scenarios[0]?.failures).toBe(0);
        expect(isolated.scenarios[0]?.total).toBeGreaterThan(0);
        const inline = await runBench({ ...base, isolate: false });
        expect(inline.isolated).toBe(false);
        expect(inline.scenarios[0]?.total).toBe(0);
        expect(inline.scenarios[0]?.failures).toBeGreaterThan(0);
      },
    );
  });

  it('a scenario that fails in its process is reported as failed, the run goes on', async () => {
    await withScenarioFile(
      'broken.scenario.ts',
      `export const scenarios = [{ name: 'broken', description: 'setup throws', baseline: 'node-http', async setup() { throw new Error('seed failed'); } }];\n`,
      async (dir) => {
        const report = await runBench({
          databaseUrl: DATABASE_URL,
          durationMs: 1000,
          connections: 2,
          only: ['broken'],
          scenariosDir: dir,
          adjacentBaselines: false,
        });
        expect(report.failed).toEqual([{ name: 'broken', error: 'seed failed' }]);
        expect(report.baselines['node-http'].total).toBeGreaterThan(0);
      },
    );
  });

  it('interleaved: the scenario and its baseline alternate in slices, the ratios come from those baseline slices', async () => {
    // A function scenario that records when it is called, in this process (isolate off):
    // three slices each go baseline, scenario | scenario, baseline | baseline, scenario, so
    // its calls come in two bursts with two baseline slices between them.
    await withScenarioFile(
      'calls.scenario.ts',
      `export const scenarios = [{
        name: 'calls',
        description: 'records its calls',
        baseline: 'node-http',
        async setup() {
          const calls = ((globalThis as Record<string, unknown>).__benchCalls = [] as number[]);
          return { target: { kind: 'function', concurrency: 1, run: async () => { calls.push(performance.now()); await new Promise((r) => setTimeout(r, 5)); } }, teardown: async () => undefined };
        },
      }];\n`,
      async (dir) => {
        const report = await runBench({
          databaseUrl: DATABASE_URL,
          durationMs: 3000,
          connections: 4,
          only: ['calls'],
          scenariosDir: dir,
          isolate: false,
          interleave: 3,
        });
        expect(report.failed).toEqual([]);
        expect(report.interleave).toBe(3);
        const s = report.scenarios[0]!;
        expect(s.interleaved).toEqual({ slices: 3 });
        expect(s.bracket).toBeUndefined();
        expect(s.baselineFigures).not.toBe(report.baselines['node-http']);
        expect(s.baselineFigures.total).toBeGreaterThan(0);
        expect(s.throughputRatio).toBeCloseTo(s.reqPerSec / s.baselineFigures.reqPerSec, 2);
        const calls = (globalThis as Record<string, unknown>).__benchCalls as number[];
        expect(s.total).toBe(calls.length);
        const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
        // Two 1-s baseline slices between the bursts; none inside them.
        expect(gaps.filter((g) => g > 500)).toHaveLength(1);
        expect(Math.max(...gaps)).toBeGreaterThan(1500);
      },
    );
  });

  it('interleaved in a process of its own, as make bench runs it', async () => {
    const report = await runBench({
      databaseUrl: DATABASE_URL,
      durationMs: 2000,
      connections: 8,
      only: ['express-json'],
      interleave: 2,
    });
    expect(report.failed).toEqual([]);
    const s = report.scenarios[0]!;
    expect(s.interleaved).toEqual({ slices: 2 });
    expect(s.total).toBeGreaterThan(0);
    expect(s.failures).toBe(0);
    expect(s.baselineFigures.total).toBeGreaterThan(0);
    expect(s.baselineFigures.failures).toBe(0);
    expect(s.throughputRatio).toBeCloseTo(s.reqPerSec / s.baselineFigures.reqPerSec, 2);
  });

  it('refuses slices shorter than a second', async () => {
    const report = await runBench({
      databaseUrl: DATABASE_URL,
      durationMs: 1000,
      connections: 2,
      only: ['express-json'],
      isolate: false,
      interleave: 2,
    });
    expect(report.failed).toEqual([{ name: 'express-json', error: 'interleaving 1000 ms in 2 slices: each slice must be at least 1 s' }]);
  });

  it('rejects an unknown BENCH_ONLY name before measuring anything', async () => {
    await expect(runBench({ databaseUrl: 'postgresql://x@127.0.0.1:1/x', durationMs: 1000, connections: 1, only: ['nope'] })).rejects.toThrow(
      /unknown scenario\(s\) in BENCH_ONLY: nope/,
    );
  });
});
