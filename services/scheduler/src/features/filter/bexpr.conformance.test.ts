// Every go-bexpr case in ../shared/conformance/bexpr-cases.jsonl (hashicorp/go-bexpr's own
// tests, exported with their datum and expected outcome) must pass: parse errors match
// pigeon's text exactly, evaluation errors contain go-bexpr's message.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Evaluator } from './bexpr.evaluator';

const CASES_PATH = path.resolve(__dirname, '../../../../../../shared/conformance/bexpr-cases.jsonl');

interface Case {
  expr: string;
  datum: unknown;
  expect: { match: boolean } | { error: string };
  source: string;
}

const cases: Case[] = readFileSync(CASES_PATH, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Case);

function run(c: Case): { match: boolean } | { error: string } {
  try {
    return { match: Evaluator.create(c.expr).evaluate(c.datum) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

describe('go-bexpr conformance', () => {
  it('reads all 232 cases from the shared conformance file', () => {
    expect(cases).toHaveLength(232);
  });

  it.each(cases.map((c, i) => [i, c.expr, c] as const))('case %i: %s', (_i, _expr, c) => {
    const got = run(c);
    if ('match' in c.expect) {
      expect(got).toEqual({ match: c.expect.match });
    } else if (/^\d+:\d+ \(\d+\)/.test(c.expect.error)) {
      // parse errors: pigeon's message, exactly
      expect(got).toEqual({ error: c.expect.error });
    } else {
      expect('error' in got).toBe(true);
      expect((got as { error: string }).error).toContain(c.expect.error);
    }
  });
});
