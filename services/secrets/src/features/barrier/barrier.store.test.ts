import { arrayLiteral, arrayParameterTypes, binaryArray, ENTRY_SQL, entryPoolConnection, prefixBound } from './barrier.store';

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

describe('entryPoolConnection', () => {
  it('asks for enable_seqscan off in the startup options, or appends it to the URL\'s own', () => {
    expect(entryPoolConnection('postgresql://u:p@db.example:5432/app')).toEqual({
      connectionString: 'postgresql://u:p@db.example:5432/app',
      options: '-c enable_seqscan=off',
    });
    // An `options` in the URL replaces node-postgres's config option: both go in the URL.
    const withOwn = entryPoolConnection('postgresql://u:p%40ss@db.example/app?sslmode=disable&options=-c%20statement_timeout%3D5000');
    expect(withOwn.options).toBeUndefined();
    const url = new URL(withOwn.connectionString);
    expect(url.searchParams.get('options')).toBe('-c statement_timeout=5000 -c enable_seqscan=off');
    expect(url.searchParams.get('sslmode')).toBe('disable');
    expect(url.password).toBe('p%40ss');
    // Not a URL (a socket directory and database): the config option.
    expect(entryPoolConnection('/var/run/postgresql app')).toEqual({ connectionString: '/var/run/postgresql app', options: '-c enable_seqscan=off' });
  });
});

describe('arrayLiteral', () => {
  it('writes text, numbers, bytea and NULL elements as PostgreSQL array input, and refuses anything else', () => {
    expect(arrayLiteral(['a/b', 'q"x', 'b\\s', ''])).toBe('{"a/b","q\\"x","b\\\\s",""}');
    expect(arrayLiteral([1, -2, 30])).toBe('{1,-2,30}');
    expect(arrayLiteral([Buffer.from([0, 255]), null])).toBe('{"\\\\x00ff",NULL}');
    expect(arrayLiteral([])).toBe('{}');
    expect(() => arrayLiteral([{}])).toThrow(TypeError);
  });
});

describe('binaryArray (the binary array format array_recv reads)', () => {
  const int32 = (...xs: number[]) => {
    const b = Buffer.alloc(4 * xs.length);
    xs.forEach((x, i) => b.writeInt32BE(x, 4 * i));
    return b;
  };

  it('writes one dimension, the has-nulls flag, the element type, then each element as its length and bytes', () => {
    expect(binaryArray(['ab', 'é'], 25)).toEqual(Buffer.concat([int32(1, 0, 25, 2, 1), int32(2), Buffer.from('ab'), int32(2), Buffer.from('é')]));
    expect(binaryArray([7, -1], 23)).toEqual(int32(1, 0, 23, 2, 1, 4, 7, 4, -1));
    expect(binaryArray([Buffer.from([0, 255]), null, Buffer.alloc(0)], 17)).toEqual(
      Buffer.concat([int32(1, 1, 17, 3, 1), int32(2), Buffer.from([0, 255]), int32(-1), int32(0)]),
    );
  });

  it('writes an empty array as zero dimensions', () => {
    expect(binaryArray([], 25)).toEqual(int32(0, 0, 25));
  });

  it('refuses elements that do not fit the element type', () => {
    expect(() => binaryArray([1], 25)).toThrow(TypeError);
    expect(() => binaryArray(['1'], 23)).toThrow(TypeError);
    expect(() => binaryArray([1.5], 23)).toThrow(TypeError);
    expect(() => binaryArray([2 ** 31], 23)).toThrow(TypeError);
    expect(() => binaryArray(['x'], 17)).toThrow(TypeError);
    expect(() => binaryArray([{}], 25)).toThrow(TypeError);
  });
});

describe('arrayParameterTypes', () => {
  it('reads the element type of each array parameter from its casts', () => {
    expect(arrayParameterTypes('SELECT unnest($1::text[], $3::int[]) WHERE x = ANY($1::text[]) AND y = $2 AND z = ANY($4::bytea[])')).toEqual(
      new Map([
        [1, 25],
        [3, 23],
        [4, 17],
      ]),
    );
  });

  it('refuses a parameter cast to two array types', () => {
    expect(() => arrayParameterTypes('SELECT $1::text[], $1::int[]')).toThrow('$1 is cast to two array types');
  });

  it('finds a type for every array parameter of the grouped write', () => {
    // $1, $2, $4..$7, $9..$12 are arrays; $3 and $8 are the packed bytea values.
    expect([...arrayParameterTypes(ENTRY_SQL.applyMany).keys()].sort((a, b) => a - b)).toEqual([1, 2, 4, 5, 6, 7, 9, 10, 11, 12]);
  });
});
