import type { Logger } from '@selfstack/logger';
import type { Listener } from './listener';

/** Something to release after the listeners drained (Prisma disconnect, Redis quit...);
 * it is told why the shutdown runs (the signal, or the caller's reason). */
export type Closer = ((reason: string) => unknown) | { name: string; close: (reason: string) => unknown };

export interface ShutdownOptions {
  listeners: readonly Pick<Listener, 'close'>[];
  /** Run in order once the shutdown starts, before the listeners drain: ends requests that
   * would otherwise hold the drain until its timeout (event streams). */
  beforeDrain?: readonly Closer[];
  /** Run in order, after every listener drained. */
  closers?: readonly Closer[];
  logger: Logger;
  drainTimeoutMs?: number;
  signals?: readonly NodeJS.Signals[];
  /** Injected so tests can observe the exit code. */
  exit?: (code: number) => void;
}

export interface ShutdownHandle {
  /** Starts (or joins) the shutdown; resolves after the closers ran and exit was called. */
  (reason?: string): Promise<void>;
  /** Removes the signal handlers (tests). */
  uninstall(): void;
}

/**
 * Graceful stop on SIGTERM/SIGINT: stop accepting, close idle keep-alive connections, let
 * in-flight requests finish (destroyed after drainTimeoutMs), run the closers in order,
 * exit 0 (1 when a closer failed). A second signal forces exit 1.
 */
export function installShutdown(options: ShutdownOptions): ShutdownHandle {
  const { listeners, logger } = options;
  const closers = options.closers ?? [];
  const drainTimeoutMs = options.drainTimeoutMs ?? 10000;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let running: Promise<void> | undefined;

  const run = (reason = 'shutdown'): Promise<void> => {
    running ??= (async () => {
      logger.info('shutting down', { reason, drain_timeout_ms: drainTimeoutMs });
      let failed = false;
      const runClosers = async (list: readonly Closer[]): Promise<void> => {
        for (const [index, closer] of list.entries()) {
          const name = typeof closer === 'function' ? closer.name || `closer ${index}` : closer.name;
          try {
            await (typeof closer === 'function' ? closer(reason) : closer.close(reason));
          } catch (err) {
            failed = true;
            logger.error('closer failed', { closer: name, error: err instanceof Error ? err.message : String(err) });
          }
        }
      };
      await runClosers(options.beforeDrain ?? []);
      await Promise.all(listeners.map((l) => l.close({ drainTimeoutMs })));
      await runClosers(closers);
      logger.info('shutdown complete', { reason, exit_code: failed ? 1 : 0 });
      exit(failed ? 1 : 0);
    })();
    return running;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      logger.warn('second signal during shutdown, exiting now', { signal });
      exit(1);
      return;
    }
    void run(signal);
  };
  for (const s of signals) process.on(s, onSignal);

  return Object.assign(run, {
    uninstall() {
      for (const s of signals) process.off(s, onSignal);
    },
  });
}
