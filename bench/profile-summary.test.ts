import { summarize } from './profile-summary';

// root -> a -> b, root -> c; samples: b, b, a, c, 10 µs apart (V8: timeDeltas[i] is the time
// since the previous sample; a sample lasts until the next one, the last one counts 0).
const frame = (id: number, functionName: string, children: number[] = []) => ({ id, callFrame: { functionName, url: '', lineNumber: 0 }, children });

describe('profile-summary', () => {
  it('adds self time per frame and inclusive time per distinct frame on the stack, across profiles', () => {
    const profile = {
      nodes: [frame(1, '(root)', [2, 4]), frame(2, 'a', [3]), frame(3, 'b'), frame(4, 'c')],
      samples: [3, 3, 2, 4],
      timeDeltas: [0, 10, 10, 10],
    };
    const { totalUs, self, inclusive } = summarize([profile, profile]);
    expect(totalUs).toBe(2 * 30);
    expect(Object.fromEntries(self)).toEqual({ b: 40, a: 20, c: 0 });
    expect(inclusive.get('(root)')).toBe(60);
    expect(inclusive.get('a')).toBe(60);
    expect(inclusive.get('b')).toBe(40);
    expect(inclusive.get('c')).toBe(0);
  });
});
