// Behaviour every Bus implementation must show (docs/architecture.md, "The bus"). Run by
// memory-bus.test.ts and redis-bus.itest.ts; a new implementation adds one more caller.
import type { Bus } from '../src';

export async function waitFor(predicate: () => boolean, timeoutMs = 2000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// Negative assertions ("X is not delivered") need a point after which X would have
// arrived: publish a marker on a watched channel after X and wait for it. Both buses keep
// publish order across channels (one connection / one FIFO), and the short extra pause
// covers a hypothetical reordering.
async function flush(bus: Bus, channel: string): Promise<void> {
  let seen = false;
  const marker = `flush-${Math.random()}`;
  const unsubscribe = await bus.subscribe(channel, (message) => {
    if (message === marker) seen = true;
  });
  await bus.publish(channel, marker);
  await waitFor(() => seen, 2000, 'flush marker');
  unsubscribe();
  await new Promise((resolve) => setTimeout(resolve, 20));
}

export function describeBusContract(name: string, factory: () => Bus): void {
  describe(`Bus contract: ${name}`, () => {
    let bus: Bus;
    let channelCounter = 0;
    // Fresh channel names per test so a straggling message of one test never counts in another.
    const channel = (label: string): string => `${label}-${++channelCounter}-${Math.random().toString(36).slice(2, 8)}`;

    beforeEach(() => {
      bus = factory();
    });
    afterEach(async () => {
      await bus.close();
    });

    it('delivers a message to every listener of the channel', async () => {
      const ch = channel('all');
      const a: string[] = [];
      const b: string[] = [];
      await bus.subscribe(ch, (m) => a.push(m));
      await bus.subscribe(ch, (m) => b.push(m));
      await bus.publish(ch, 'hello');
      await waitFor(() => a.length === 1 && b.length === 1, 2000, 'both listeners');
      expect(a).toEqual(['hello']);
      expect(b).toEqual(['hello']);
    });

    it('delivers asynchronously, never inside publish()', async () => {
      const ch = channel('async');
      const got: string[] = [];
      await bus.subscribe(ch, (m) => got.push(m));
      const publishing = bus.publish(ch, 'x');
      expect(got).toEqual([]);
      await publishing;
      await waitFor(() => got.length === 1);
    });

    it('does not deliver to listeners of other channels', async () => {
      const mine = channel('mine');
      const other = channel('other');
      const got: string[] = [];
      await bus.subscribe(mine, (m) => got.push(m));
      await bus.publish(other, 'not for you');
      await flush(bus, mine);
      expect(got.filter((m) => !m.startsWith('flush-'))).toEqual([]);
    });

    it('treats the same function subscribed twice as two registrations', async () => {
      const ch = channel('twice');
      const got: string[] = [];
      const listener = (m: string): void => {
        got.push(m);
      };
      const first = await bus.subscribe(ch, listener);
      await bus.subscribe(ch, listener);
      await bus.publish(ch, 'a');
      await waitFor(() => got.length === 2);
      first();
      await bus.publish(ch, 'b');
      await waitFor(() => got.length === 3);
      await flush(bus, ch);
      expect(got.filter((m) => !m.startsWith('flush-'))).toEqual(['a', 'a', 'b']);
    });

    it('stops delivering after unsubscribe, keeps other listeners, and unsubscribe is idempotent', async () => {
      const ch = channel('unsub');
      const a: string[] = [];
      const b: string[] = [];
      const unsubscribeA = await bus.subscribe(ch, (m) => a.push(m));
      await bus.subscribe(ch, (m) => b.push(m));
      await bus.publish(ch, '1');
      await waitFor(() => a.length === 1 && b.length === 1);
      unsubscribeA();
      unsubscribeA();
      await bus.publish(ch, '2');
      await waitFor(() => b.length === 2);
      await flush(bus, ch);
      expect(a).toEqual(['1']);
      expect(b.filter((m) => !m.startsWith('flush-'))).toEqual(['1', '2']);
    });

    it('re-subscribes a channel whose last listener left (refcount back from zero)', async () => {
      const ch = channel('refcount');
      const got: string[] = [];
      const off = await bus.subscribe(ch, (m) => got.push(`old:${m}`));
      off();
      // Subscribe again immediately, racing the UNSUBSCRIBE of the previous listener.
      await bus.subscribe(ch, (m) => got.push(`new:${m}`));
      await bus.publish(ch, 'x');
      await waitFor(() => got.length >= 1);
      await flush(bus, ch);
      expect(got.filter((m) => !m.includes('flush-'))).toEqual(['new:x']);
    });

    it('keeps publish order per channel', async () => {
      const ch = channel('order');
      const got: string[] = [];
      await bus.subscribe(ch, (m) => got.push(m));
      const sent = Array.from({ length: 300 }, (_, i) => String(i));
      // Not awaited one by one: order must hold for concurrent publishes issued in order.
      await Promise.all(sent.map((m) => bus.publish(ch, m)));
      await waitFor(() => got.length === sent.length, 5000, 'all ordered messages');
      expect(got).toEqual(sent);
    });

    it('keeps delivering to other listeners when one throws', async () => {
      const ch = channel('throws');
      const got: string[] = [];
      await bus.subscribe(ch, () => {
        throw new Error('listener bug');
      });
      await bus.subscribe(ch, (m) => got.push(m));
      await bus.publish(ch, 'still');
      await waitFor(() => got.length === 1);
      expect(got).toEqual(['still']);
    });

    it('publishing to a channel nobody listens to succeeds', async () => {
      await expect(bus.publish(channel('nobody'), 'void')).resolves.toBeUndefined();
    });

    it('onReconnect returns an unsubscribe function', () => {
      const off = bus.onReconnect(() => undefined);
      expect(typeof off).toBe('function');
      off();
    });

    it('after close: no more deliveries, publish and subscribe reject, close is idempotent', async () => {
      const ch = channel('close');
      const got: string[] = [];
      await bus.subscribe(ch, (m) => got.push(m));
      await bus.close();
      await expect(bus.publish(ch, 'late')).rejects.toThrow(/closed/);
      await expect(bus.subscribe(ch, () => undefined)).rejects.toThrow(/closed/);
      await bus.close();
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(got).toEqual([]);
    });
  });
}
