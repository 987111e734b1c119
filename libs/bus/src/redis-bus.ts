// Redis pub/sub bus (docs/architecture.md, "The bus"): one publisher and ONE subscriber
// connection per process, whatever the number of listeners; listeners are fanned out in
// memory and channel subscriptions are reference-counted. Channel names are prefixed so
// that test files (and deployments sharing a Redis) never see each other's messages.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Bus, type BusListener, type BusLogger, BusClosedError, callListenerSafely } from './bus';

export interface RedisBusOptions {
  url: string;
  prefix: string;
  logger: BusLogger;
  // Base of the Redis client names (CLIENT SETNAME): `<name>-pub` and `<name>-sub`. Lets
  // operators (and tests doing CLIENT KILL) find the connections; random by default.
  connectionName?: string;
}

export interface RedisBus extends Bus {
  // CLIENT SETNAME of the subscriber connection.
  readonly subscriberConnectionName: string;
}

interface ChannelState {
  listeners: Set<{ listener: BusListener }>;
  // Whether SUBSCRIBE was acknowledged on the current connection.
  subscribed: boolean;
  // SUBSCRIBE/UNSUBSCRIBE for one channel are serialised through this chain so that a
  // quick subscribe/unsubscribe/subscribe sequence always ends in the right state.
  chain: Promise<void>;
}

export function createRedisBus(options: RedisBusOptions): RedisBus {
  const { url, prefix, logger } = options;
  const baseName = options.connectionName ?? `selfstack-bus-${process.pid}-${randomBytes(4).toString('hex')}`;
  const subscriberConnectionName = `${baseName}-sub`;

  const publisher = new Redis(url, {
    connectionName: `${baseName}-pub`,
    // Publishing happens after a committed write; during a Redis outage it must fail fast
    // (the caller logs it, readers resync on reconnect) rather than hold the write's
    // response through ioredis' default 20 reconnect attempts. The offline queue stays on
    // so publishes issued while the first connection is still being set up go through.
    maxRetriesPerRequest: 1,
  });
  const subscriber = new Redis(url, {
    connectionName: subscriberConnectionName,
    // We re-subscribe ourselves after a reconnect so that we know when the subscriptions
    // are active again, and only then tell consumers to resync (onReconnect).
    autoResubscribe: false,
    // A SUBSCRIBE issued while disconnected waits for the reconnect instead of failing
    // after a fixed number of retries: subscribe() resolves once the subscription is live.
    maxRetriesPerRequest: null,
  });

  const channels = new Map<string, ChannelState>();
  const reconnectListeners = new Set<{ listener: () => void }>();
  let closed = false;
  let readyOnce = false;

  publisher.on('error', (err: Error) => logger.warn('bus publisher connection error', { err: err.message }));
  subscriber.on('error', (err: Error) => logger.warn('bus subscriber connection error', { err: err.message }));

  subscriber.on('message', (fullChannel: string, message: string) => {
    if (!fullChannel.startsWith(prefix)) return;
    const channel = fullChannel.slice(prefix.length);
    const state = channels.get(channel);
    if (!state) return;
    for (const registration of [...state.listeners]) {
      if (!state.listeners.has(registration)) continue;
      callListenerSafely(() => registration.listener(message), logger, { channel });
    }
  });

  // Subscriptions die with the connection; until re-subscribed, a new subscribe() on such
  // a channel must send SUBSCRIBE again rather than resolve early.
  subscriber.on('close', () => {
    for (const state of channels.values()) state.subscribed = false;
  });

  subscriber.on('ready', () => {
    if (!readyOnce) {
      readyOnce = true;
      return;
    }
    void resubscribeAfterReconnect();
  });

  async function resubscribeAfterReconnect(): Promise<void> {
    if (closed) return;
    const wanted = [...channels].filter(([, state]) => state.listeners.size > 0);
    try {
      if (wanted.length > 0) {
        await subscriber.subscribe(...wanted.map(([channel]) => prefix + channel));
      }
    } catch (err) {
      // The connection dropped again; the next 'ready' retries.
      logger.warn('bus re-subscribe after reconnect failed', { err: err instanceof Error ? err.message : String(err) });
      return;
    }
    for (const [, state] of wanted) state.subscribed = true;
    logger.debug('bus subscriber reconnected', { channels: wanted.length });
    for (const registration of [...reconnectListeners]) {
      callListenerSafely(() => registration.listener(), logger, { event: 'reconnect' });
    }
  }

  // Resolves once the subscriber connection is ready (its connect-time commands, CLIENT
  // SETNAME and the INFO ready check, answered). ioredis writes a SUBSCRIBE at once on a
  // connection that is connected but not yet ready; the INFO that follows then fails
  // ("Connection in subscriber mode, only subscriber commands may be used"), ioredis drops
  // the connection, and messages published meanwhile are lost although subscribe() had
  // resolved. Seen under load, where that window is wide.
  function subscriberReady(): Promise<void> {
    if (subscriber.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onReady = () => {
        done();
        resolve();
      };
      const onEnd = () => {
        done();
        reject(new BusClosedError());
      };
      const done = () => {
        subscriber.off('ready', onReady);
        subscriber.off('end', onEnd);
      };
      subscriber.on('ready', onReady);
      subscriber.on('end', onEnd);
    });
  }

  async function reconcile(channel: string, state: ChannelState): Promise<void> {
    const wanted = state.listeners.size > 0 && !closed;
    if (wanted && !state.subscribed) {
      await subscriberReady();
      await subscriber.subscribe(prefix + channel);
      state.subscribed = true;
    } else if (!wanted && state.subscribed && !closed) {
      state.subscribed = false;
      await subscriber.unsubscribe(prefix + channel);
    }
    if (state.listeners.size === 0 && !state.subscribed && channels.get(channel) === state) {
      channels.delete(channel);
    }
  }

  function enqueue(channel: string, state: ChannelState): Promise<void> {
    const run = state.chain.then(() => reconcile(channel, state));
    // The chain itself must never stay rejected, or later operations would not run.
    state.chain = run.catch(() => undefined);
    return run;
  }

  return {
    subscriberConnectionName,

    async publish(channel, message) {
      if (closed) throw new BusClosedError();
      await publisher.publish(prefix + channel, message);
    },

    async subscribe(channel, listener) {
      if (closed) throw new BusClosedError();
      let state = channels.get(channel);
      if (!state) {
        state = { listeners: new Set(), subscribed: false, chain: Promise.resolve() };
        channels.set(channel, state);
      }
      const registration = { listener };
      state.listeners.add(registration);
      const owned = state;
      try {
        await enqueue(channel, owned);
      } catch (err) {
        owned.listeners.delete(registration);
        void enqueue(channel, owned).catch(() => undefined);
        throw err;
      }
      if (closed) throw new BusClosedError();
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        owned.listeners.delete(registration);
        enqueue(channel, owned).catch((err: unknown) =>
          logger.warn('bus unsubscribe failed', { channel, err: err instanceof Error ? err.message : String(err) }),
        );
      };
    },

    onReconnect(listener) {
      const registration = { listener };
      reconnectListeners.add(registration);
      return () => {
        reconnectListeners.delete(registration);
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const state of channels.values()) state.listeners.clear();
      channels.clear();
      reconnectListeners.clear();
      // QUIT on a connection that is not ready would sit in the offline queue until a
      // reconnect that may never come; drop such connections instead.
      await Promise.all(
        [publisher, subscriber].map(async (connection) => {
          if (connection.status === 'ready') {
            await connection.quit().catch(() => connection.disconnect());
          } else {
            connection.disconnect();
          }
        }),
      );
    },
  };
}
