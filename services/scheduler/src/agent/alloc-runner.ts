// The allocation runner (issue 26 item 3): runs the tasks of one allocation through their
// drivers and reports what happens as the anchor's client does: ClientStatus
// pending -> running -> complete | failed, TaskStates with the anchor's task events, the
// restart policy (attempts within interval, delay, mode fail | delay), kill_signal then a
// forced kill after kill_timeout, deployment health after min_healthy_time, and stopping
// when the server sets DesiredStatus stop. Every change is persisted (AllocRecord) before
// it is reported, so a restarted agent re-attaches to running tasks and never starts a
// task that already ran.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@selfstack/logger';
import { updateStrategyOf } from '../engine/job-rules';
import type { Job } from '../features/jobs/jobs.types';
import { DriverStartError, type Driver, type ExitResult, type TaskContext, type TaskHandle, type TaskSpec, type TaskUsage } from './drivers/driver.types';
import { goDuration, newTaskState, pushEvent, taskEvent, type TaskState } from './task-events';
import { sleep } from './sleep';

type Json = Record<string, unknown>;

export interface AllocRecord {
  ID: string;
  /** the allocation as last seen from the server (with its Job) */
  alloc: Json;
  ClientStatus: string;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  /** null = not decided (or no deployment) */
  Healthy: boolean | null;
  handles: Record<string, { driver: string; persisted: Json } | null>;
  /** start times (ms) of the restarts counted against the policy, per task */
  restarts: Record<string, number[]>;
  stopRequested: boolean;
}

export interface AllocUpdate {
  ID: string;
  ClientStatus: string;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  DeploymentStatus?: { Healthy: boolean; Timestamp: string };
}

export interface AllocRunnerDeps {
  drivers: ReadonlyMap<string, Driver>;
  allocRoot: string;
  persist: (r: AllocRecord) => void;
  report: (u: AllocUpdate) => void;
  logger: Logger;
  datacenter: string;
  region: string;
}

interface RestartPolicy {
  attempts: number;
  intervalMs: number;
  delayMs: number;
  mode: string;
}

const NS = 1_000_000;
const TERMINAL = new Set(['complete', 'failed', 'lost']);

function num(v: unknown, d: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : d;
}

/** The group's restart block, or the anchor's defaults per job type (structs.NewRestartPolicy). */
export function restartPolicyOf(jobType: string, tg: Json): RestartPolicy {
  const rp = (tg['RestartPolicy'] ?? {}) as Json;
  const batch = jobType === 'batch' || jobType === 'sysbatch';
  return {
    attempts: num(rp['Attempts'], batch ? 3 : 2),
    intervalMs: num(rp['Interval'], (batch ? 24 * 3600 : 30 * 60) * 1e9) / NS,
    delayMs: num(rp['Delay'], 15e9) / NS,
    mode: typeof rp['Mode'] === 'string' && rp['Mode'] !== '' ? rp['Mode'] : 'fail',
  };
}

export function allocDirs(root: string, allocId: string): { allocDir: string; sharedDir: string; logDir: string } {
  const allocDir = join(root, allocId);
  return { allocDir, sharedDir: join(allocDir, 'alloc'), logDir: join(allocDir, 'alloc', 'logs') };
}

class TaskRunner {
  handle: TaskHandle | null = null;
  /** aborted when the task must stop (alloc stop, sibling failure) */
  readonly stop = new AbortController();
  /** set by restart(): the next exit is a user-requested restart */
  restartRequested = false;
  private killing: Promise<ExitResult> | null = null;
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly runner: AllocRunner,
    readonly spec: TaskSpec,
    readonly ctx: TaskContext,
    readonly driver: Driver | undefined,
  ) {}

  get state(): TaskState {
    return this.runner.record.TaskStates[this.spec.name] as TaskState;
  }

  async kill(reason: string): Promise<void> {
    if (!this.handle) return;
    if (!this.killing) {
      this.runner.event(this.spec.name, taskEvent('Killing', { KillTimeout: this.spec.killTimeoutMs * NS, KillReason: reason }, `Sent interrupt. Waiting ${goDuration(this.spec.killTimeoutMs)} before force killing`));
      this.killing = this.handle.kill(this.spec.killSignal, this.spec.killTimeoutMs);
    }
    await this.killing;
  }

  usage(): TaskUsage | null {
    return this.handle ? this.handle.usage() : null;
  }

  /** The task's life: start (or re-attach), wait, restart by policy, until dead. */
  async run(recovered: TaskHandle | null, lost = false): Promise<void> {
    const name = this.spec.name;
    let handle = recovered;
    // A task lost while the agent was down counts as an exit: the restart policy decides.
    if (lost && !(await this.restartByPolicy())) return this.finish(true);
    for (;;) {
      if (this.stop.signal.aborted) return this.finish(false);
      if (!handle) {
        if (!this.driver) {
          this.runner.event(name, taskEvent('Driver Failure', { DriverError: `driver ${JSON.stringify(this.spec.driver)} is not enabled on this client`, FailsTask: true }, `Failed to start task: driver ${this.spec.driver} not enabled`));
          return this.finish(true);
        }
        try {
          handle = await this.driver.start(this.spec, this.ctx);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          const recoverable = err instanceof DriverStartError && err.recoverable;
          this.runner.event(name, taskEvent('Driver Failure', { DriverError: message }, message));
          if (!recoverable) {
            this.runner.event(name, taskEvent('Not Restarting', { RestartReason: 'Error was unrecoverable', FailsTask: true }, 'Error was unrecoverable'));
            return this.finish(true);
          }
          if (!(await this.restartByPolicy())) return this.finish(true);
          continue;
        }
        this.handle = handle;
        this.runner.setHandle(name, { driver: this.driver.name, persisted: handle.persisted });
        const s = this.state;
        s.State = 'running';
        if (s.StartedAt === '0001-01-01T00:00:00Z') s.StartedAt = new Date().toISOString();
        this.runner.event(name, taskEvent('Started', {}, 'Task started by client'));
      } else {
        this.handle = handle;
      }
      const result = await handle.wait();
      this.handle = null;
      this.runner.setHandle(name, null);
      if (this.killing) {
        this.killing = null;
        if (this.restartRequested) {
          this.restartRequested = false;
          this.runner.event(name, taskEvent('Terminated', { ExitCode: result.exitCode, Signal: result.signal }, `Exit Code: ${result.exitCode}${result.signal ? `, Signal: ${result.signal}` : ''}`));
          this.runner.event(name, taskEvent('Restarting', { RestartReason: 'User requested restart', StartDelay: 0 }, 'Task restarting in 0s'));
          const s = this.state;
          s.Restarts += 1;
          s.LastRestart = new Date().toISOString();
          handle = null;
          continue;
        }
        this.runner.event(name, taskEvent('Killed', {}, 'Task successfully killed'));
        return this.finish(false);
      }
      const ok = result.exitCode === 0 && result.signal === 0 && result.err === '';
      this.runner.event(
        name,
        taskEvent('Terminated', { ExitCode: result.exitCode, Signal: result.signal, ...(result.err ? { Message: result.err } : {}) }, `Exit Code: ${result.exitCode}${result.signal ? `, Signal: ${result.signal}` : ''}${result.err ? `, Exit Message: ${JSON.stringify(result.err)}` : ''}`),
      );
      this.state.State = 'pending';
      handle = null;
      // A batch task that succeeded is done; anything else goes through the restart policy.
      if (ok && this.runner.batch) return this.finish(false);
      if (!(await this.restartByPolicy())) return this.finish(true);
    }
  }

  /** Restarting (after the policy's delay) or Not Restarting; false = the task failed. */
  private async restartByPolicy(): Promise<boolean> {
    const name = this.spec.name;
    const p = this.runner.policy;
    const now = Date.now();
    const times = (this.runner.record.restarts[name] ?? []).filter((t) => now - t < p.intervalMs);
    let delay = p.delayMs;
    if (times.length >= p.attempts) {
      if (p.mode !== 'delay') {
        const reason = `Exceeded allowed attempts ${p.attempts} in interval ${goDuration(p.intervalMs)} and mode is "fail"`;
        this.runner.event(name, taskEvent('Not Restarting', { RestartReason: reason, FailsTask: true }, reason));
        return false;
      }
      // mode delay: wait until the interval has passed, then start counting again.
      delay = Math.max(p.delayMs, (times[0] ?? now) + p.intervalMs - now);
      times.length = 0;
    }
    times.push(now + delay);
    this.runner.record.restarts[name] = times;
    this.runner.event(name, taskEvent('Restarting', { RestartReason: 'Restart within policy', StartDelay: delay * NS }, `Task restarting in ${goDuration(delay)}`));
    await sleep(delay, this.stop.signal);
    if (this.stop.signal.aborted) return true;
    const s = this.state;
    s.Restarts += 1;
    s.LastRestart = new Date().toISOString();
    return true;
  }

  private finish(failed: boolean): void {
    const s = this.state;
    s.State = 'dead';
    s.Failed = failed;
    s.FinishedAt = new Date().toISOString();
    this.runner.taskEnded(this.spec.name, failed);
  }
}

export class AllocRunner {
  readonly record: AllocRecord;
  readonly policy: RestartPolicy;
  readonly batch: boolean;
  private readonly tasks = new Map<string, TaskRunner>();
  private healthTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly healthMinMs: number | null = null;
  private healthyDeadlineMs = 0;
  private finished = false;

  constructor(
    private readonly deps: AllocRunnerDeps,
    alloc: Json,
    saved?: AllocRecord,
  ) {
    const job = (alloc['Job'] ?? {}) as Json;
    const tg = this.group(job, String(alloc['TaskGroup'] ?? ''));
    this.batch = job['Type'] === 'batch' || job['Type'] === 'sysbatch';
    this.policy = restartPolicyOf(String(job['Type'] ?? 'service'), tg);
    const strategy = alloc['DeploymentID'] ? updateStrategyOf(job as Job, tg) : null;
    if (strategy && strategy.HealthCheck !== 'manual') {
      this.healthMinMs = strategy.MinHealthyTime / NS;
      this.healthyDeadlineMs = strategy.HealthyDeadline / NS;
    }
    const taskNames = ((tg['Tasks'] ?? []) as Json[]).map((t) => String(t['Name']));
    this.record = saved ?? {
      ID: String(alloc['ID']),
      alloc,
      ClientStatus: 'pending',
      ClientDescription: 'No tasks have started',
      TaskStates: Object.fromEntries(taskNames.map((n) => [n, newTaskState()])),
      Healthy: null,
      handles: {},
      restarts: {},
      stopRequested: false,
    };
    this.record.alloc = alloc;
    if (TERMINAL.has(this.record.ClientStatus)) this.finished = true;
  }

  private group(job: Json, name: string): Json {
    return (((job['TaskGroups'] ?? []) as Json[]).find((g) => g['Name'] === name) ?? {}) as Json;
  }

  get id(): string {
    return this.record.ID;
  }

  get terminal(): boolean {
    return this.finished;
  }

  get dirs() {
    return allocDirs(this.deps.allocRoot, this.id);
  }

  taskNames(): string[] {
    return Object.keys(this.record.TaskStates);
  }

  /** Starts every task (or re-attaches after an agent restart). */
  start(recovering: boolean): void {
    if (this.finished) return;
    const alloc = this.record.alloc;
    const job = (alloc['Job'] ?? {}) as Json;
    const tg = this.group(job, String(alloc['TaskGroup'] ?? ''));
    const { allocDir, sharedDir, logDir } = this.dirs;
    for (const d of [allocDir, sharedDir, logDir, join(sharedDir, 'data'), join(sharedDir, 'tmp')]) mkdirSync(d, { recursive: true });
    for (const t of (tg['Tasks'] ?? []) as Json[]) {
      const name = String(t['Name']);
      const state = this.record.TaskStates[name] ?? newTaskState();
      this.record.TaskStates[name] = state;
      const taskDir = join(allocDir, name);
      const spec = this.taskSpec(t, job, tg, taskDir);
      const driverName = spec.driver === 'mock' ? 'mock_driver' : spec.driver;
      const runner = new TaskRunner(this, spec, { allocId: this.id, allocDir, taskDir, logDir }, this.deps.drivers.get(driverName));
      this.tasks.set(name, runner);
      if (state.State === 'dead') continue;
      let recovered: TaskHandle | null = null;
      let lost = false;
      const saved = this.record.handles[name];
      if (recovering && saved) {
        recovered = this.deps.drivers.get(saved.driver)?.recover(saved.persisted, spec, runner.ctx) ?? null;
        if (!recovered) {
          // Gone without an exit status while the agent was down: the anchor restarts it.
          this.event(name, taskEvent('Terminated', { ExitCode: -1, Message: 'task was lost while the client was down' }, 'Task was lost while the client was down'));
          lost = true;
        }
      } else if (recovering && state.Events.some((e) => e.Type === 'Started') && state.State === 'running') {
        // Started but its handle was never saved: treat as above (never start blindly twice).
        this.event(name, taskEvent('Terminated', { ExitCode: -1, Message: 'task handle was lost' }, 'Task handle was lost'));
        lost = true;
      } else if (!recovering || state.Events.length === 0) {
        if (state.Events.length === 0) this.event(name, taskEvent('Received', {}, 'Task received by client'));
        mkdirSync(join(taskDir, 'local'), { recursive: true });
        mkdirSync(join(taskDir, 'tmp'), { recursive: true });
        mkdirSync(join(taskDir, 'secrets'), { recursive: true });
        this.event(name, taskEvent('Task Setup', { Message: 'Building Task Directory' }, 'Building Task Directory'));
      }
      runner.done = runner.run(recovered, lost).catch((err: unknown) => {
        this.deps.logger.error('task runner failed', { alloc: this.id, task: name, err: err instanceof Error ? err.message : String(err) });
      });
    }
    if (this.healthMinMs !== null && this.record.Healthy === null && this.healthyDeadlineMs > 0) {
      const createdMs = Number(alloc['CreateTime'] ?? 0) / NS || Date.now();
      this.deadlineTimer = setTimeout(() => this.setHealth(false), Math.max(0, createdMs + this.healthyDeadlineMs - Date.now()));
    }
    if (this.record.stopRequested) void this.stopAll('alloc was stopped');
    this.recompute();
  }

  private taskSpec(t: Json, job: Json, tg: Json, taskDir: string): TaskSpec {
    const alloc = this.record.alloc;
    const name = String(t['Name']);
    const lc = (t['LogConfig'] ?? {}) as Json;
    const res = (t['Resources'] ?? {}) as Json;
    const env: Record<string, string> = {
      NOMAD_ALLOC_ID: this.id,
      NOMAD_ALLOC_NAME: String(alloc['Name'] ?? ''),
      NOMAD_ALLOC_INDEX: /\[(\d+)\]$/.exec(String(alloc['Name'] ?? ''))?.[1] ?? '0',
      NOMAD_ALLOC_DIR: this.dirs.sharedDir,
      NOMAD_TASK_DIR: join(taskDir, 'local'),
      NOMAD_SECRETS_DIR: join(taskDir, 'secrets'),
      NOMAD_TASK_NAME: name,
      NOMAD_GROUP_NAME: String(tg['Name'] ?? ''),
      NOMAD_JOB_ID: String(job['ID'] ?? ''),
      NOMAD_JOB_NAME: String(job['Name'] ?? job['ID'] ?? ''),
      NOMAD_NAMESPACE: String(alloc['Namespace'] ?? 'default'),
      NOMAD_DC: this.deps.datacenter,
      NOMAD_REGION: this.deps.region,
      NOMAD_CPU_LIMIT: String(res['CPU'] ?? ''),
      NOMAD_MEMORY_LIMIT: String(res['MemoryMB'] ?? ''),
    };
    for (const [k, v] of Object.entries({ ...((job['Meta'] ?? {}) as Json), ...((tg['Meta'] ?? {}) as Json), ...((t['Meta'] ?? {}) as Json) })) {
      env[`NOMAD_META_${k.replace(/[^A-Za-z0-9_]/g, '_')}`] = String(v);
    }
    for (const [k, v] of Object.entries((t['Env'] ?? {}) as Json)) env[k] = String(v);
    return {
      name,
      driver: String(t['Driver'] ?? ''),
      config: (t['Config'] ?? {}) as Json,
      env,
      killSignal: typeof t['KillSignal'] === 'string' && t['KillSignal'] !== '' ? t['KillSignal'] : 'SIGTERM',
      killTimeoutMs: num(t['KillTimeout'], 5e9) / NS,
      logs: { maxFiles: Math.max(1, num(lc['MaxFiles'], 10)), maxFileBytes: Math.max(1, num(lc['MaxFileSizeMB'], 10)) * 1048576 },
    };
  }

  setHandle(task: string, h: AllocRecord['handles'][string]): void {
    this.record.handles[task] = h;
    this.deps.persist(this.record);
  }

  event(task: string, ev: ReturnType<typeof taskEvent>): void {
    const s = this.record.TaskStates[task];
    if (!s) return;
    pushEvent(s, ev);
    this.recompute();
  }

  taskEnded(task: string, failed: boolean): void {
    if (failed && !this.record.stopRequested) {
      // The anchor kills the other tasks of a group when one fails.
      for (const [name, r] of this.tasks) {
        if (name === task || r.state.State === 'dead') continue;
        r.stop.abort();
        void r.kill('Sibling task failed').then(() => undefined);
        this.event(name, taskEvent('Sibling Task Failed', { FailedSibling: task, FailsTask: false }, `Task's sibling ${JSON.stringify(task)} failed`));
      }
    }
    this.recompute();
  }

  /** Recomputes ClientStatus and health, persists, reports. */
  private recompute(): void {
    if (this.finished) return;
    const states = Object.values(this.record.TaskStates);
    let status: string;
    let description: string;
    if (states.length > 0 && states.every((s) => s.State === 'dead')) {
      const failed = states.some((s) => s.Failed);
      status = failed ? 'failed' : 'complete';
      description = failed ? 'Failed tasks' : 'All tasks have completed';
      this.finished = true;
      clearTimeout(this.healthTimer);
      clearTimeout(this.deadlineTimer);
      if (failed && this.healthMinMs !== null && this.record.Healthy === null) this.record.Healthy = false;
    } else if (states.some((s) => s.Failed)) {
      status = 'failed';
      description = 'Failed tasks';
    } else if (states.length > 0 && states.every((s) => s.State === 'running')) {
      status = 'running';
      description = 'Tasks are running';
    } else if (states.some((s) => s.State === 'running' || s.State === 'dead' || s.Restarts > 0)) {
      status = this.record.ClientStatus === 'running' ? 'running' : 'pending';
      description = this.record.ClientDescription;
    } else {
      status = 'pending';
      description = 'No tasks have started';
    }
    this.record.ClientStatus = status;
    this.record.ClientDescription = description;
    this.trackHealth(states);
    this.deps.persist(this.record);
    this.deps.report(this.update());
  }

  /** Healthy once every task has run for min_healthy_time without a restart. */
  private trackHealth(states: TaskState[]): void {
    if (this.healthMinMs === null || this.record.Healthy !== null || this.finished) return;
    if (states.some((s) => s.Failed)) {
      this.record.Healthy = false;
      return;
    }
    const allRunning = states.length > 0 && states.every((s) => s.State === 'running');
    if (!allRunning) {
      clearTimeout(this.healthTimer);
      this.healthTimer = undefined;
      return;
    }
    if (this.healthTimer) return;
    this.healthTimer = setTimeout(() => this.setHealth(true), this.healthMinMs);
  }

  private setHealth(healthy: boolean): void {
    if (this.record.Healthy !== null || this.finished) return;
    clearTimeout(this.healthTimer);
    clearTimeout(this.deadlineTimer);
    this.record.Healthy = healthy;
    this.deps.persist(this.record);
    this.deps.report(this.update());
  }

  update(): AllocUpdate {
    const u: AllocUpdate = { ID: this.id, ClientStatus: this.record.ClientStatus, ClientDescription: this.record.ClientDescription, TaskStates: this.record.TaskStates };
    if (this.record.Healthy !== null) u.DeploymentStatus = { Healthy: this.record.Healthy, Timestamp: new Date().toISOString() };
    return u;
  }

  /** The server's newer view of the allocation: a DesiredStatus other than run stops it. */
  serverUpdate(alloc: Json): void {
    this.record.alloc = { ...this.record.alloc, ...alloc, Job: alloc['Job'] ?? this.record.alloc['Job'] };
    const desired = String(alloc['DesiredStatus'] ?? 'run');
    if (desired !== 'run' && !this.record.stopRequested) {
      this.record.stopRequested = true;
      this.deps.persist(this.record);
      void this.stopAll(String(alloc['DesiredDescription'] ?? 'alloc was stopped'));
    }
  }

  async stopAll(reason: string): Promise<void> {
    const running = [...this.tasks.values()];
    for (const r of running) r.stop.abort();
    await Promise.all(running.map((r) => r.kill(reason)));
    await Promise.all(running.map((r) => r.done));
    // Tasks that never started are dead too.
    for (const r of running) {
      if (r.state.State !== 'dead') {
        r.state.State = 'dead';
        r.state.FinishedAt = new Date().toISOString();
      }
    }
    this.recompute();
  }

  /** POST /v1/client/allocation/:id/restart: one task, or all running tasks. */
  async restart(task: string | undefined): Promise<void> {
    const targets = task ? [this.tasks.get(task)] : [...this.tasks.values()];
    for (const r of targets) {
      if (!r || r.state.State !== 'running' || !r.handle) continue;
      r.restartRequested = true;
      this.event(r.spec.name, taskEvent('Restart Signaled', { RestartReason: 'User requested restart' }, 'User requested restart'));
      void r.kill('User requested restart');
    }
  }

  hasTask(name: string): boolean {
    return this.tasks.has(name);
  }

  taskUsage(): Record<string, TaskUsage | null> {
    return Object.fromEntries([...this.tasks].map(([n, r]) => [n, r.usage()]));
  }

  /** Agent shutdown: leave tasks running (they are re-attached on the next start). */
  detach(): void {
    clearTimeout(this.healthTimer);
    clearTimeout(this.deadlineTimer);
  }
}
