import { DEFAULT_MAX_BODY_DEPTH, parseJsonBody } from '@selfstack/http-kit';
import { MUST_REFUSE, hostileBodies } from './hostile-bodies';
import type { SweepRoute } from './hostile-sweep';

const route = (pattern: string): SweepRoute => ({ method: 'PUT', pattern, label: 't', params: [], dataFields: [], stream: false, streamsResponse: false, unauthenticated: false });

describe('hostile body draws', () => {
  const options = { maxDepth: DEFAULT_MAX_BODY_DEPTH, oversizeBytes: 20_000, numRuns: 6 };

  it('are seeded per route: the same route draws the same bodies, another route others', () => {
    const a = hostileBodies(route('/v1/a'), ['Job', 'EnforceIndex'], options);
    expect(hostileBodies(route('/v1/a'), ['Job', 'EnforceIndex'], options)).toEqual(a);
    expect(hostileBodies(route('/v1/b'), ['Job', 'EnforceIndex'], options)).not.toEqual(a);
    expect(a).toHaveLength(9 + 6);
    expect(new Set(a.slice(0, 9).map((b) => b.kind)).size).toBe(9);
  });

  it('draws bodies that are JSON text over the declared fields, refused by the policy exactly when they must be', () => {
    for (const pattern of ['/v1/a', '/v1/b', '/v1/c', '/v1/d', '/v1/e']) {
      for (const body of hostileBodies(route(pattern), ['data', 'options'], options)) {
        expect(['data', 'options', 'data.inner', 'options.inner']).toContain(body.at);
        expect(body.text.length).toBeLessThan(options.oversizeBytes);
        let refused = false;
        try {
          parseJsonBody(body.text, { maxDepth: options.maxDepth });
        } catch {
          refused = true;
        }
        expect([body.kind, refused]).toEqual([body.kind, MUST_REFUSE.has(body.kind)]);
      }
    }
  });

  it('puts the value into a field of its own when a route declares none (arbitrary keys)', () => {
    expect(hostileBodies(route('/v1/kv'), [], options).every((b) => b.at.startsWith('zz_field'))).toBe(true);
  });
});
