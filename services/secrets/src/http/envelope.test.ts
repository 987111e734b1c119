import { RawJson, stringifyWithRaw } from '../core/json';
import { envelope, envelopeText, type EnvelopeContext } from './envelope';
import type { LogicalResponseInit } from './logical-response';

describe('envelopeText', () => {
  const ctx = (over: Partial<EnvelopeContext> = {}): EnvelopeContext => ({ requestId: 'a1b2-"quoted"', mountType: 'kv', unknownParams: [], ...over });
  const cases: [string, EnvelopeContext, LogicalResponseInit][] = [
    ['empty', ctx(), {}],
    ['raw data', ctx(), { data: { data: new RawJson('{"b":1,"a":[true,null]}'), metadata: { version: 3, custom_metadata: null } } }],
    ['a RawJson as the data', ctx(), { data: new RawJson('{"x":"y"}') }],
    ['null data, warnings, lease, renewable', ctx(), { data: null, warnings: ['w1', 'w "2"'], leaseDuration: 2764800, renewable: true }],
    ['auth block', ctx({ mountType: 'token' }), { auth: { client_token: 's.x', policies: ['default'], metadata: null, lease_duration: 0, renewable: false } }],
    ['unknown parameters', ctx({ unknownParams: ['zz', 'aa'] }), { data: { keys: ['a/', 'b'] }, warnings: ['first'] }],
    ['unknown parameters, no warnings', ctx({ unknownParams: ['p'] }), { data: { k: 'v\u2028' } }],
  ];
  it.each(cases)('writes what stringifyWithRaw(envelope()) writes: %s', (_name, c, init) => {
    const text = envelopeText(c, init);
    expect(text).toBe(stringifyWithRaw(envelope(c, init)));
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['request_id', 'lease_id', 'renewable', 'lease_duration', 'data', 'wrap_info', 'warnings', 'auth', 'mount_type']);
  });
});
