// The process-wide message bus (docs/architecture.md, "The bus"). Postgres is the source
// of truth; the bus only carries wake-ups, so a lost message may delay a reader, never
// lose data. Consumers therefore re-read from Postgres after onReconnect fires.

export type BusListener = (message: string) => void;

export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  // Registers a listener; resolves once the subscription is active (messages published
  // after the promise resolves are delivered). Returns an unsubscribe function.
  subscribe(channel: string, listener: BusListener): Promise<() => void>;
  // Called after the underlying subscriber reconnected: messages may have been lost in
  // between, so consumers re-read their state from Postgres.
  onReconnect(listener: () => void): () => void;
  close(): Promise<void>;
}

// Structural subset of the winston logger from @selfstack/logger, so the bus does not
// depend on a concrete logging package and tests can pass a silent or recording logger.
export interface BusLogger {
  debug(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  error(message: string, meta?: Record<string, unknown>): unknown;
}

export class BusClosedError extends Error {
  constructor() {
    super('bus is closed');
    this.name = 'BusClosedError';
  }
}

// Listener exceptions must not break fan-out to the other listeners of the channel, nor
// the connection's event loop; they are logged instead.
export function callListenerSafely(
  listener: () => void,
  logger: BusLogger | undefined,
  context: Record<string, unknown>,
): void {
  try {
    listener();
  } catch (err) {
    if (logger) {
      logger.error('bus listener threw', { ...context, err: err instanceof Error ? err.message : String(err) });
    } else {
      process.emitWarning(`bus listener threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * Follows a channel: `onMessage` for each message, `onReconnect` after the subscriber
 * reconnected (messages may have been lost meanwhile: reload what they would have said).
 * Resolves once the subscription is live, to one function that undoes both.
 */
export async function followChannel(bus: Bus, channel: string, onMessage: BusListener, onReconnect: () => void): Promise<() => void> {
  const off = await bus.subscribe(channel, onMessage);
  const offReconnect = bus.onReconnect(onReconnect);
  return () => {
    off();
    offReconnect();
  };
}
