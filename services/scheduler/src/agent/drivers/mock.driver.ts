// The anchor's mock task driver (drivers/mock): a task that "runs" for `run_for` and exits
// with `exit_code` / `exit_signal` / `exit_err_msg`; `start_error` (with
// `start_error_recoverable`) fails the start, `start_block_for` delays it; `kill_after`
// is how long it takes to stop after a kill signal; `stdout_string` is written to stdout,
// `stdout_repeat` times every `stdout_repeat_duration`. `run_for` 0 = until killed.
// Its state (when it started) is persisted, so after an agent restart it finishes at the
// same moment it would have, and a task that ended while the agent was down is reported
// as exited, never run again.
import { parseDuration } from '@selfstack/config';
import { LogRotator } from './log-rotator';
import { DriverStartError, type Driver, type ExitResult, type TaskContext, type TaskHandle, type TaskSpec } from './driver.types';

function dur(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v === 'number') return v / 1e6; // nanoseconds, as the API carries durations
  try {
    return parseDuration(String(v));
  } catch {
    throw new DriverStartError(`failed to parse ${field}: ${JSON.stringify(v)}`, false);
  }
}

interface MockState {
  startedAtMs: number;
  runForMs: number;
  exitCode: number;
  exitSignal: number;
  exitErr: string;
  killAfterMs: number;
}

function handleFor(st: MockState, spec: TaskSpec, ctx: TaskContext, fresh: boolean): TaskHandle {
  let settle: (r: ExitResult) => void = () => undefined;
  const done = new Promise<ExitResult>((r) => (settle = r));
  let finished = false;
  const finish = (r: ExitResult) => {
    if (finished) return;
    finished = true;
    clearTimeout(runTimer);
    clearInterval(stdoutTimer);
    settle(r);
  };
  const natural = (): ExitResult => ({ exitCode: st.exitCode, signal: st.exitSignal, err: st.exitErr });
  const remaining = st.runForMs - (Date.now() - st.startedAtMs);
  let runTimer: NodeJS.Timeout | undefined;
  if (st.runForMs > 0) runTimer = setTimeout(() => finish(natural()), Math.max(0, remaining));

  let stdoutTimer: NodeJS.Timeout | undefined;
  const text = typeof spec.config['stdout_string'] === 'string' ? spec.config['stdout_string'] : '';
  if (fresh && text !== '') {
    const out = new LogRotator(ctx.logDir, `${spec.name}.stdout`, spec.logs);
    out.write(Buffer.from(text));
    let repeats = Number(spec.config['stdout_repeat'] ?? 0) || 0;
    const every = dur(spec.config['stdout_repeat_duration'], 'stdout_repeat_duration');
    if (repeats > 0 && every > 0) {
      stdoutTimer = setInterval(() => {
        out.write(Buffer.from(text));
        if (--repeats <= 0) clearInterval(stdoutTimer);
      }, every);
    }
  }
  return {
    persisted: { ...st },
    wait: () => done,
    async kill(): Promise<ExitResult> {
      if (!finished) {
        if (st.killAfterMs > 0) await new Promise((r) => setTimeout(r, st.killAfterMs));
        finish({ exitCode: 0, signal: 0, err: '' });
      }
      return done;
    },
    usage: () => ({ rssBytes: 0, cpuTotalTicks: 0, pids: [] }),
  };
}

export function createMockDriver(name = 'mock_driver'): Driver {
  return {
    name,
    async start(spec, ctx) {
      const c = spec.config;
      const blockFor = dur(c['start_block_for'], 'start_block_for');
      if (blockFor > 0) await new Promise((r) => setTimeout(r, blockFor));
      if (typeof c['start_error'] === 'string' && c['start_error'] !== '') {
        throw new DriverStartError(c['start_error'], c['start_error_recoverable'] === true);
      }
      const st: MockState = {
        startedAtMs: Date.now(),
        runForMs: dur(c['run_for'], 'run_for'),
        exitCode: Number(c['exit_code'] ?? 0) || 0,
        exitSignal: Number(c['exit_signal'] ?? 0) || 0,
        exitErr: typeof c['exit_err_msg'] === 'string' ? c['exit_err_msg'] : '',
        killAfterMs: dur(c['kill_after'], 'kill_after'),
      };
      return handleFor(st, spec, ctx, true);
    },
    recover(persisted, spec, ctx) {
      if (typeof persisted['startedAtMs'] !== 'number') return null;
      return handleFor(persisted as unknown as MockState, spec, ctx, false);
    },
  };
}
