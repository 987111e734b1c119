// Every go-bexpr case in the conformance file (hashicorp/go-bexpr's own tests, exported with
// their datum and expected outcome) must pass: parse errors match pigeon's text exactly,
// evaluation errors contain go-bexpr's message. The file is ../shared/conformance/
// bexpr-cases.jsonl, copied into libs/bexpr/test/conformance/ so the suite runs in a
// checkout without ../shared beside it (CI on a clean clone); where ../shared is there, the
// copy must be byte-identical to it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Evaluator } from '../src';

const CASES_PATH = path.resolve(__dirname, 'conformance/bexpr-cases.jsonl');
const SHARED_PATH = path.resolve(__dirname, '../../../../shared/conformance/bexpr-cases.jsonl');

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
  it('reads all 232 cases from the conformance file', () => {
    expect(cases).toHaveLength(232);
  });

  it('the copy in this repository is the shared conformance file, where that is beside the checkout', () => {
    if (!existsSync(SHARED_PATH)) return;
    expect(readFileSync(CASES_PATH, 'utf8')).toBe(readFileSync(SHARED_PATH, 'utf8'));
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
