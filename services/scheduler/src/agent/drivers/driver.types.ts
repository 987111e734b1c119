// The task driver contract of the client agent (issue 26 item 4): a driver starts a task
// and gives back a handle whose state is persisted, so a restarted agent re-attaches to
// a task instead of starting it again (Driver.recover).
import type { LogLimits } from './log-rotator';

export interface TaskSpec {
  name: string;
  driver: string;
  config: Record<string, unknown>;
  env: Record<string, string>;
  killSignal: string;
  killTimeoutMs: number;
  logs: LogLimits;
}

export interface TaskContext {
  allocId: string;
  /** the allocation directory (shared `alloc/`, task directories) */
  allocDir: string;
  /** the task's working directory */
  taskDir: string;
  /** `alloc/logs` */
  logDir: string;
}

export interface ExitResult {
  exitCode: number;
  /** signal number that ended the task (0 = none) */
  signal: number;
  /** driver-reported failure text ('' = none) */
  err: string;
}

export interface TaskUsage {
  rssBytes: number;
  cpuTotalTicks: number;
  pids: number[];
}

export interface TaskHandle {
  /** what Driver.recover needs after an agent restart (JSON) */
  readonly persisted: Record<string, unknown>;
  wait(): Promise<ExitResult>;
  /** Sends `signal`; after `timeoutMs` without an exit, forces the task down. */
  kill(signal: string, timeoutMs: number): Promise<ExitResult>;
  usage(): TaskUsage;
}

/** A start failure; `recoverable` ones go through the restart policy (the anchor's
 * structs.NewRecoverableError). */
export class DriverStartError extends Error {
  constructor(
    message: string,
    readonly recoverable: boolean,
  ) {
    super(message);
  }
}

export interface Driver {
  readonly name: string;
  start(spec: TaskSpec, ctx: TaskContext): Promise<TaskHandle>;
  /** Re-attaches to a task started before an agent restart; null when it cannot. */
  recover(persisted: Record<string, unknown>, spec: TaskSpec, ctx: TaskContext): TaskHandle | null;
}

export const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGUSR1: 10, SIGUSR2: 12, SIGTERM: 15 };

/** `SIGTERM`, `TERM`, `sigterm` -> `SIGTERM`; undefined for an unknown signal. */
export function normaliseSignal(s: string): NodeJS.Signals | undefined {
  const up = s.trim().toUpperCase();
  const name = up.startsWith('SIG') ? up : `SIG${up}`;
  return name in SIGNALS ? (name as NodeJS.Signals) : undefined;
}
