import { randomBytes } from 'node:crypto';
import { combineShares, splitKey } from './shamir';

function subsets<T>(items: readonly T[], size: number): T[][] {
  if (size === 0) return [[]];
  if (items.length < size) return [];
  const [head, ...rest] = items as [T, ...T[]];
  return [...subsets(rest, size - 1).map((s) => [head, ...s]), ...subsets(rest, size)];
}

describe('Shamir split/combine (issue 3, item 2)', () => {
  it('reconstructs from every threshold-sized subset of 5 shares, threshold 3', async () => {
    const key = randomBytes(32);
    const shares = await splitKey(key, 5, 3);
    expect(shares).toHaveLength(5);
    for (const s of shares) expect(s).toHaveLength(33);
    const combos = subsets(shares, 3);
    expect(combos).toHaveLength(10);
    for (const combo of combos) {
      expect((await combineShares(combo)).equals(key)).toBe(true);
    }
    // More than the threshold works too.
    expect((await combineShares(shares)).equals(key)).toBe(true);
  });

  it('does not reconstruct from fewer than the threshold', async () => {
    const key = randomBytes(32);
    const shares = await splitKey(key, 5, 3);
    for (const combo of subsets(shares, 2)) {
      expect((await combineShares(combo)).equals(key)).toBe(false);
    }
  });

  it('handles every threshold from 2..6 of 6 shares', async () => {
    for (let t = 2; t <= 6; t++) {
      const key = randomBytes(32);
      const shares = await splitKey(key, 6, t);
      for (const combo of subsets(shares, t)) expect((await combineShares(combo)).equals(key)).toBe(true);
      for (const combo of subsets(shares, t - 1).slice(0, 5)) {
        if (combo.length < 2) continue;
        expect((await combineShares(combo)).equals(key)).toBe(false);
      }
    }
  });

  it('treats 1-of-1 as the key itself (Vault semantics)', async () => {
    const key = randomBytes(32);
    const [share] = await splitKey(key, 1, 1);
    expect(share?.equals(key)).toBe(true);
    expect((await combineShares([share as Buffer])).equals(key)).toBe(true);
  });

  it('shares are different from each other and from the key', async () => {
    const key = randomBytes(32);
    const shares = await splitKey(key, 3, 2);
    const hex = new Set(shares.map((s) => s.toString('hex')));
    expect(hex.size).toBe(3);
    for (const s of shares) expect(s.subarray(0, 32).equals(key)).toBe(false);
  });
});
