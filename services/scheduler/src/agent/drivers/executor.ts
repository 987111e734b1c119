// The raw_exec executor (the anchor's executor process): started detached by the agent
// with the path of a spec file, it runs the task's command in the task directory, copies
// stdout/stderr into rotating log files, forwards the signals it gets to the task, and
// writes the exit status to a file when the task ends. Because it outlives the agent, a
// task keeps running (and logging) across an agent restart, and the restarted agent reads
// the exit status instead of starting the task again.
import { spawn } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { LogRotator, type LogLimits } from './log-rotator';

export interface ExecutorSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  logDir: string;
  task: string;
  logs: LogLimits;
  /** {pid} of the task, written once it started */
  pidFile: string;
  /** {exitCode, signal, err}, written when it ended */
  exitFile: string;
}

function writeAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGUSR1: 10, SIGUSR2: 12, SIGTERM: 15 };

export function runExecutor(specPath: string): void {
  const spec = JSON.parse(readFileSync(specPath, 'utf8')) as ExecutorSpec;
  const out = new LogRotator(spec.logDir, `${spec.task}.stdout`, spec.logs);
  const err = new LogRotator(spec.logDir, `${spec.task}.stderr`, spec.logs);
  const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => out.write(d));
  child.stderr.on('data', (d: Buffer) => err.write(d));
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'] as const) {
    process.on(sig, () => {
      child.kill(sig);
    });
  }
  child.once('spawn', () => writeAtomic(spec.pidFile, { pid: child.pid }));
  child.once('error', (e) => {
    writeAtomic(spec.exitFile, { exitCode: -1, signal: 0, err: e.message });
    process.exit(1);
  });
  child.once('close', (code, signal) => {
    out.close();
    err.close();
    writeAtomic(spec.exitFile, { exitCode: code ?? -1, signal: signal ? (SIGNAL_NUMBERS[signal] ?? 0) : 0, err: '' });
    process.exit(0);
  });
}
