import { prefixBound } from './barrier.store';

describe('prefixBound (the end of a prefix range in byte order)', () => {
  it('increments the last code point', () => {
    expect(prefixBound('logical/a/')).toBe('logical/a0');
    expect(prefixBound('a%')).toBe('a&');
    expect(prefixBound('é')).toBe('ê');
    expect(prefixBound('x\u{1f600}')).toBe('x\u{1f601}');
  });

  it('skips the surrogates, which UTF-8 cannot carry', () => {
    expect(prefixBound('a\ud7ff')).toBe('a\ue000');
  });

  it('drops trailing U+10FFFF first; none when nothing is left', () => {
    expect(prefixBound('a\u{10ffff}')).toBe('b');
    expect(prefixBound('a\u{10ffff}\u{10ffff}')).toBe('b');
    expect(prefixBound('\u{10ffff}')).toBeNull();
    expect(prefixBound('')).toBeNull();
  });

  it('is above every string that starts with the prefix and below every other string above it (UTF-8 bytes)', () => {
    const samples = ['a', 'a/', 'a/b', 'a0', 'a\u{10ffff}', 'b', 'é', 'é\u{1f600}', 'ê', '\u{1f600}', '\u{1f601}x', '\ud7ff', '\ue000', '\uffff', '\u{10000}'];
    const lt = (x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y)) < 0;
    for (const prefix of ['a', 'a/', 'é', '\ud7ff', '\uffff', '\u{1f600}']) {
      const bound = prefixBound(prefix) as string;
      for (const s of samples) {
        const inRange = !lt(s, prefix) && lt(s, bound);
        expect({ prefix, s, inRange }).toEqual({ prefix, s, inRange: s.startsWith(prefix) });
      }
    }
  });
});
