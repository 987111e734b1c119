import http from 'node:http';
import { measureFunction, measureHttp, percentile } from './measure';
import { bracketMean, combineSlices, describePostgres, discoverScenarios, formatReport, p99Resolution, pairedOrder, ratios, type BenchReport } from './run';

describe('bench statistics', () => {
  it('nearest-rank percentiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('ratios compare throughput and p99 to the baseline', () => {
    const base = { reqPerSec: 1000, p50Ms: 1, p99Ms: 4, total: 1, failures: 0 };
    expect(ratios({ ...base, reqPerSec: 250, p99Ms: 10 }, base)).toEqual({ throughputRatio: 0.25, p99Ratio: 2.5 });
    // A 0 ms p99 (autocannon reports whole ms) counts as its 1 ms resolution: no division by
    // zero, and no 3000x for a 3 ms p99 against a baseline's sub-millisecond one.
    expect(ratios({ ...base, p99Ms: 0 }, { ...base, p99Ms: 0 }).p99Ratio).toBe(1);
    expect(ratios({ ...base, p99Ms: 3 }, { ...base, p99Ms: 0 }).p99Ratio).toBe(3);
    expect(ratios({ ...base, p99Ms: 0.4 }, { ...base, p99Ms: 2 }).p99Ratio).toBe(0.5);
    // wrk measures microseconds: a 0.4 ms p99 against 0.2 ms is 2x.
    expect(ratios({ ...base, p99Ms: 0.4 }, { ...base, p99Ms: 0.2 }, p99Resolution('wrk')).p99Ratio).toBe(2);
    // CPU per request, where measured: the baseline's over the scenario's.
    expect(ratios({ ...base, cpuUsPerRequest: 100 }, { ...base, cpuUsPerRequest: 20 }).cpuRatio).toBe(0.2);
    expect(ratios(base, base).cpuRatio).toBeUndefined();
  });

  it('a closed-loop function run counts operations, latency and failures', async () => {
    let calls = 0;
    const figures = await measureFunction(
      async () => {
        const n = ++calls;
        await new Promise((r) => setTimeout(r, 5));
        if (n % 10 === 0) throw new Error('every tenth fails');
      },
      { durationMs: 300, concurrency: 4 },
    );
    expect(figures.total + figures.failures).toBe(calls);
    expect(figures.failures).toBe(Math.floor(calls / 10));
    expect(figures.p50Ms).toBeGreaterThanOrEqual(4);
    // 4 workers, each call at least 5 ms: at most 800 successful operations per second;
    // the lower bound is loose because shared CI machines stretch timers.
    expect(figures.reqPerSec).toBeLessThanOrEqual(800);
    expect(figures.reqPerSec).toBeGreaterThan(20);
  });
});

describe('measureHttp', () => {
  it.each(['thread', 'inline'] as const)('sends a random key per request when the spec has keys (client %s)', async (client) => {
    const seen = new Map<string, number>();
    const server = http.createServer((req, res) => {
      seen.set(req.url ?? '', (seen.get(req.url ?? '') ?? 0) + 1);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      // Enough draws for the spread to mean something, however slow the machine: rounds of
      // one second until 300 requests were served (a count, not a speed).
      const served = () => [...seen.values()].reduce((a, b) => a + b, 0);
      for (let round = 0; round < 30 && served() < 300; round++) {
        const figures = await measureHttp(
          { kind: 'http', url, requests: [{ method: 'GET', path: '/k-{key}/x{key}', keys: 3 }] },
          { durationMs: 1000, connections: 2, client },
        );
        expect(figures.failures).toBe(0);
      }
      // Every placeholder replaced by the same key; all three keys drawn, roughly evenly.
      expect([...seen.keys()].sort()).toEqual(['/k-0/x0', '/k-1/x1', '/k-2/x2']);
      const total = served();
      expect(total).toBeGreaterThanOrEqual(300);
      for (const c of seen.values()) expect(c / total).toBeGreaterThan(0.2);
    } finally {
      server.close();
    }
  }, 60_000);

  it('a warm-up sends the same load first and leaves it out of the figures', async () => {
    let served = 0;
    const server = http.createServer((_req, res) => {
      served++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const figures = await measureHttp({ kind: 'http', url }, { durationMs: 1000, connections: 2, warmupMs: 1000 });
      expect(figures.failures).toBe(0);
      // The warm-up's requests reached the server but not the figures (how many depends on
      // the machine's speed in each second, so no ratio is asserted).
      expect(figures.total).toBeGreaterThan(0);
      expect(served).toBeGreaterThan(figures.total);
    } finally {
      server.close();
    }
  });

  it.each([
    ['thread', 4, 5],
    ['inline', 8, 9],
  ] as const)('client %s: the server\'s event loop holds %i to %i TCP sockets for 4 connections', async (client, min, max) => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const counts: number[] = [];
    const sample = setInterval(() => counts.push(process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length), 100);
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const figures = await measureHttp({ kind: 'http', url }, { durationMs: 1000, connections: 4, client });
      expect(figures.failures).toBe(0);
      expect(figures.total).toBeGreaterThan(0);
      // Thread: the 4 accepted sockets (plus the listening one); the client's 4 live in the
      // worker. Inline: both ends of each connection are on this loop.
      expect(counts.length).toBeGreaterThan(3);
      expect(Math.max(...counts)).toBeLessThanOrEqual(max);
      expect(Math.max(...counts)).toBeGreaterThanOrEqual(min);
    } finally {
      clearInterval(sample);
      server.close();
    }
  });
});

describe('bench scenarios', () => {
  it('discovers *.scenario.ts files with valid scenarios', async () => {
    const scenarios = await discoverScenarios();
    expect(scenarios.map((s) => s.name)).toContain('express-json');
    for (const s of scenarios) expect(['node-http', 'pg-point-read']).toContain(s.baseline);
  });

  it('estimates the baseline during a scenario as the mean of the measurements on either side', () => {
    const before = { reqPerSec: 40_000, p50Ms: 1, p99Ms: 2, total: 200_000, failures: 0 };
    const after = { reqPerSec: 20_000, p50Ms: 2, p99Ms: 6, total: 100_000, failures: 1 };
    expect(bracketMean(before, after)).toEqual({ reqPerSec: 30_000, p50Ms: 1.5, p99Ms: 4, total: 300_000, failures: 1 });
    // CPU per request (wrk runs) weighted by the requests each side answered.
    expect(bracketMean({ ...before, cpuUsPerRequest: 10 }, { ...after, cpuUsPerRequest: 40 }).cpuUsPerRequest).toBe(20);
  });

  it('formats a report table', () => {
    const f = { reqPerSec: 1000, p50Ms: 1, p99Ms: 3, total: 5000, failures: 0, cpuUsPerRequest: 48.4 };
    const report: BenchReport = {
      startedAt: 't',
      node: 'v20',
      cpus: 2,
      durationMs: 5000,
      connections: 32,
      client: 'wrk',
      logLevel: 'info',
      warmupMs: 1000,
      isolated: true,
      interleave: 0,
      postgres: { server_version: '15.19', autovacuum: 'on', fsync: 'on', synchronous_commit: 'on', shared_buffers: '128MB' },
      baselines: { 'node-http': f, 'pg-point-read': { ...f, reqPerSec: 500 } },
      scenarios: [
        { name: 'x', description: 'd', baseline: 'node-http', baselineFigures: { ...f, reqPerSec: 990 }, ...f, reqPerSec: 250, failures: 2, throughputRatio: 0.25, p99Ratio: 1, cpuRatio: 0.2 },
        {
          name: 'z',
          description: 'd',
          baseline: 'node-http',
          baselineFigures: { ...f, reqPerSec: 800 },
          bracket: { before: { ...f, reqPerSec: 1000 }, after: { ...f, reqPerSec: 600 } },
          ...f,
          reqPerSec: 400,
          throughputRatio: 0.5,
          p99Ratio: 1,
        },
        { name: 'w', description: 'd', baseline: 'node-http', baselineFigures: { ...f, reqPerSec: 700 }, interleaved: { slices: 4 }, ...f, reqPerSec: 70, throughputRatio: 0.1, p99Ratio: 1 },
      ],
      failed: [{ name: 'y', error: 'boom' }],
    };
    const lines = formatReport(report).split('\n');
    expect(lines[0]).toMatch(/^scenario\s+vs\s+req\/s\s+p50 ms\s+p99 ms\s+cpu us\/req\s+x req\/s\s+x p99\s+x cpu\s+errors\s+baseline req\/s \/ p99 ms\s+before \/ after req\/s$/);
    expect(lines[2]).toMatch(/^node-http\s+\(baseline\)\s+1000\s+1\.00\s+3\.00\s+48\s+1\.000\s+1\.000\s+1\.000\s+0$/);
    expect(lines[4]).toMatch(/^x\s+node-http\s+250\s+1\.00\s+3\.00\s+48\s+0\.250\s+1\.000\s+0\.200\s+2\s+990 \/ 3\.00\s*$/);
    expect(lines[5]).toMatch(/^z\s+node-http\s+400\s+1\.00\s+3\.00\s+48\s+0\.500\s+1\.000\s+0\s+800 \/ 3\.00\s+1000 \/ 600$/);
    expect(lines[6]).toMatch(/^w\s+node-http\s+70\s+1\.00\s+3\.00\s+48\s+0\.100\s+1\.000\s+0\s+700 \/ 3\.00\s+interleaved, 4 slices$/);
    expect(lines[7]).toMatch(/^y\s+FAILED\s+boom/);
  });

  it('describes the bench PostgreSQL, and says when its settings are not as deployed', () => {
    const deployed = { server_version: '15.19 (Debian 15.19-0+deb12u1)', autovacuum: 'on', fsync: 'on', synchronous_commit: 'on', shared_buffers: '128MB' };
    expect(describePostgres(deployed)).toEqual(['PostgreSQL 15.19 (Debian 15.19-0+deb12u1), autovacuum=on, fsync=on, synchronous_commit=on, shared_buffers=128MB']);
    const ci = describePostgres({ ...deployed, autovacuum: 'off' });
    expect(ci).toHaveLength(2);
    expect(ci[0]).toContain('autovacuum=off');
    expect(ci[1]).toMatch(/^autovacuum is off on this PostgreSQL: scenarios that write keep every dead row version/);
    expect(describePostgres({ ...deployed, synchronous_commit: 'off' })[1]).toMatch(/do not wait for their WAL flush/);
    expect(describePostgres({ ...deployed, fsync: 'off' })[1]).toMatch(/do not wait for their WAL flush/);
    // synchronous_commit=local or remote_write still flushes locally.
    expect(describePostgres({ ...deployed, synchronous_commit: 'local' })).toHaveLength(1);
  });

  it('combines slices of one target: mean rates and percentiles, summed counts', () => {
    const a = { reqPerSec: 30_000, p50Ms: 1, p99Ms: 4, total: 60_000, failures: 0 };
    const b = { reqPerSec: 10_000, p50Ms: 3, p99Ms: 8, total: 20_000, failures: 2 };
    expect(combineSlices([a, b])).toEqual({ reqPerSec: 20_000, p50Ms: 2, p99Ms: 6, total: 80_000, failures: 2 });
    expect(combineSlices([a])).toEqual(a);
    expect(() => combineSlices([])).toThrow('no slices');
  });

  it('alternates baseline and scenario slices so that a steady drift weighs on both alike', () => {
    expect(pairedOrder(1)).toEqual(['baseline', 'scenario']);
    expect(pairedOrder(4)).toEqual(['baseline', 'scenario', 'scenario', 'baseline', 'baseline', 'scenario', 'scenario', 'baseline']);
  });
});
