import { parseDuration } from './duration';

describe('parseDuration', () => {
  it.each([
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['300ms', 300],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['2h45m', 9_900_000],
    ['1h1m1s1ms', 3_661_001],
    ['.5s', 500],
    ['1.s', 1000],
    ['0', 0],
    ['+5s', 5000],
    ['45', 45_000],
    ['0s', 0],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['2000000ns', 2],
    ['  7s  ', 7000],
  ])('%s -> %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    ['', /empty string/],
    ['   ', /empty string/],
    ['10', null],
    ['abc', /unexpected "abc"/],
    ['10x', /unknown unit in "10x"/],
    ['1m30', /missing unit after "30"/],
    ['-5s', /must not be negative/],
    ['1 s', /unexpected|unknown unit/],
    ['s', /unexpected "s"/],
    ['1.2.3s', /unknown unit|unexpected/],
    ['10S', /unknown unit/],
    ['1d', /unknown unit in "1d"/],
  ])('rejects %j', (input, message) => {
    if (message === null) {
      // Plain integers are seconds, not an error.
      expect(parseDuration(input)).toBe(10_000);
      return;
    }
    expect(() => parseDuration(input)).toThrow(RangeError);
    expect(() => parseDuration(input)).toThrow(message);
  });

  it('names the whole input in the message', () => {
    expect(() => parseDuration('5m10q')).toThrow('invalid duration "5m10q"');
  });

  it("follows Go's time.ParseDuration with bareSeconds: false (only 0 goes without a unit)", () => {
    const go = (v: string) => parseDuration(v, { bareSeconds: false });
    expect(go('0')).toBe(0);
    expect(go('+0')).toBe(0);
    expect(go('1.5s')).toBe(1500);
    expect(go('300000ms')).toBe(300_000);
    expect(() => go('10')).toThrow(/missing unit after "10"/);
    expect(() => go('00')).toThrow(RangeError);
    expect(() => go('')).toThrow(/empty string/);
  });
});
