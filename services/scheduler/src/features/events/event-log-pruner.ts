// Retention of the durable event backlog (issue 27, item 3): every replica prunes on a
// timer (deletes are idempotent, so replicas pruning at once only repeat work), keeping
// the newest `keepEvents` events and nothing older than `maxAgeMs`.
import type { Logger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import type { Db } from '../../shared/common.types';

export interface EventRetention {
  keepEvents: number;
  /** 0 = no age limit. */
  maxAgeMs: number;
  intervalMs: number;
}

export interface EventLogPruner {
  /** One pass now (tests, start-up); resolves with the rows deleted. */
  pruneNow(): Promise<number>;
  stop(): void;
}

export function startEventLogPruner(deps: { state: Pick<StateStore<Db>, 'pruneEvents'>; logger: Logger; retention: EventRetention }): EventLogPruner {
  const { state, logger, retention } = deps;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<number> | undefined;

  const pruneNow = (): Promise<number> => {
    running ??= state
      .pruneEvents({ keepEvents: retention.keepEvents, maxAgeMs: retention.maxAgeMs })
      .then((deleted) => {
        if (deleted > 0) logger.debug('event log pruned', { deleted });
        return deleted;
      })
      .catch((err: unknown) => {
        logger.warn('event log pruning failed; retrying at the next interval', { err: err instanceof Error ? err.message : String(err) });
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const tick = (): void => {
    if (stopped) return;
    void pruneNow().then(() => {
      if (stopped) return;
      timer = setTimeout(tick, retention.intervalMs);
      timer.unref();
    });
  };
  timer = setTimeout(tick, retention.intervalMs);
  timer.unref();
  return {
    pruneNow,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
