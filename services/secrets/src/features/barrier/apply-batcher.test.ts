import { createApplyBatcher, type ApplyBatcherOptions, type ApplyItem } from './apply-batcher';

const item = (guard: string, extra: { deletes?: string[]; puts?: string[]; expected?: string | null } = {}): ApplyItem => ({
  guardPath: guard,
  expected: extra.expected === null ? null : Buffer.from(extra.expected ?? 'old'),
  next: Buffer.from('new'),
  deletes: extra.deletes ?? [],
  puts: (extra.puts ?? []).map((path) => ({ path, value: Buffer.from('v') })),
});

/** A fake database: statements stay open until released; records what each one carried. */
function fakeDb(decide: (i: ApplyItem) => boolean = () => true) {
  const statements: { kind: 'one' | 'many'; guards: string[]; release: () => void; fail: (err: unknown) => void }[] = [];
  const open = <T>(kind: 'one' | 'many', items: readonly ApplyItem[], answer: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      statements.push({ kind, guards: items.map((i) => i.guardPath), release: () => resolve(answer()), fail: reject });
    });
  return {
    statements,
    runOne: (i: ApplyItem) => open('one', [i], () => decide(i)),
    runMany: (items: readonly ApplyItem[]) => open('many', items, () => items.map(decide)),
  };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

type Limits = Pick<ApplyBatcherOptions, 'maxInFlight' | 'maxItems' | 'stallMs' | 'minGroup'>;

/** A batcher over `db`: one statement in flight, groups of up to 64, a stall after 5 ms, no min group. */
const batcherOver = (db: ReturnType<typeof fakeDb>, limits: Partial<Limits> = {}) =>
  createApplyBatcher({ ...db, maxInFlight: 1, maxItems: 64, stallMs: 5, minGroup: Infinity, ...limits });

describe('apply batcher (group commit of conditional writes)', () => {
  it('an idle store sends an item at once, alone; items arriving while every slot is busy go together', async () => {
    const db = fakeDb((i) => i.guardPath !== 'stale');
    const b = batcherOver(db);
    const first = b.apply(item('a'));
    await turn();
    expect(db.statements.map((s) => [s.kind, s.guards])).toEqual([['one', ['a']]]);
    // The only slot is busy: these wait...
    const waiting = [b.apply(item('b')), b.apply(item('stale')), b.apply(item('c', { expected: null }))];
    await turn();
    expect(db.statements).toHaveLength(1);
    // ...and go as one statement when it frees; each gets its own outcome.
    db.statements[0]?.release();
    expect(await first).toBe(true);
    await turn();
    expect(db.statements.map((s) => [s.kind, s.guards])).toEqual([
      ['one', ['a']],
      ['many', ['b', 'stale', 'c']],
    ]);
    db.statements[1]?.release();
    expect(await Promise.all(waiting)).toEqual([true, false, true]);
    expect(b.stats).toEqual({ statements: 2, items: 4, grouped: 3, fallbacks: 0, stalls: 0 });
  });

  it('never puts two items that share a path into one statement, and caps a statement at maxItems', async () => {
    const db = fakeDb();
    const b = batcherOver(db, { maxItems: 3 });
    const all = [b.apply(item('busy'))];
    await turn();
    all.push(
      b.apply(item('m1', { puts: ['v/1'] })),
      b.apply(item('m2', { deletes: ['v/1'] })), // meets m1's put
      b.apply(item('m1')), // the same guard
      b.apply(item('m3')),
      b.apply(item('m4')),
      b.apply(item('m5')),
    );
    for (let n = 0; n < 4; n++) {
      db.statements[n]?.release();
      await turn();
    }
    await Promise.all(all);
    expect(db.statements.map((s) => s.guards)).toEqual([['busy'], ['m1', 'm3', 'm4'], ['m2', 'm1', 'm5']]);
  });

  it('a group PostgreSQL refused (a deadlock: nothing applied) is run again item by item', async () => {
    const db = fakeDb((i) => i.guardPath !== 'x');
    const b = batcherOver(db);
    const first = b.apply(item('busy'));
    await turn();
    const group = [b.apply(item('x')), b.apply(item('y'))];
    db.statements[0]?.release();
    await first;
    await turn();
    db.statements[1]?.fail(Object.assign(new Error('deadlock detected'), { code: '40P01' }));
    await turn();
    expect(db.statements.slice(2).map((s) => [s.kind, s.guards])).toEqual([
      ['one', ['x']],
      ['one', ['y']],
    ]);
    for (const s of db.statements.slice(2)) s.release();
    expect(await Promise.all(group)).toEqual([false, true]);
    expect(b.stats.fallbacks).toBe(1);
  });

  it('any other failure of a group (a lost connection: outcome unknown) is every item\'s answer, and the queue goes on', async () => {
    const db = fakeDb();
    const b = batcherOver(db);
    const first = b.apply(item('busy'));
    await turn();
    const group = [b.apply(item('x')), b.apply(item('y'))].map((p) => p.catch((e: Error) => e.message));
    db.statements[0]?.release();
    await first;
    await turn();
    db.statements[1]?.fail(new Error('Connection terminated unexpectedly'));
    expect(await Promise.all(group)).toEqual(['Connection terminated unexpectedly', 'Connection terminated unexpectedly']);
    expect(db.statements).toHaveLength(2);
    const after = b.apply(item('z'));
    await turn();
    db.statements[2]?.release();
    expect(await after).toBe(true);
  });

  it('with minGroup 1, runs up to maxInFlight statements at once', async () => {
    const db = fakeDb();
    const b = batcherOver(db, { maxInFlight: 2, minGroup: 1 });
    const a = b.apply(item('a'));
    await turn();
    const c = b.apply(item('c'));
    await turn();
    const rest = [b.apply(item('d')), b.apply(item('e'))];
    await turn();
    expect(db.statements.map((s) => s.guards)).toEqual([['a'], ['c']]);
    db.statements[1]?.release();
    await c;
    await turn();
    expect(db.statements.map((s) => s.guards)).toEqual([['a'], ['c'], ['d', 'e']]);
    db.statements[0]?.release();
    db.statements[2]?.release();
    await Promise.all([a, ...rest]);
  });

  describe('one statement at a time, a second on a stall or a min group', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'setImmediate', 'nextTick'] }));
    afterEach(() => jest.useRealTimers());

    it('runs one statement at a time while it is quicker than stallMs: what waits goes as one group', async () => {
      const db = fakeDb();
      const b = batcherOver(db, { maxInFlight: 2 });
      const a = b.apply(item('a'));
      await turn();
      const rest = [b.apply(item('c')), b.apply(item('d'))];
      await turn();
      jest.advanceTimersByTime(4);
      await turn();
      // A second slot exists, but the statement in flight has not run for 5 ms.
      expect(db.statements.map((s) => s.guards)).toEqual([['a']]);
      db.statements[0]?.release();
      await a;
      await turn();
      expect(db.statements.map((s) => s.guards)).toEqual([['a'], ['c', 'd']]);
      // The timer armed for the first statement finds it gone: nothing else starts.
      jest.advanceTimersByTime(10);
      await turn();
      expect(db.statements).toHaveLength(2);
      db.statements[1]?.release();
      expect(await Promise.all(rest)).toEqual([true, true]);
      expect(b.stats.stalls).toBe(0);
    });

    it('a statement running longer than stallMs (a lock wait) stops holding the queue back, up to maxInFlight', async () => {
      const db = fakeDb();
      const b = batcherOver(db, { maxInFlight: 2 });
      const stuck = b.apply(item('stuck'));
      await turn();
      const second = [b.apply(item('x')), b.apply(item('y'))];
      await turn();
      jest.advanceTimersByTime(5);
      await turn();
      expect(db.statements.map((s) => s.guards)).toEqual([['stuck'], ['x', 'y']]);
      expect(b.stats.stalls).toBe(1);
      // Two in flight, the cap: a third waits however long both take.
      const third = b.apply(item('z'));
      await turn();
      jest.advanceTimersByTime(50);
      await turn();
      expect(db.statements).toHaveLength(2);
      db.statements[1]?.release();
      expect(await Promise.all(second)).toEqual([true, true]);
      await turn();
      expect(db.statements.map((s) => s.guards)).toEqual([['stuck'], ['x', 'y'], ['z']]);
      db.statements[2]?.release();
      db.statements[0]?.release();
      expect(await Promise.all([stuck, third])).toEqual([true, true]);
    });

    it('minGroup waiting items make a statement of their own beside the running one', async () => {
      const db = fakeDb();
      const b = batcherOver(db, { maxInFlight: 2, minGroup: 3 });
      const a = b.apply(item('a'));
      await turn();
      const group = [b.apply(item('b')), b.apply(item('c'))];
      await turn();
      expect(db.statements.map((s) => s.guards)).toEqual([['a']]);
      group.push(b.apply(item('d')));
      await turn();
      expect(db.statements.map((s) => s.guards)).toEqual([['a'], ['b', 'c', 'd']]);
      // Both slots taken: however many wait, the next goes when one ends.
      const later = [b.apply(item('e')), b.apply(item('f')), b.apply(item('g'))];
      await turn();
      expect(db.statements).toHaveLength(2);
      db.statements[0]?.release();
      await a;
      await turn();
      expect(db.statements.map((s) => s.guards)).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f', 'g']]);
      db.statements[1]?.release();
      db.statements[2]?.release();
      expect(await Promise.all([...group, ...later])).toEqual([true, true, true, true, true, true]);
      expect(b.stats.stalls).toBe(0);
    });

    it('an idle batcher still sends at once, and leaves no timer behind', async () => {
      const db = fakeDb();
      const b = batcherOver(db, { maxInFlight: 2 });
      const a = b.apply(item('a'));
      await turn();
      expect(db.statements).toHaveLength(1);
      expect(jest.getTimerCount()).toBe(0);
      db.statements[0]?.release();
      expect(await a).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
