// One short `make bench` run: both baselines and a scenario measured in the same run,
// against the real PostgreSQL.
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
    // Ratios come from the baseline measured again right before the scenario.
    expect(s.baselineFigures.total).toBeGreaterThan(0);
    expect(s.baselineFigures).not.toBe(report.baselines['node-http']);
    expect(s.throughputRatio).toBeCloseTo(s.reqPerSec / s.baselineFigures.reqPerSec, 2);
    expect(Number.isFinite(s.p99Ratio)).toBe(true);
  });

  it('with adjacent baselines off, uses the run\'s first baseline', async () => {
    const report = await runExpress(false);
    const s = report.scenarios[0]!;
    expect(s.baselineFigures).toBe(report.baselines['node-http']);
    expect(s.throughputRatio).toBeCloseTo(s.reqPerSec / report.baselines['node-http'].reqPerSec, 2);
  });

  it('rejects an unknown BENCH_ONLY name before measuring anything', async () => {
    await expect(runBench({ databaseUrl: 'postgresql://x@127.0.0.1:1/x', durationMs: 1000, connections: 1, only: ['nope'] })).rejects.toThrow(
      /unknown scenario\(s\) in BENCH_ONLY: nope/,
    );
  });
});
