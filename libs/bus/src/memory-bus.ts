// Single-process bus (`make dev` without REDIS_URL, unit tests). Same contract as the
// Redis bus: delivery is asynchronous (setImmediate, FIFO, so per-channel order holds),
// a listener only receives messages published after its subscription resolved and
// before it unsubscribed.
import { type Bus, type BusListener, type BusLogger, BusClosedError, callListenerSafely } from './bus';

export interface MemoryBusOptions {
  logger?: BusLogger;
}

export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const { logger } = options;
  // Each subscription is its own token so the same function subscribed twice is two
  // independent registrations, as with the Redis implementation.
  const channels = new Map<string, Set<{ listener: BusListener }>>();
  const reconnectListeners = new Set<{ listener: () => void }>();
  let closed = false;

  return {
    async publish(channel, message) {
      if (closed) throw new BusClosedError();
      const registrations = channels.get(channel);
      if (!registrations || registrations.size === 0) return;
      // Snapshot now: like Redis, a subscriber that registers after the publish does not
      // receive it; one that unsubscribes before delivery is skipped via `has`.
      const targets = [...registrations];
      setImmediate(() => {
        for (const registration of targets) {
          if (closed || !registrations.has(registration)) continue;
          callListenerSafely(() => registration.listener(message), logger, { channel });
        }
      });
    },

    async subscribe(channel, listener) {
      if (closed) throw new BusClosedError();
      let registrations = channels.get(channel);
      if (!registrations) {
        registrations = new Set();
        channels.set(channel, registrations);
      }
      const registration = { listener };
      registrations.add(registration);
      const owned = registrations;
      return () => {
        owned.delete(registration);
        if (owned.size === 0 && channels.get(channel) === owned) channels.delete(channel);
      };
    },

    // There is no connection to lose, so reconnect listeners never fire; registering
    // them is still valid so consumers need no special case.
    onReconnect(listener) {
      const registration = { listener };
      reconnectListeners.add(registration);
      return () => {
        reconnectListeners.delete(registration);
      };
    },

    async close() {
      closed = true;
      channels.clear();
      reconnectListeners.clear();
    },
  };
}
