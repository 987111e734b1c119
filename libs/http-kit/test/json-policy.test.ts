import { z } from 'zod';
import { BadRequestError } from '@selfstack/errors';
import { DEFAULT_MAX_BODY_DEPTH, PROTO_KEY_STAND_IN, containsProtoKeys, decodeUtf8, hideProtoKeys, parseJsonBody, restoreProtoKeys } from '../src/json-policy';

function rejection(text: string, maxDepth?: number): string {
  try {
    parseJsonBody(text, maxDepth === undefined ? {} : { maxDepth });
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).status).toBe(400);
    return (err as BadRequestError).messages.join('; ');
  }
  throw new Error(`accepted: ${text.slice(0, 60)}`);
}

describe('the body-decoding policy', () => {
  it('refuses nesting beyond the limit, naming where, without recursion', () => {
    const ok = '['.repeat(DEFAULT_MAX_BODY_DEPTH) + ']'.repeat(DEFAULT_MAX_BODY_DEPTH);
    expect(() => parseJsonBody(ok)).not.toThrow();
    const deep = '['.repeat(DEFAULT_MAX_BODY_DEPTH + 1) + ']'.repeat(DEFAULT_MAX_BODY_DEPTH + 1);
    expect(rejection(deep)).toMatch(new RegExp(`nesting deeper than ${DEFAULT_MAX_BODY_DEPTH} levels`));
    // 100,000 levels: a 400 as well, not a RangeError.
    const huge = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    expect(rejection(huge)).toMatch(/^failed to parse JSON input: field a\.a\.a.*nesting deeper than/);
    expect(rejection('{"Meta":{"x":{"y":[[1]]}}}', 3)).toBe('failed to parse JSON input: field Meta.x.y: nesting deeper than 3 levels');
  });

  it('refuses NUL and lone surrogates in values and keys, naming the field', () => {
    expect(rejection('{"box":{"description":"a\\u0000b"}}')).toBe(
      'failed to parse JSON input: field box.description contains a NUL character (\\u0000), which cannot be stored',
    );
    expect(rejection('{"Job":{"Meta":{"k":"\\ud800"}}}')).toBe(
      'failed to parse JSON input: field Job.Meta.k contains a lone UTF-16 surrogate, which is not valid Unicode',
    );
    expect(rejection('{"a":["x","\\udc00y"]}')).toMatch(/field a\[1\] contains a lone UTF-16 surrogate/);
    expect(rejection('{"data":{"a\\u0000":1}}')).toMatch(/^failed to parse JSON input: key "a\\u0000" of field data contains a NUL/);
    expect(rejection('{"weird key":{"\\ud800":1}}')).toMatch(/key "\\ud800" of field \["weird key"\] contains a lone UTF-16 surrogate/);
    // A surrogate pair is one well-formed character.
    expect(parseJsonBody('{"a":"\\ud834\\udd1e"}')).toEqual({ a: '𝄞' });
  });

  it('keeps integers beyond 2^53 only when the double holds the literal exactly', () => {
    expect(parseJsonBody('{"SubmitTime":1764244966123000000}')).toEqual({ SubmitTime: 1764244966123000000 });
    expect(JSON.stringify(parseJsonBody('{"t":1764244966123000000}'))).toBe('{"t":1764244966123000000}');
    expect(rejection('{"Index":9007199254740993}')).toMatch(/number 9007199254740993 cannot be represented exactly/);
    expect(rejection('{"a":"9007199254740993","b":-9007199254740995}')).toMatch(/number -9007199254740995 /);
    expect(rejection('{"a":1e400}')).toBe('failed to parse JSON input: field a: number out of range');
    expect(parseJsonBody('{"a":9007199254740991,"b":1.5e300,"c":"12345678901234567890"}')).toEqual({ a: 9007199254740991, b: 1.5e300, c: '12345678901234567890' });
  });

  it('keeps __proto__, constructor and prototype keys as own data', () => {
    const v = parseJsonBody('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"n":{"__proto__":"s"}}') as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor', 'n']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(containsProtoKeys(v)).toBe(true);
    expect(containsProtoKeys(v['n'])).toBe(true);
    expect(containsProtoKeys(v['constructor'])).toBe(false);
    // A zod record drops the key unchecked: checked under a stand-in name, it comes back.
    expect(Object.hasOwn(z.record(z.string(), z.unknown()).parse(v), '__proto__')).toBe(false);
    const hidden = hideProtoKeys(v) as Record<string, unknown>;
    expect(Object.keys(hidden)).toEqual([PROTO_KEY_STAND_IN, 'constructor', 'n']);
    expect(v['__proto__']).toEqual({ polluted: true }); // the body itself is not changed
    const kept = restoreProtoKeys(z.record(z.string(), z.unknown()).parse(hidden));
    expect(JSON.stringify(kept)).toBe('{"constructor":{"prototype":{"x":1}},"n":{"__proto__":"s"},"__proto__":{"polluted":true}}');
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    const strings = parseJsonBody('{"m":{"__proto__":"v","a":"b"},"bad":{"__proto__":{"x":1}}}') as { m: unknown; bad: unknown };
    const meta = restoreProtoKeys(z.record(z.string(), z.string()).parse(hideProtoKeys(strings.m)));
    expect(meta).toEqual(JSON.parse('{"a":"b","__proto__":"v"}'));
    expect(Object.hasOwn(meta, '__proto__')).toBe(true);
    // The key's value is checked like any other.
    expect(z.record(z.string(), z.string()).safeParse(hideProtoKeys(strings.bad)).success).toBe(false);
  });

  it('refuses bodies that are not UTF-8 rather than replacing bytes', () => {
    expect(decodeUtf8(Buffer.from('{"a":"ü"}'))).toBe('{"a":"ü"}');
    expect(() => decodeUtf8(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]))).toThrow(
      'failed to parse JSON input: request body is not valid UTF-8',
    );
  });
});
