// Issue 29: filters that overflowed the parser's recursion are parse errors (the services
// answer them as their 400), and integers beyond 2^53 compare as the APIs render them.
import { BexprError, Evaluator, MAX_RULE_DEPTH, intOfDouble, parseBexpr } from '../src';

function parseError(filter: string): string {
  try {
    parseBexpr(filter);
  } catch (e) {
    expect(e).toBeInstanceOf(BexprError);
    return (e as Error).message;
  }
  throw new Error('parsed');
}

describe('bexpr limits', () => {
  it('refuses 600 chained `not` (and 5,000) with a parse error, not a stack overflow', () => {
    for (const n of [600, 5000]) expect(parseError(`${'not '.repeat(n)}a == 1`)).toMatch(new RegExp(`^1:\\d+ \\(\\d+\\): rule \\w+: expression nested deeper than ${MAX_RULE_DEPTH} rules$`));
    // 150 chained `not` still parse (and collapse pairwise, as go-bexpr does).
    expect(Evaluator.create(`${'not '.repeat(150)}a == 1`).evaluate({ a: 1 })).toBe(true);
    expect(Evaluator.create(`${'not '.repeat(151)}a == 1`).evaluate({ a: 1 })).toBe(false);
  });

  it('refuses 200 nested parentheses and long and-chains with a parse error', () => {
    for (const f of [`${'('.repeat(200)}a == 1${')'.repeat(200)}`, '('.repeat(5000), `${'( '.repeat(200)}a == 1${' )'.repeat(200)}`]) {
      expect(parseError(f)).toMatch(/^1:\d+ \(\d+\): rule [\w"]+: (expression nested deeper than 200 rules|max number of expressions parsed)/);
    }
    expect(parseError(Array.from({ length: 1000 }, () => 'a == 1').join(' and '))).toMatch(/expression nested deeper than 200 rules$/);
    expect(Evaluator.create(Array.from({ length: 50 }, (_, i) => `a != ${i + 2}`).join(' and ')).evaluate({ a: 1 })).toBe(true);
  });

  it('matches an integer beyond 2^53 by the decimal the API renders', () => {
    const submit = 1764244966123000000; // ms * 1e6; the double is 1764244966122999808
    expect(JSON.stringify({ SubmitTime: submit })).toBe('{"SubmitTime":1764244966123000000}');
    expect(intOfDouble(submit)).toBe(1764244966123000000n);
    expect(Evaluator.create('SubmitTime == 1764244966123000000').evaluate({ SubmitTime: submit })).toBe(true);
    expect(Evaluator.create('SubmitTime == 1764244966122999808').evaluate({ SubmitTime: submit })).toBe(false);
    expect(Evaluator.create('SubmitTime != 1764244966123000001').evaluate({ SubmitTime: submit })).toBe(true);
    expect(Evaluator.create('Index == 42').evaluate({ Index: 42 })).toBe(true);
    expect(intOfDouble(-9007199254740993)).toBe(-9007199254740992n);
    expect(intOfDouble(1e300)).toBe(BigInt(1e300));
  });
});
