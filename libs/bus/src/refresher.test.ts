import { createRefresher } from './refresher';

/** A run whose end the test controls; records the state each run saw when it started. */
function controlled() {
  const started: number[] = [];
  const finishers: Array<(err?: Error) => void> = [];
  let state = 0;
  const run = () =>
    new Promise<void>((resolve, reject) => {
      started.push(state);
      finishers.push((err) => (err ? reject(err) : resolve()));
    });
  return {
    run,
    started,
    set: (n: number) => (state = n),
    finish: (i: number, err?: Error) => finishers[i]?.(err),
  };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('createRefresher', () => {
  it('runs once for a lone call', async () => {
    const c = controlled();
    const r = createRefresher(c.run);
    const p = r.refresh();
    await tick();
    expect(c.started).toEqual([0]);
    c.finish(0);
    await expect(p).resolves.toBeUndefined();
  });

  it('calls during a run share one queued run, which starts after the first ends and sees the newer state', async () => {
    const c = controlled();
    const r = createRefresher(c.run);
    const first = r.refresh();
    await tick();
    c.set(1);
    const late = [r.refresh(), r.refresh(), r.refresh()];
    await tick();
    expect(c.started).toEqual([0]); // never two at once
    let lateDone = false;
    void Promise.all(late).then(() => (lateDone = true));
    c.finish(0);
    await first;
    await tick();
    expect(c.started).toEqual([0, 1]);
    expect(lateDone).toBe(false); // the late callers wait for the run that started after them
    c.finish(1);
    await Promise.all(late);
    expect(c.started).toHaveLength(2);
  });

  it('a failed run rejects its callers only; the queued run still happens and a later call starts afresh', async () => {
    const c = controlled();
    const r = createRefresher(c.run);
    const first = r.refresh();
    await tick();
    const queued = r.refresh();
    c.finish(0, new Error('db down'));
    await expect(first).rejects.toThrow('db down');
    await tick();
    expect(c.started).toHaveLength(2);
    c.finish(1);
    await expect(queued).resolves.toBeUndefined();
    const again = r.refresh();
    await tick();
    expect(c.started).toHaveLength(3);
    c.finish(2);
    await again;
  });

  it('a run that throws synchronously becomes a rejection, not an exception at the call', async () => {
    const r = createRefresher(() => {
      throw new Error('sync');
    });
    await expect(r.refresh()).rejects.toThrow('sync');
  });
});
