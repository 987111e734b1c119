// Each measurement in a process of its own (`make bench`'s BENCH_ISOLATE, default on).
// Scenarios used to run one after another in the benchmark's process, so each inherited
// the heap, JIT state and open handles of those before it: the wake-up scenario's first
// client took 13 ms after the boxes and registry scenarios had seeded and served tens of
// thousands of rows in that process, 6-7 ms when run alone. A service runs in a process of
// its own; so does each measurement now, with the same flags and environment.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { Figures } from './measure';
import type { BaselineName, ScenarioContext } from './scenario';

export interface IsolatedRun {
  /** `paired`: the scenario and its baseline in alternating slices (run.ts, runPaired). */
  readonly kind: 'baseline' | 'scenario' | 'paired';
  readonly name: BaselineName | string;
  readonly scenariosDir?: string;
  readonly ctx: Omit<ScenarioContext, 'log'>;
  /** Slices of each (paired only). */
  readonly slices?: number;
}

export type ChildMessage = { log: string } | { figures: Figures; baseline?: Figures } | { error: string };

const CHILD = join(__dirname, 'run-one.ts');

/**
 * node flags for the child: the parent's, plus the TypeScript loader when it has none (jest),
 * plus BENCH_CHILD_NODE_ARGS (space-separated; e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` to
 * profile the measured process, which NODE_OPTIONS does not allow).
 */
function childExecArgv(): string[] {
  const inherited = process.execArgv.filter((a) => !a.startsWith('--inspect'));
  const extra = (process.env['BENCH_CHILD_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  return [...(inherited.some((a) => a.includes('tsx')) ? inherited : [...inherited, '--import', 'tsx']), ...extra];
}

export function runIsolated(run: IsolatedRun, log: (message: string) => void): Promise<Figures> {
  return runChild(run, log).then((r) => r.figures);
}

/** A paired run in a process of its own: the scenario's figures and its baseline's. */
export async function runIsolatedPaired(run: IsolatedRun & { kind: 'paired' }, log: (message: string) => void): Promise<{ figures: Figures; baseline: Figures }> {
  const r = await runChild(run, log);
  if (!r.baseline) throw new Error(`paired ${run.name}: no baseline figures from its process`);
  return { figures: r.figures, baseline: r.baseline };
}

function runChild(run: IsolatedRun, log: (message: string) => void): Promise<{ figures: Figures; baseline?: Figures }> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [JSON.stringify(run)], {
      execArgv: childExecArgv(),
      env: { ...process.env, BENCH_PARENT_PID: String(process.pid) },
      // stdout carries the services' own log lines (serviceLogger): read and dropped here, as
      // a log collector or `make dev` reads them; progress comes over IPC.
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child.stdout?.resume();
    let outcome: { figures: Figures; baseline?: Figures } | { error: string } | undefined;
    child.on('message', (m: ChildMessage) => {
      if ('log' in m) log(m.log);
      else outcome = m;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (outcome && 'figures' in outcome) resolve(outcome);
      else if (outcome) reject(new Error(outcome.error));
      else reject(new Error(`${run.kind} ${run.name}: its process ended (${signal ?? `exit ${code}`}) without a result`));
    });
  });
}
