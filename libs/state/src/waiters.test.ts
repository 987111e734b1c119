import { type Waiter, WaiterRegistry } from './waiters';

function waiter(tables: string[]): Waiter & { calls: number; indexes: Array<number | undefined> } {
  const w = {
    tables,
    calls: 0,
    indexes: [] as Array<number | undefined>,
    notify(index?: number) {
      w.calls++;
      w.indexes.push(index);
    },
  };
  return w;
}

describe('WaiterRegistry', () => {
  it('wakes only the waiters registered on the written tables', () => {
    const registry = new WaiterRegistry();
    const jobs = waiter(['jobs']);
    const nodes = waiter(['nodes']);
    const both = waiter(['jobs', 'nodes']);
    [jobs, nodes, both].forEach((w) => registry.add(w));
    expect(registry.wake(['jobs'])).toBe(2);
    expect([jobs.calls, nodes.calls, both.calls]).toEqual([1, 0, 1]);
    registry.wake(['allocs']);
    expect([jobs.calls, nodes.calls, both.calls]).toEqual([1, 0, 1]);
    registry.wakeAll();
    expect([jobs.calls, nodes.calls, both.calls]).toEqual([2, 1, 2]);
  });

  it("passes the waking write's index to each waiter, and none on wakeAll", () => {
    const registry = new WaiterRegistry();
    const jobs = waiter(['jobs']);
    registry.add(jobs);
    registry.wake(['jobs'], 7);
    registry.wake(['jobs']);
    registry.wakeAll();
    expect(jobs.indexes).toEqual([7, undefined, undefined]);
  });

  it('forgets removed waiters and is safe when notify() removes the waiter', () => {
    const registry = new WaiterRegistry();
    const a: Waiter = { tables: ['t'], notify: () => registry.remove(a) };
    const b = waiter(['t']);
    registry.add(a);
    registry.add(b);
    expect(registry.size).toBe(2);
    registry.wake(['t']);
    expect(b.calls).toBe(1);
    expect(registry.size).toBe(1);
    registry.remove(b);
    registry.remove(b);
    expect(registry.size).toBe(0);
    expect(registry.wake(['t'])).toBe(0);
  });

  it('notifies a waiter registered on several written tables once', () => {
    const registry = new WaiterRegistry();
    const both = waiter(['jobs', 'nodes']);
    registry.add(both);
    expect(registry.wake(['jobs', 'nodes'], 3)).toBe(1);
    expect(both.indexes).toEqual([3]);
  });

  it('with defer, wakes the first waiter at once and the others when the deferred call runs', () => {
    const deferred: Array<() => void> = [];
    const registry = new WaiterRegistry({ defer: (fn) => deferred.push(fn) });
    const [a, b, c] = [waiter(['jobs']), waiter(['jobs']), waiter(['jobs', 'nodes'])];
    [a, b, c].forEach((w) => registry.add(w));
    expect(registry.wake(['jobs', 'nodes'], 9)).toBe(3);
    expect([a.calls, b.calls, c.calls]).toEqual([1, 0, 0]);
    expect(deferred).toHaveLength(1);
    deferred[0]?.();
    expect([a.indexes, b.indexes, c.indexes]).toEqual([[9], [9], [9]]);
    // A single waiter is not deferred; wakeAll never is.
    registry.remove(b);
    registry.remove(c);
    registry.wake(['jobs'], 10);
    registry.wakeAll();
    expect(a.indexes).toEqual([9, 10, undefined]);
    expect(deferred).toHaveLength(1);
  });
});
