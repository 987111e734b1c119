import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { createIdleGc, createListener, v8Gc, type GcFunction } from '../src';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recordingGc(): GcFunction & { calls: string[] } {
  const calls: string[] = [];
  const gc = Object.assign((o: { type: string }) => void calls.push(o.type), { calls }) as GcFunction & { calls: string[] };
  return gc;
}

describe('createIdleGc', () => {
  it('collects the young generation twice once quiet for idleMs with enough requests held, once per batch', async () => {
    const gc = recordingGc();
    let held = 0;
    const collected: Array<{ held: number }> = [];
    const idle = createIdleGc({ idleMs: 15, minHeld: 3, gc, onCollect: (c) => collected.push({ held: c.held }) }, () => held);
    for (let i = 0; i < 3; i++) {
      held++;
      idle.arrived();
    }
    expect(gc.calls).toEqual([]);
    await sleep(60);
    // Two scavenges: the first moves the held objects to the survivor space, the second promotes them.
    expect(gc.calls).toEqual(['minor', 'minor']);
    expect(collected).toEqual([{ held: 3 }]);
    expect(idle.collections()).toBe(1);
    // Quiet again without new arrivals: nothing more to promote.
    idle.finished();
    await sleep(40);
    expect(idle.collections()).toBe(1);
    idle.close();
  });

  it('does not collect while fewer than minHeld requests are held or arrived', async () => {
    const gc = recordingGc();
    let held = 5;
    const idle = createIdleGc({ idleMs: 10, minHeld: 3, gc }, () => held);
    idle.arrived();
    idle.arrived();
    await sleep(40);
    expect(gc.calls).toEqual([]);
    idle.arrived();
    held = 2; // answered meanwhile
    await sleep(40);
    expect(gc.calls).toEqual([]);
    idle.close();
  });

  it('activity pushes the collection back; close() cancels it', async () => {
    const gc = recordingGc();
    const idle = createIdleGc({ idleMs: 40, minHeld: 1, gc }, () => 1);
    idle.arrived();
    for (let i = 0; i < 4; i++) {
      await sleep(20);
      idle.finished();
    }
    expect(gc.calls).toEqual([]);
    idle.close();
    await sleep(80);
    expect(gc.calls).toEqual([]);
  });

  it("v8Gc() is V8's own collector: a minor collection is observed", async () => {
    const kinds: number[] = [];
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) kinds.push((e as unknown as { detail: { kind: number } }).detail.kind);
    });
    obs.observe({ entryTypes: ['gc'] });
    v8Gc()({ type: 'minor', execution: 'sync' });
    await sleep(20);
    obs.disconnect();
    // perf_hooks constants.NODE_PERFORMANCE_GC_MINOR
    expect(kinds).toContain(1);
    expect(v8Gc()).toBe(v8Gc());
  });
});

describe('createListener idleGc', () => {
  it('collects while the listener holds requests and is quiet, not before enough are held', async () => {
    const gc = recordingGc();
    const pending: http.ServerResponse[] = [];
    const listener = await createListener((_req, res) => void pending.push(res), { port: 0, idleGc: { idleMs: 20, minHeld: 3, gc } });
    const agent = new http.Agent({ keepAlive: true });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        http.get(`${listener.url}/`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
    try {
      const first = [get(), get()];
      await sleep(80);
      expect(gc.calls).toEqual([]);
      const third = get();
      for (let i = 0; i < 50 && gc.calls.length === 0; i++) await sleep(10);
      expect(gc.calls).toEqual(['minor', 'minor']);
      for (const res of pending) res.end('ok');
      expect(await Promise.all([...first, third])).toEqual([200, 200, 200]);
    } finally {
      agent.destroy();
      await listener.close({ drainTimeoutMs: 100 });
    }
  });
});
