// CPU profile of one HTTP scenario's server during its load only (not its setup): sets the
// scenario up in this process, warms it up, then records a V8 CPU profile while `wrk -t1
// -c32` (its own process) loads it, and prints the figures, the CPU per request and where
// to find the profile. Summarise with `npx tsx bench/profile-summary.ts DIR 50`.
//
//   npx tsx bench/profile-scenario.ts SCENARIO [SECONDS] [DIR]
//   (stdout carries the service's request log: redirect it, e.g. > /dev/null)
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import type { Scenario } from './scenario';
import { runWrk } from './wrk';

async function findScenario(name: string): Promise<Scenario> {
  const dir = join(__dirname, 'scenarios');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.scenario.ts'))) {
    const mod = (await import(join(dir, f))) as { scenarios?: Scenario[] };
    const s = mod.scenarios?.find((x) => x.name === name);
    if (s) return s;
  }
  throw new Error(`no scenario named ${name} in bench/scenarios/*.scenario.ts`);
}

async function main(): Promise<void> {
  const [name, secondsArg, dirArg] = process.argv.slice(2);
  if (!name) throw new Error('usage: npx tsx bench/profile-scenario.ts SCENARIO [SECONDS] [DIR]');
  const seconds = Number(secondsArg ?? '8');
  const out = resolve(dirArg ?? `bench/.scratch/profile-${name}`);
  mkdirSync(out, { recursive: true });
  const scenario = await findScenario(name);
  const log = (m: string) => process.stderr.write(`profile: ${m}\n`);
  const instance = await scenario.setup({
    databaseUrl: process.env['DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    durationMs: seconds * 1000,
    connections: 32,
    logLevel: (process.env['BENCH_LOG_LEVEL'] as 'info' | 'warn' | undefined) ?? 'info',
    log,
  });
  try {
    const target = instance.target;
    if (target.kind !== 'http') throw new Error(`${name} is not an HTTP scenario`);
    const load = (s: number) => runWrk({ url: target.url, ...(target.requests ? { requests: target.requests } : {}), connections: 32, durationMs: s * 1000 });
    await load(2); // warm-up
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    const cpu0 = process.cpuUsage();
    const figures = await load(seconds);
    const cpu = process.cpuUsage(cpu0);
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    const file = join(out, `${name}-${Date.now()}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    const rps = figures.requests / (figures.durationUs / 1e6);
    log(`${figures.requests} requests, ${rps.toFixed(0)} req/s, p50 ${(figures.p50Us / 1000).toFixed(2)} ms, p99 ${(figures.p99Us / 1000).toFixed(2)} ms`);
    log(`server CPU ${(((cpu.user + cpu.system) / figures.requests)).toFixed(0)} µs per request (user ${(cpu.user / figures.requests).toFixed(0)}, system ${(cpu.system / figures.requests).toFixed(0)})`);
    log(`profile: ${file}`);
  } finally {
    await instance.teardown();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
