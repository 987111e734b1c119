// raw_exec (issue 26 item 4): real child processes, not isolated (as the anchor's
// raw_exec). `command` and `args` run in the task directory with the task's `env` plus the
// anchor's NOMAD_* variables; an executor process (./executor.ts) owns the child, its
// rotating log files and its exit status, so tasks survive an agent restart and are
// re-attached, never started twice. Stop: the task's kill_signal (default SIGTERM), then
// SIGKILL to the whole process group after kill_timeout. The task's working directory,
// HOME and TMPDIR are its task directory; with a confinement root configured (the dev
// setup's `.data/`), the agent refuses to start unless its allocation directory is inside
// it (agent-config.ts), so everything raw_exec tasks are given to write stays there.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { DriverStartError, normaliseSignal, type Driver, type ExitResult, type TaskContext, type TaskHandle, type TaskSpec, type TaskUsage } from './driver.types';
import type { ExecutorSpec } from './executor';

export interface RawExecOptions {
  /** PATH given to tasks */
  path: string;
  /** where executor specs (with the task's environment) and statuses live: the agent's
   * state directory, not the allocation directory the fs endpoints serve */
  stateDir: string;
  /** how to start an executor: [program, ...args] before the spec path */
  executorCommand: string[];
}

interface RawState {
  pid: number;
  /** /proc start time of the executor: a recycled pid is not our task */
  startTicks: string;
  pidFile: string;
  exitFile: string;
}

function procStartTicks(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime), counted after the parenthesised command name.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

function alive(pid: number, startTicks: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const now = procStartTicks(pid);
  return startTicks === '' || now === '' || now === startTicks;
}

function readJson(path: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function treeUsage(rootPid: number): TaskUsage {
  // The executor and its child: resident memory and CPU ticks from /proc.
  const pids = [rootPid];
  try {
    const children = readFileSync(`/proc/${rootPid}/task/${rootPid}/children`, 'utf8').trim();
    for (const c of children.split(/\s+/).filter(Boolean)) pids.push(Number(c));
  } catch {
    // no children file (not Linux, or gone)
  }
  let rss = 0;
  let ticks = 0;
  const page = 4096;
  for (const pid of pids.slice(1)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11] ?? 0) + Number(f[12] ?? 0);
      rss += Number(f[21] ?? 0) * page;
    } catch {
      // exited meanwhile
    }
  }
  return { rssBytes: rss, cpuTotalTicks: ticks, pids: pids.slice(1) };
}

function handleFor(st: RawState, signalDefault: NodeJS.Signals): TaskHandle {
  let result: ExitResult | null = null;
  let forced: ExitResult | null = null;
  const done = new Promise<ExitResult>((resolveDone) => {
    const poll = setInterval(() => {
      const exit = readJson(st.exitFile);
      if (exit) {
        clearInterval(poll);
        result = { exitCode: Number(exit['exitCode'] ?? -1), signal: Number(exit['signal'] ?? 0), err: String(exit['err'] ?? '') };
        resolveDone(result);
        return;
      }
      if (!alive(st.pid, st.startTicks)) {
        clearInterval(poll);
        // The executor died without a status: it was killed with its task (SIGKILL).
        result = forced ?? { exitCode: 137, signal: 9, err: '' };
        resolveDone(result);
      }
    }, 100);
  });
  const childPid = (): number | undefined => {
    const p = readJson(st.pidFile);
    return typeof p?.['pid'] === 'number' ? p['pid'] : undefined;
  };
  return {
    persisted: { ...st },
    wait: () => done,
    async kill(signal: string, timeoutMs: number): Promise<ExitResult> {
      if (result) return result;
      const sig = normaliseSignal(signal) ?? signalDefault;
      // Only the executor this handle started (same pid and start time): a pid the kernel
      // has since given to another process is never signalled.
      const ours = () => alive(st.pid, st.startTicks);
      try {
        // The executor forwards it to the task.
        if (ours()) process.kill(st.pid, sig);
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        forced = { exitCode: 137, signal: 9, err: '' };
        if (!ours()) return;
        for (const target of [childPid(), -st.pid]) {
          if (target === undefined) continue;
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }, timeoutMs);
      const r = await done;
      clearTimeout(timer);
      return r;
    },
    usage: () => treeUsage(st.pid),
  };
}

export function createRawExecDriver(opts: RawExecOptions): Driver {
  return {
    name: 'raw_exec',
    async start(spec: TaskSpec, ctx: TaskContext): Promise<TaskHandle> {
      const command = spec.config['command'];
      if (typeof command !== 'string' || command === '') throw new DriverStartError('failed to start task: missing command', false);
      const args = spec.config['args'] ?? [];
      if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new DriverStartError('failed to start task: args must be a list of strings', false);
      // A command with a slash is relative to the task directory; a bare name is looked up on PATH.
      const resolved = !isAbsolute(command) && command.includes('/') ? resolve(ctx.taskDir, command) : command;
      mkdirSync(opts.stateDir, { recursive: true, mode: 0o700 });
      const stateBase = join(opts.stateDir, `${ctx.allocId}-${spec.name}`);
      const pidFile = `${stateBase}.pid.json`;
      const exitFile = `${stateBase}.exit.json`;
      const specFile = `${stateBase}.spec.json`;
      for (const f of [pidFile, exitFile]) rmSync(f, { force: true });
      const exSpec: ExecutorSpec = {
        command: resolved,
        args: args as string[],
        // Scratch files land in the task directory (HOME, TMPDIR), inside the confinement root.
        env: { PATH: opts.path, HOME: ctx.taskDir, TMPDIR: ctx.taskDir, ...spec.env },
        cwd: ctx.taskDir,
        logDir: ctx.logDir,
        task: spec.name,
        logs: spec.logs,
        pidFile,
        exitFile,
      };
      writeFileSync(specFile, JSON.stringify(exSpec), { mode: 0o600 });
      const [program, ...pre] = opts.executorCommand;
      // The agent's own working directory: the executor is this program (its loader resolves from there).
      const child = spawn(program as string, [...pre, specFile], { detached: true, stdio: 'ignore' });
      const pid = await new Promise<number>((res, rej) => {
        child.once('spawn', () => res(child.pid as number));
        child.once('error', (e) => rej(new DriverStartError(`failed to start executor: ${e.message}`, true)));
      });
      child.unref();
      // Wait for the task itself to start (or fail to) before reporting Started.
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (readJson(pidFile)) break;
        const exit = readJson(exitFile);
        if (exit && String(exit['err'] ?? '') !== '') throw new DriverStartError(`failed to launch command with executor: ${String(exit['err'])}`, false);
        if (exit) break;
        if (Date.now() > deadline || child.exitCode !== null) throw new DriverStartError('failed to start task: the executor did not start it', true);
        await new Promise((r) => setTimeout(r, 20));
      }
      const st: RawState = { pid, startTicks: procStartTicks(pid), pidFile, exitFile };
      return handleFor(st, normaliseSignal(spec.killSignal) ?? 'SIGTERM');
    },
    recover(persisted, spec) {
      const st = persisted as unknown as RawState;
      if (typeof st.pid !== 'number' || typeof st.exitFile !== 'string') return null;
      // Ended while we were away: the status file tells how. Still running: re-attach.
      if (readJson(st.exitFile) || alive(st.pid, st.startTicks)) return handleFor(st, normaliseSignal(spec.killSignal) ?? 'SIGTERM');
      return null;
    },
  };
}
