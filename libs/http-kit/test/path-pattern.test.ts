import { z } from 'zod';
import { coerceValue, coercionKindOf, compilePathTable, compilePattern, definePath, matchPattern, parseBool } from '../src';

describe('path patterns', () => {
  it('matches literal, :param and *glob segments', () => {
    const kv = compilePattern('data/*path');
    expect(matchPattern(kv, 'data/a/b/c')).toEqual({ path: 'a/b/c' });
    expect(matchPattern(kv, 'data/')).toEqual({ path: '' });
    expect(matchPattern(kv, 'data')).toEqual({ path: '' });
    expect(matchPattern(kv, 'database')).toBeUndefined();
    const policy = compilePattern('/policy/:name/');
    expect(policy.pattern).toBe('policy/:name');
    expect(matchPattern(policy, 'policy/dev')).toEqual({ name: 'dev' });
    expect(matchPattern(policy, 'policy/dev/')).toEqual({ name: 'dev' });
    expect(matchPattern(policy, 'policy/dev/x')).toBeUndefined();
    expect(matchPattern(policy, 'policy/')).toBeUndefined();
    expect(matchPattern(compilePattern(''), '')).toEqual({});
    expect(matchPattern(compilePattern('*all'), 'x/y')).toEqual({ all: 'x/y' });
    expect(matchPattern(compilePattern('a.b'), 'aXb')).toBeUndefined();
  });

  it('renders OpenAPI and Vault regex forms', () => {
    const p = compilePattern('keys/:name/rotate/*rest');
    expect(p.openApiPath).toBe('/keys/{name}/rotate/{rest}');
    expect(p.vaultRegex).toBe('^keys/(?P<name>[^/]+)/rotate/(?P<rest>.*)$');
    expect(p.literalPrefix).toBe('keys');
  });

  it('rejects malformed patterns', () => {
    expect(() => compilePattern('a/*rest/b')).toThrow(/last segment/);
    expect(() => compilePattern('a/:1x')).toThrow(/invalid parameter/);
    expect(() => compilePattern('a/:x/:x')).toThrow(/duplicate/);
    expect(() => compilePattern('a//b')).toThrow(/empty segment/);
  });

  it('the table matches first declared spec and checks path fields', () => {
    const a = definePath({ pattern: 'sys/policy', summary: 'list', operations: { read: () => 1 } });
    const b = definePath({ pattern: 'sys/:any', summary: 'any', operations: { read: () => 2 } });
    const table = compilePathTable([a, b]);
    expect(table.match('sys/policy')?.spec).toBe(a);
    expect(table.match('sys/other')).toMatchObject({ spec: b, params: { any: 'other' } });
    expect(table.match('nope')).toBeUndefined();
    expect(() =>
      compilePathTable([definePath({ pattern: 'x/:id', summary: 's', fields: { id: { in: 'body', schema: z.string(), description: '' } }, operations: {} })]),
    ).toThrow(/must be declared in: 'path'/);
    expect(() =>
      compilePathTable([definePath({ pattern: 'x', summary: 's', fields: { id: { in: 'path', schema: z.string(), description: '' } }, operations: {} })]),
    ).toThrow(/not in the pattern/);
  });
});

describe('weak decoding', () => {
  it('parses booleans like strconv.ParseBool', () => {
    for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True']) expect(parseBool(t)).toBe(true);
    for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False']) expect(parseBool(f)).toBe(false);
    expect(parseBool('yes')).toBeUndefined();
  });

  it('coerces by the schema kind, through optional/default/pipe wrappers', () => {
    expect(coerceValue('42', coercionKindOf(z.number().int().optional()))).toBe(42);
    expect(coerceValue('4x', coercionKindOf(z.number()))).toBe('4x');
    expect(coerceValue('true', coercionKindOf(z.boolean().default(false)))).toBe(true);
    expect(coerceValue(12, coercionKindOf(z.string()))).toBe('12');
    expect(coerceValue('a', coercionKindOf(z.array(z.string())))).toEqual(['a']);
    expect(coerceValue(['1', '2'], coercionKindOf(z.array(z.number())))).toEqual([1, 2]);
    expect(coerceValue('5', coercionKindOf(z.string().transform((s) => s.length)))).toBe('5');
    expect(coerceValue({ a: 1 }, coercionKindOf(z.record(z.string(), z.unknown())))).toEqual({ a: 1 });
  });
});

describe('+name: one or more segments, anywhere', () => {
  it('takes slashes and is greedy up to a literal suffix', () => {
    const sub = compilePattern('job/+id/versions');
    expect(matchPattern(sub, 'job/web/versions')).toEqual({ id: 'web' });
    expect(matchPattern(sub, 'job/nightly/periodic-1700000000/versions')).toEqual({ id: 'nightly/periodic-1700000000' });
    expect(matchPattern(sub, 'job//versions')).toBeUndefined();
    expect(matchPattern(sub, 'job/versions')).toBeUndefined();
    const bare = compilePattern('job/+id');
    expect(matchPattern(bare, 'job/report/dispatch-1700000000-0a1b2c3d')).toEqual({ id: 'report/dispatch-1700000000-0a1b2c3d' });
    expect(matchPattern(bare, 'job/')).toBeUndefined();
    expect(bare.openApiPath).toBe('/job/{id}');
    expect(sub.vaultRegex).toBe('^job/(?P<id>.+)/versions/?$');
    expect(() => compilePattern('job/+bad-name')).toThrow(/invalid parameter name/);
  });
});

