import type { PrismaClient } from '@selfstack/db';
import type { StateStore } from '@selfstack/state';
import type { Db } from './common.types';
import { blockingPointRead, blockingRead, DerivedCache, type SchedulerState } from './blocking-read';
import type { PointReads } from './point-reads.store';

// A state store whose blocking queries answer at once (as woken by a write at `hint`, when
// set) and whose index is settable: enough to see how many index reads and loads
// concurrent readers cause.
function fakeState(): SchedulerState & { index: number; indexReads: number; hint: number | null } {
  const s = {
    index: 7,
    indexReads: 0,
    hint: null as number | null,
    prisma: {} as PrismaClient,
    reads: {
      index: async () => {
        s.indexReads++;
        return s.index;
      },
    } as unknown as PointReads,
    state: {
      blockingQuery: (_opts: unknown, run: (hint: { index: number } | null) => Promise<unknown>) => run(s.hint === null ? null : { index: s.hint }),
    } as unknown as StateStore<Db>,
  };
  return s;
}

const opts = { minIndex: 0, waitMs: 1000 };

describe('blockingRead', () => {
  it('shares one index read and one load between concurrent readers of the same question', async () => {
    const s = fakeState();
    let loads = 0;
    const load = async () => {
      loads++;
      return { n: loads };
    };
    const results = await Promise.all(Array.from({ length: 50 }, () => blockingRead(s, ['jobs'], opts, load, 'job:a')));
    expect(s.indexReads).toBe(1);
    expect(loads).toBe(1);
    expect(results.every((r) => r.index === 7 && r.value === results[0]?.value)).toBe(true);
  });

  it('loads separately for other questions, without a key, and for another index', async () => {
    const s = fakeState();
    let loads = 0;
    const load = async () => ++loads;
    await Promise.all([
      blockingRead(s, ['jobs'], opts, load, 'job:a'),
      blockingRead(s, ['jobs'], opts, load, 'job:b'),
      blockingRead(s, ['jobs'], opts, load),
      blockingRead(s, ['jobs'], opts, load),
    ]);
    expect(loads).toBe(4);
    // A finished load is not kept: the next reader (here at a new index) loads again.
    s.index = 8;
    const r = await blockingRead(s, ['jobs'], opts, load, 'job:a');
    expect(r).toEqual({ index: 8, value: 5 });
  });

  it('does not keep a failed load', async () => {
    const s = fakeState();
    let calls = 0;
    const load = async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
      return 'ok';
    };
    await expect(blockingRead(s, ['jobs'], opts, load, 'k')).rejects.toThrow('boom');
    await expect(blockingRead(s, ['jobs'], opts, load, 'k')).resolves.toEqual({ index: 7, value: 'ok' });
  });
});

describe('blockingPointRead', () => {
  it('reads once for the callers of one event-loop turn, and once per (question, wake-up index) for woken readers', async () => {
    const s = fakeState();
    let reads = 0;
    const read = async () => ({ index: s.index, value: ++reads });
    // Asked in the same turn: one statement, sent after the last of them asked.
    const cold = await Promise.all(Array.from({ length: 5 }, () => blockingPointRead(s, ['jobs'], opts, read, 'job:a')));
    expect(reads).toBe(1);
    expect(cold.map((r) => r.index)).toEqual([7, 7, 7, 7, 7]);
    expect(s.indexReads).toBe(0); // the index comes with the row
    // Asked after that read was sent: a read of its own.
    const first = blockingPointRead(s, ['jobs'], opts, read, 'job:a');
    await new Promise((r) => setImmediate(r));
    const second = blockingPointRead(s, ['jobs'], opts, read, 'job:a');
    expect((await first).value).not.toBe((await second).value);
    expect(reads).toBe(3);

    s.hint = 9;
    s.index = 9;
    const woken = await Promise.all([
      ...Array.from({ length: 20 }, () => blockingPointRead(s, ['jobs'], opts, read, 'job:a')),
      blockingPointRead(s, ['jobs'], opts, read, 'job:b'),
      blockingPointRead(s, ['job_summary'], opts, read, 'job:a'),
    ]);
    expect(reads).toBe(6);
    expect(new Set(woken.slice(0, 20).map((r) => r.value)).size).toBe(1);
    expect(woken.every((r) => r.index === 9)).toBe(true);
  });
});

describe('DerivedCache', () => {
  it('computes once per (base, key) and keeps at most maxKeys per base', () => {
    const cache = new DerivedCache(2);
    const base = {};
    let computed = 0;
    const compute = () => ({ n: ++computed });
    const a = cache.get(base, 'a', compute);
    expect(cache.get(base, 'a', compute)).toBe(a);
    expect(cache.get({}, 'a', compute)).not.toBe(a);
    cache.get(base, 'b', compute);
    cache.get(base, 'c', compute);
    expect(cache.get(base, 'a', compute)).not.toBe(a);
    expect(computed).toBe(5);
  });

  it('does not cache a computation that throws', () => {
    const cache = new DerivedCache();
    const base = {};
    expect(() =>
      cache.get(base, 'k', () => {
        throw new Error('bad filter');
      }),
    ).toThrow('bad filter');
    expect(cache.get(base, 'k', () => 1)).toBe(1);
  });
});
