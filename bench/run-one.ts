// The child side of bench/isolate.ts: measures one baseline or scenario (or a scenario and
// its baseline in alternating slices) in this process, relays its log lines and sends the
// figures (or the error) to the parent over IPC.
import { BASELINES } from './baselines';
import type { ChildMessage, IsolatedRun } from './isolate';
import { discoverScenarios, runOne, runPaired } from './run';
import type { BaselineName } from './scenario';

async function main(): Promise<ChildMessage> {
  const run = JSON.parse(process.argv[2] ?? '') as IsolatedRun;
  const log = (message: string) => process.send?.({ log: message } satisfies ChildMessage);
  const scenario =
    run.kind === 'baseline' ? BASELINES[run.name as BaselineName] : (await discoverScenarios(run.scenariosDir)).find((s) => s.name === run.name);
  if (!scenario) throw new Error(`no ${run.kind} named ${run.name}`);
  if (run.kind === 'paired') return runPaired(scenario, { ...run.ctx, log }, run.slices ?? 1);
  return { figures: await runOne(scenario, { ...run.ctx, log }) };
}

main().then(
  (message) => process.send?.(message, () => process.exit(0)),
  (err: unknown) => process.send?.({ error: err instanceof Error ? err.message : String(err) } satisfies ChildMessage, () => process.exit(1)),
);
