// Several processes of one service on one port (node:cluster). The primary only
// supervises: it forks the workers, restarts one that dies, and on SIGTERM/SIGINT tells
// every worker to shut down gracefully and exits once they have. Each worker is a full
// instance of the service (its own database pool, bus connections and listener on the
// shared port; connections are handed out round-robin by the primary), so only services
// whose instances share nothing but Postgres and the bus may run this way.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from '@selfstack/logger';
import type { ShutdownHandle } from './shutdown';

/** IPC message from the primary asking a worker to drain and exit. */
export const WORKER_SHUTDOWN_MESSAGE = 'selfstack:shutdown';

/** Exit code of a worker (or process) that found its configuration invalid. */
export const CONFIG_ERROR_EXIT_CODE = 2;

/** `auto` (one per CPU the process may use) or a count. */
export function resolveWorkerCount(value: number | 'auto'): number {
  return value === 'auto' ? Math.max(1, availableParallelism()) : value;
}

export interface SuperviseOptions {
  /** Workers to keep running (at least 1). */
  count: number;
  logger: Logger;
  /** Signals that start the graceful stop (default SIGTERM and SIGINT). */
  signals?: readonly NodeJS.Signals[];
  /** Delay before a worker that died is replaced (default 1 s). */
  restartDelayMs?: number;
  /**
   * A worker that dies before it listens, or within this time of listening, counts as a
   * failed start (default 5 s). Measured from listening, not from the fork: a start that is
   * slow (a loaded host) and then crashes is still a failed start.
   */
  minUptimeMs?: number;
  /** Failed starts in a row after which the primary gives up and exits 1 (default 5). */
  maxFailedStarts?: number;
  /** Workers still running this long after the stop was asked are killed (default 30 s). */
  stopTimeoutMs?: number;
  /** Injected so tests can observe the exit code. */
  exit?: (code: number) => void;
}

export interface Supervisor {
  /** Starts (or joins) the graceful stop; resolves when every worker has exited. */
  stop(reason?: string): Promise<void>;
  /** Live workers (tests, logs). */
  workers(): Worker[];
}

/**
 * Runs in the primary: forks `count` workers of the current entry point and supervises
 * them. A worker exiting with CONFIG_ERROR_EXIT_CODE stops the whole service with that code
 * (a bad configuration will not get better by restarting); other unexpected exits are
 * restarted after `restartDelayMs`, and `maxFailedStarts` quick deaths in a row end the
 * service with exit code 1 instead of a restart loop. The stop sends each worker
 * WORKER_SHUTDOWN_MESSAGE (it drains its connections and runs its closers), waits for
 * them and exits 0 if all of them exited 0, else 1.
 */
export function superviseWorkers(options: SuperviseOptions): Supervisor {
  if (!cluster.isPrimary) throw new Error('superviseWorkers runs in the primary process only');
  const { logger } = options;
  const count = Math.max(1, Math.floor(options.count));
  const restartDelayMs = options.restartDelayMs ?? 1000;
  const minUptimeMs = options.minUptimeMs ?? 5000;
  const maxFailedStarts = options.maxFailedStarts ?? 5;
  const stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));

  /** Live workers -> when they started listening (undefined: not yet). */
  const started = new Map<Worker, number | undefined>();
  const restarts = new Set<NodeJS.Timeout>();
  let failedStarts = 0;
  let stopping: Promise<void> | undefined;
  // The primary's exit code: the first failure's (a worker's bad configuration, failed
  // starts, a worker that did not stop cleanly), else 0.
  let exitCode = 0;
  const fail = (code: number) => {
    if (exitCode === 0) exitCode = code;
  };
  let resolveStopped: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));

  const fork = (): void => {
    const worker = cluster.fork();
    started.set(worker, undefined);
    worker.once('online', () => logger.info('worker started', { worker: worker.id, pid: worker.process.pid }));
    worker.once('listening', () => {
      if (started.has(worker)) started.set(worker, Date.now());
    });
  };

  const finish = () => {
    for (const s of signals) process.off(s, onSignal);
    cluster.off('exit', onExit);
    resolveStopped?.();
    exit(exitCode);
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    const listeningSince = started.get(worker);
    started.delete(worker);
    if (stopping) {
      if (code !== 0) fail(1);
      logger.info('worker stopped', { worker: worker.id, exit_code: code, signal });
      if (started.size === 0) finish();
      return;
    }
    logger.error('worker exited unexpectedly', { worker: worker.id, exit_code: code, signal });
    if (code === CONFIG_ERROR_EXIT_CODE) {
      void stop('worker configuration error', CONFIG_ERROR_EXIT_CODE);
      return;
    }
    failedStarts = listeningSince === undefined || Date.now() - listeningSince < minUptimeMs ? failedStarts + 1 : 0;
    if (failedStarts >= maxFailedStarts) {
      logger.error('workers keep failing at start; giving up', { failed_starts: failedStarts });
      void stop('workers failing at start', 1);
      return;
    }
    const t = setTimeout(() => {
      restarts.delete(t);
      if (!stopping) fork();
    }, restartDelayMs);
    restarts.add(t);
  };

  const stop = (reason = 'shutdown', failureCode?: number): Promise<void> => {
    if (failureCode !== undefined) fail(failureCode);
    stopping ??= (async () => {
      logger.info('stopping workers', { reason, workers: started.size });
      for (const t of restarts) clearTimeout(t);
      restarts.clear();
      if (started.size === 0) {
        finish();
        return;
      }
      for (const w of started.keys()) {
        // A worker whose IPC channel is already gone is exiting by itself.
        if (w.isConnected()) w.send(WORKER_SHUTDOWN_MESSAGE);
      }
      const killer = setTimeout(() => {
        for (const w of started.keys()) {
          logger.warn('worker did not stop in time, killing it', { worker: w.id, stop_timeout_ms: stopTimeoutMs });
          fail(1);
          w.process.kill('SIGKILL');
        }
      }, stopTimeoutMs);
      killer.unref();
      await stopped;
      clearTimeout(killer);
    })();
    return stopping;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn('second signal while stopping workers, killing them', { signal });
      for (const w of started.keys()) w.process.kill('SIGKILL');
      return;
    }
    void stop(signal);
  };
  for (const s of signals) process.on(s, onSignal);
  cluster.on('exit', onExit);
  for (let i = 0; i < count; i++) fork();

  return { stop: (reason) => stop(reason), workers: () => [...started.keys()] };
}

/**
 * Runs in a worker: its graceful stop (installShutdown with no signals of its own) starts
 * when the primary asks for it or when the primary is gone (its IPC channel closed), and
 * the signals a terminal sends to the whole process group (Ctrl-C) are left to the
 * primary, which forwards them as one orderly request instead of two.
 */
export function followPrimary(shutdown: ShutdownHandle, signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): void {
  if (!cluster.isWorker) throw new Error('followPrimary runs in a cluster worker only');
  const ignore = () => undefined;
  for (const s of signals) process.on(s, ignore);
  process.on('message', (m: unknown) => {
    if (m === WORKER_SHUTDOWN_MESSAGE) void shutdown('asked by the primary');
  });
  process.on('disconnect', () => void shutdown('primary gone'));
}
