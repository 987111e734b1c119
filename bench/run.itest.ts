// One short `make bench` run: both baselines and a scenario measured in the same run,
// against the real PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBench } from './run';

/** One short run of `express-json` against the real PostgreSQL. */
const runExpress = (adjacentBaselines?: boolean) =>
  runBench({
    databaseUrl: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    durationMs: 1000,
    connections: 8,
    only: ['express-json'],
    ...(adjacentBaselines === undefined ? {} : { adjacentBaselines }),
  });

describe('bench/run.ts', () => {
  it('measures the baselines and reports a scenario as ratios to its baseline', async () => {
    const report = await runExpress();
    expect(report.failed).toEqual([]);
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
    const dir = mkdtempSync(join(tmpdir(), 'bench-isolate-'));
    writeFileSync(
      join(dir, 'where.scenario.ts'),
      `export const scenarios = [{
        name: 'where',
        description: 'reports whether it runs in the benchmark process',
        baseline: 'node-http',
        async setup() {
          const inParent = String(process.pid) === process.env.BENCH_PARENT_PID || process.env.BENCH_PARENT_PID === undefined;
          return { target: { kind: 'function', concurrency: 1, run: async () => { if (inParent) throw new Error('in the parent'); } }, teardown: async () => undefined };
        },
      }];\n`,
    );
    try {
      const base = { databaseUrl: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', durationMs: 1000, connections: 2, only: ['where'], scenariosDir: dir, adjacentBaselines: false };
      const isolated = await runBench(base);
      expect(isolated.failed).toEqual([]);
      expect(isolated.isolated).toBe(true);
      expect(isolated.scenarios[0]?.failures).toBe(0);
      expect(isolated.scenarios[0]?.total).toBeGreaterThan(0);
      const inline = await runBench({ ...base, isolate: false });
      expect(inline.isolated).toBe(false);
      expect(inline.scenarios[0]?.total).toBe(0);
      expect(inline.scenarios[0]?.failures).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a scenario that fails in its process is reported as failed, the run goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-isolate-'));
    writeFileSync(
      join(dir, 'broken.scenario.ts'),
      `export const scenarios = [{ name: 'broken', description: 'setup throws', baseline: 'node-http', async setup() { throw new Error('seed failed'); } }];\n`,
    );
    try {
      const report = await runBench({
        databaseUrl: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
        durationMs: 1000,
        connections: 2,
        only: ['broken'],
        scenariosDir: dir,
        adjacentBaselines: false,
      });
      expect(report.failed).toEqual([{ name: 'broken', error: 'seed failed' }]);
      expect(report.baselines['node-http'].total).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects an unknown BENCH_ONLY name before measuring anything', async () => {
    await expect(runBench({ databaseUrl: 'postgresql://x@127.0.0.1:1/x', durationMs: 1000, connections: 1, only: ['nope'] })).rejects.toThrow(
      /unknown scenario\(s\) in BENCH_ONLY: nope/,
    );
  });
});
