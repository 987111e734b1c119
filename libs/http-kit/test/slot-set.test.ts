import { join } from 'node:path';
import { runPromotionFixture } from '@selfstack/testing';
import { SlotSet } from '../src';

/** Runs test/fixtures/promotion.ts MODE in a child process (V8 flags of its own). */
const promotion = (mode: string) => runPromotionFixture(join(__dirname, 'fixtures', 'promotion.ts'), [mode], join(__dirname, '..'));

describe('SlotSet', () => {
  it('holds objects by slot, reuses freed slots, and counts what it holds', () => {
    const set = new SlotSet<{ n: number }>();
    const a = { n: 1 };
    const b = { n: 2 };
    const c = { n: 3 };
    const sa = set.add(a);
    const sb = set.add(b);
    expect(set.size).toBe(2);
    expect(set.delete(sa)).toBe(true);
    expect(set.delete(sa)).toBe(false);
    expect(set.size).toBe(1);
    // The freed slot is taken again.
    expect(set.add(c)).toBe(sa);
    const seen: number[] = [];
    set.forEach((o) => seen.push(o.n));
    expect(seen.sort()).toEqual([2, 3]);
    expect(set.delete(sb)).toBe(true);
    expect(set.delete(sa)).toBe(true);
    expect(set.size).toBe(0);
    set.forEach(() => {
      throw new Error('nothing is held');
    });
  });

  it('may be changed while visited (the listener sets headers on what it visits)', () => {
    const set = new SlotSet<{ n: number }>();
    const slots = [1, 2, 3].map((n) => set.add({ n }));
    const seen: number[] = [];
    set.forEach((o) => {
      seen.push(o.n);
      if (o.n === 1) set.delete(slots[2] as number);
    });
    expect(seen).toEqual([1, 2]);
    expect(set.size).toBe(2);
  });

  // The reason SlotSet exists: objects churned through a long-lived Set are promoted to
  // V8's old generation instead of dying young (slot-set.ts); through a SlotSet they are
  // not. Bytes of old-space growth per ~1 KB object, measured in a child process.
  it('lets objects held briefly die young, where a Set gets them promoted (child process)', async () => {
    const [viaSet, viaSlots] = await Promise.all([promotion('set'), promotion('slot-set')]);
    expect(viaSet.perObject).toBeGreaterThan(500);
    expect(viaSlots.perObject).toBeLessThan(50);
  }, 60_000);

  it("keeps createListener's in-flight requests from being promoted (child process)", async () => {
    // ~1,900 bytes per request with the listener's former Set of in-flight responses;
    // ~240 now (what is left is the fixture's own client).
    const { perRequest } = await promotion('listener');
    expect(perRequest).toBeLessThan(700);
  }, 60_000);
});
