import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RedisBus, createRedisBus, killRedisClientsByName } from '../src';
import { testRedisPrefix, testRedisUrl } from '@selfstack/testing';
import { describeBusContract, waitFor } from './bus-contract';

const REDIS_URL = testRedisUrl();
// Unique per test file run: other agents and test files share this Redis.
const prefix = testRedisPrefix();
const logged: string[] = [];
const logger = {
  debug: () => undefined,
  warn: (message: string) => {
    logged.push(message);
  },
  error: (message: string) => {
    logged.push(message);
  },
};

describeBusContract('redis', () => createRedisBus({ url: REDIS_URL, prefix, logger }));

describe('Redis bus specifics', () => {
  let bus: RedisBus;
  afterEach(async () => {
    await bus.close();
  });

  it('uses one subscriber connection for many channels and listeners', async () => {
    bus = createRedisBus({ url: REDIS_URL, prefix, logger });
    const got: string[] = [];
    for (let i = 0; i < 20; i++) {
      await bus.subscribe(`many-${i}`, (m) => got.push(m));
      await bus.subscribe(`many-${i}`, (m) => got.push(m));
    }
    await Promise.all(Array.from({ length: 20 }, (_, i) => bus.publish(`many-${i}`, `m${i}`)));
    await waitFor(() => got.length === 40);
    expect(await countClients(bus.subscriberConnectionName)).toBe(1);
  });

  it('prefixes channel names so buses with different prefixes do not see each other', async () => {
    bus = createRedisBus({ url: REDIS_URL, prefix, logger });
    const other = createRedisBus({ url: REDIS_URL, prefix: `${prefix}other:`, logger });
    try {
      const got: string[] = [];
      await other.subscribe('shared-name', (m) => got.push(m));
      await bus.subscribe('shared-name', () => undefined);
      await bus.publish('shared-name', 'from-bus');
      await other.publish('shared-name', 'from-other');
      await waitFor(() => got.includes('from-other'));
      expect(got).toEqual(['from-other']);
    } finally {
      await other.close();
    }
  });

  it('re-subscribes after the subscriber connection is killed, then fires onReconnect', async () => {
    bus = createRedisBus({ url: REDIS_URL, prefix, logger });
    const got: string[] = [];
    let reconnects = 0;
    bus.onReconnect(() => {
      reconnects++;
    });
    await bus.subscribe('reconnect-a', (m) => got.push(`a:${m}`));
    await bus.subscribe('reconnect-b', (m) => got.push(`b:${m}`));
    await bus.publish('reconnect-a', 'before');
    await waitFor(() => got.length === 1);

    expect(await killRedisClientsByName(REDIS_URL, bus.subscriberConnectionName)).toBe(1);
    await waitFor(() => reconnects === 1, 5000, 'onReconnect');
    // onReconnect fires only once the subscriptions are active again: publish at once.
    await bus.publish('reconnect-a', 'after');
    await bus.publish('reconnect-b', 'after');
    await waitFor(() => got.length === 3, 2000, 'messages after reconnect');
    expect(got).toEqual(['a:before', 'a:after', 'b:after']);
  });

  it('a subscribe issued while disconnected resolves only once the subscription is live', async () => {
    bus = createRedisBus({ url: REDIS_URL, prefix, logger });
    let reconnects = 0;
    bus.onReconnect(() => {
      reconnects++;
    });
    await bus.subscribe('offline-a', () => undefined);
    await killRedisClientsByName(REDIS_URL, bus.subscriberConnectionName);
    // Let the client notice the dead socket (a subscribe racing the kill itself cannot know
    // yet; that window is what onReconnect covers). ioredis' first retry comes after 50 ms.
    await new Promise((resolve) => setTimeout(resolve, 15));
    expect(reconnects).toBe(0);
    const got: string[] = [];
    await bus.subscribe('offline-a', (m) => got.push(m));
    await bus.subscribe('offline-b', (m) => got.push(m));
    await bus.publish('offline-a', 'a');
    await bus.publish('offline-b', 'b');
    await waitFor(() => got.length === 2, 5000, 'messages after offline subscribe');
    expect(got).toEqual(['a', 'b']);
  });
});

/**
 * A TCP proxy to Redis that holds Redis' answers back for `delayMs` after each connection
 * opens: the client is connected (TCP) but not ready (its INFO ready check unanswered).
 */
async function slowStartProxy(target: URL, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    const opened = Date.now();
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const wait = opened + delayMs - Date.now();
      upstream.pause();
      setTimeout(() => {
        client.write(chunk);
        upstream.resume();
      }, Math.max(0, wait));
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('Redis bus on a connection that is slow to become ready', () => {
  it('subscribes only once the connection is ready, so the subscription survives and gets what is published', async () => {
    const proxy = await slowStartProxy(new URL(REDIS_URL), 400);
    const slow = createRedisBus({ url: proxy.url, prefix, logger });
    const publisher = createRedisBus({ url: REDIS_URL, prefix, logger });
    let reconnects = 0;
    slow.onReconnect(() => reconnects++);
    try {
      // Connected (TCP) but not ready: ioredis would write the SUBSCRIBE now, before its
      // INFO ready check, and the connection would fail and be dropped.
      await sleep(150);
      const got: string[] = [];
      await slow.subscribe('slow-start', (m) => got.push(m));
      await publisher.publish('slow-start', 'first');
      await waitFor(() => got.length === 1);
      await sleep(300);
      await publisher.publish('slow-start', 'second');
      await waitFor(() => got.length === 2);
      expect(got).toEqual(['first', 'second']);
      expect(reconnects).toBe(0);
      expect(logged.filter((m) => m.includes('subscriber connection error'))).toEqual([]);
    } finally {
      await slow.close();
      await publisher.close();
      await proxy.close();
    }
  });
});

describe('Redis bus without a reachable Redis', () => {
  it('fails a publish fast instead of holding the caller, and still closes', async () => {
    // Port 1 refuses connections: this is the outage case, without touching the shared Redis.
    const bus = createRedisBus({ url: 'redis://127.0.0.1:1', prefix, logger });
    const started = Date.now();
    await expect(bus.publish('anything', 'x')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
    await bus.close();
  });
});

async function countClients(name: string): Promise<number> {
  const { Redis } = await import('ioredis');
  const admin = new Redis(REDIS_URL);
  try {
    const list = (await admin.call('CLIENT', 'LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
  } finally {
    admin.disconnect();
  }
}
