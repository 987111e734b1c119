import { nextBlockingIndex, retryDelayMs } from './blocking';

describe('blocking query index', () => {
  it('follows the index header', () => {
    expect(nextBlockingIndex(0, '42')).toBe(42);
    expect(nextBlockingIndex(42, '57')).toBe(57);
    expect(nextBlockingIndex(42, '42')).toBe(42);
  });
  it('restarts at 1 when the index went backwards, and never blocks on 0', () => {
    expect(nextBlockingIndex(100, '5')).toBe(1);
    expect(nextBlockingIndex(0, '0')).toBe(1);
    expect(nextBlockingIndex(7, null)).toBe(7);
    expect(nextBlockingIndex(7, 'garbage')).toBe(7);
  });
  it('backs off 1 s doubling to 30 s', () => {
    expect([1, 2, 3, 5, 6, 20].map(retryDelayMs)).toEqual([1000, 2000, 4000, 16000, 30000, 30000]);
  });
});
