import { crumbs, dataPath, kvMounts, listPath, metadataPath, parentFolder, parseSecretJson, versionActionPath, versionRows, writeBody } from './kv';

describe('KV helpers', () => {
  const v2 = { path: 'secret', version: 2 as const };
  const v1 = { path: 'kv1', version: 1 as const };

  it('finds KV mounts and their version in sys/mounts', () => {
    expect(
      kvMounts({
        'secret/': { type: 'kv', options: { version: '2' } },
        'kv1/': { type: 'kv', options: null },
        'old/': { type: 'generic' },
        'sys/': { type: 'system' },
        request_id: 'x' as never,
      }),
    ).toEqual([
      { path: 'kv1', version: 1 },
      { path: 'old', version: 1 },
      { path: 'secret', version: 2 },
    ]);
  });

  it('builds v1 and v2 paths, encoding each segment', () => {
    expect(listPath(v2, 'app/')).toBe('/v1/secret/metadata/app/');
    expect(listPath(v1, '')).toBe('/v1/kv1/');
    expect(dataPath(v2, 'a b/c')).toBe('/v1/secret/data/a%20b/c');
    expect(dataPath(v1, 'x')).toBe('/v1/kv1/x');
    expect(metadataPath(v2, 'x')).toBe('/v1/secret/metadata/x');
    expect(versionActionPath(v2, 'undelete', 'x')).toBe('/v1/secret/undelete/x');
  });

  it('wraps v2 writes with the check-and-set option; v1 writes the map itself', () => {
    expect(writeBody(v2, { a: 1 }, 3)).toEqual({ data: { a: 1 }, options: { cas: 3 } });
    expect(writeBody(v2, { a: 1 })).toEqual({ data: { a: 1 } });
    expect(writeBody(v1, { a: 1 }, 3)).toEqual({ a: 1 });
  });

  it('walks folders', () => {
    expect(parentFolder('a/b/c')).toBe('a/b/');
    expect(parentFolder('a/b/')).toBe('a/');
    expect(parentFolder('c')).toBe('');
    expect(crumbs('a/b/c')).toEqual([
      ['a/', 'a/'],
      ['b/', 'a/b/'],
      ['c', 'a/b/c'],
    ]);
    expect(crumbs('a/')).toEqual([['a/', 'a/']]);
  });

  it('labels versions: current, active, deleted (past deletion_time), destroyed', () => {
    const now = Date.parse('2026-01-02T00:00:00Z');
    const rows = versionRows(
      {
        '1': { created_time: '2026-01-01T00:00:00Z', deletion_time: '', destroyed: true },
        '2': { created_time: '2026-01-01T00:00:00Z', deletion_time: '2026-01-01T12:00:00Z', destroyed: false },
        '3': { created_time: '2026-01-01T00:00:00Z', deletion_time: '2026-02-01T00:00:00Z', destroyed: false },
        '4': { created_time: '2026-01-01T00:00:00Z', deletion_time: '', destroyed: false },
      },
      4,
      now,
    );
    expect(rows.map((r) => [r.version, r.state])).toEqual([
      [4, 'current'],
      [3, 'active'],
      [2, 'deleted'],
      [1, 'destroyed'],
    ]);
  });

  it('accepts only a JSON object as secret data, with the parser message otherwise', () => {
    expect(parseSecretJson('{"a":"b"}')).toEqual({ ok: true, data: { a: 'b' } });
    expect(parseSecretJson('[1]')).toEqual({ ok: false, error: 'the secret must be a JSON object of key/value pairs' });
    const bad = parseSecretJson('{"a":');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^not valid JSON: /);
  });
});
