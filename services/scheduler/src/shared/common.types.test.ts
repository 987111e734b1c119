// Issue 29 item 3: nanosecond times are beyond 2^53, where a double skips integers. The
// scheduler's are whole milliseconds times 10^6 (at most 16 significant digits), which a
// double prints back digit for digit: the API renders the exact int64, and the body
// policy accepts it when a client sends it back.
import fc from 'fast-check';
import { parseJsonBody } from '@selfstack/http-kit';
import { nowNanos } from './common.types';

describe('nowNanos', () => {
  it('renders as the exact nanosecond count for any millisecond from 1970 to 2286 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_999_999_999_999 }), (ms) => {
        const ns = nowNanos({ nowMs: () => ms });
        const exact = String(BigInt(ms) * 1_000_000n);
        expect(JSON.stringify({ SubmitTime: ns })).toBe(`{"SubmitTime":${exact}}`);
        expect(parseJsonBody(`{"SubmitTime":${exact}}`)).toEqual({ SubmitTime: ns });
      }),
      { seed: 29, numRuns: 2000 },
    );
  });
});
