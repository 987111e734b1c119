// Wake-ups for the broker and the engine's timers: the state store publishes every
// committed write's tables and index on the bus (libs/state, channel `state:<schema>`),
// locally and to every replica through Redis. The engine listens on the same channel
// rather than holding blocking queries, so it never counts among the API's blocked readers.
import type { Bus } from '@selfstack/bus';

export interface WakeSignal {
  /** Changes every time a watched table is written (or the bus reconnected). */
  generation(): number;
  /** Resolves when the generation moves past `since`, after `ms`, or on close. */
  wait(since: number, ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function createWakeSignal(bus: Bus, channel: string, tables: readonly string[]): Promise<WakeSignal> {
  const watched = new Set(tables);
  let gen = 0;
  let closed = false;
  const waiters = new Set<() => void>();
  const bump = (): void => {
    gen++;
    for (const w of [...waiters]) w();
  };
  const unsubscribe = await bus.subscribe(channel, (raw) => {
    try {
      const msg = JSON.parse(raw) as { tables?: unknown };
      if (!Array.isArray(msg.tables) || msg.tables.some((t) => typeof t === 'string' && watched.has(t))) bump();
    } catch {
      bump();
    }
  });
  // Messages may have been lost while the bus was down: look again.
  const offReconnect = bus.onReconnect(bump);
  return {
    generation: () => gen,
    wait(since, ms) {
      if (closed || gen !== since) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, ms));
        waiters.add(done);
      });
    },
    async close() {
      closed = true;
      offReconnect();
      for (const w of [...waiters]) w();
      await unsubscribe();
    },
  };
}
