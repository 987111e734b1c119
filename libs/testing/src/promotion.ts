// How tests show that short-lived objects die young in V8 (libs/http-kit/src/slot-set.ts says
// why it matters): a fixture program measures the old generation's growth per unit of work
// in a child process of its own (V8 flags, a heap of its own), and the test reads the figure.
//
// The measurement: a full collection first (which moves what the program keeps to the old
// generation, as in any running server), then the work, then two scavenges (the second
// promotes whatever survived the first), and the growth of old space divided by the units
// of work. A large initial old space keeps V8 from starting a full collection meanwhile,
// which would hide the promoted bytes again.
import { execFile } from 'node:child_process';
import { getHeapSpaceStatistics } from 'node:v8';

/** Node flags runPromotionFixture starts fixtures with. */
export const PROMOTION_NODE_FLAGS: readonly string[] = ['--expose-gc', '--initial-old-space-size=256'];

type Gc = (options?: { type: 'minor' | 'major' }) => void;

/** Bytes of old-generation growth per unit of `run`'s work (inside a fixture: needs --expose-gc). */
export async function oldGenerationGrowthPer(units: number, run: () => Promise<void> | void): Promise<number> {
  const gc = (globalThis as unknown as { gc?: Gc }).gc;
  if (!gc) throw new Error('oldGenerationGrowthPer: run node with --expose-gc');
  const oldSpaceUsed = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;
  gc();
  const before = oldSpaceUsed();
  await run();
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  return Math.round((oldSpaceUsed() - before) / units);
}

/**
 * Runs `fixture` (a TypeScript program, through tsx) with PROMOTION_NODE_FLAGS and `args`
 * in `cwd`, and returns the JSON object it printed on stdout.
 */
export function runPromotionFixture(fixture: string, args: readonly string[], cwd: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...PROMOTION_NODE_FLAGS, '--import', 'tsx', fixture, ...args], { cwd, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Record<string, unknown>),
    );
  });
}
