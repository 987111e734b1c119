import { declaredRoutes, fillPattern, groupRows, matrixCells, matrixProblems, parseRouteKey, type AccessMatrix } from './access-matrix';
import type { SweepRoute } from './hostile-sweep';

const route = (method: string, pattern: string, label = '/v1'): SweepRoute => ({
  method,
  pattern,
  label,
  params: [],
  dataFields: [],
  stream: false,
  streamsResponse: false,
  unauthenticated: false,
});

const ROUTES = [
  route('GET', '/v1/things'),
  route('HEAD', '/v1/things'),
  route('PUT', '/v1/thing/:id'),
  route('GET', '/v1/:mount/*path', 'kv-v1'),
  route('GET', '/v1/:mount/*path', 'kv-v2'),
];
const CALLERS = ['anon', 'admin'] as const;
type Caller = (typeof CALLERS)[number];

describe('parseRouteKey', () => {
  it('reads methods, pattern and an optional table label', () => {
    expect(parseRouteKey('GET,HEAD /v1/things')).toEqual({ label: undefined, methods: ['GET', 'HEAD'], pattern: '/v1/things' });
    expect(parseRouteKey('kv-v2 get /v1/:mount/*path')).toEqual({ label: 'kv-v2', methods: ['GET'], pattern: '/v1/:mount/*path' });
  });

  it('refuses a key that is not "[table ]METHODS pattern"', () => {
    expect(() => parseRouteKey('/v1/things')).toThrow(/expected/);
    expect(() => parseRouteKey('a b c d')).toThrow(/expected/);
  });
});

describe('matrixProblems', () => {
  const full: AccessMatrix<Caller> = {
    routes: ROUTES,
    callers: CALLERS,
    rows: [
      { route: 'GET,HEAD /v1/things', expect: { other: 200 } },
      { route: 'PUT /v1/thing/:id', expect: { admin: 200, anon: 403 } },
      { route: 'GET /v1/:mount/*path', expect: { admin: 200, other: 403 } },
    ],
  };

  it('is empty when every route has a row and every row every caller', () => {
    expect(matrixProblems(full)).toEqual([]);
  });

  it('names every declared route without a row, with its table where two share a pattern', () => {
    const problems = matrixProblems({ ...full, rows: [{ route: 'kv-v1 GET /v1/:mount/*path', expect: { other: 200 } }] });
    expect(problems).toEqual([
      'route /v1/things GET has no access rule',
      'route /v1/things HEAD has no access rule',
      'route /v1/thing/:id PUT has no access rule',
      'route /v1/:mount/*path GET (table kv-v2) has no access rule',
    ]);
  });

  it('refuses a caller named "other"', () => {
    expect(matrixProblems({ routes: [], callers: ['other'], rows: [] })).toEqual(['caller name "other" is reserved (it stands for every caller a row does not name)']);
  });

  it('names rows for undeclared routes, missing expectations and unknown callers', () => {
    const problems = matrixProblems({
      ...full,
      rows: [
        ...full.rows,
        { route: 'DELETE /v1/things', expect: { other: 204 } },
        { route: 'kv-v3 GET /v1/:mount/*path', expect: { other: 200 } },
        { route: 'GET /v1/things', expect: { admin: 200 } },
        { route: 'GET /v1/things', expect: { admni: 200, other: 403 } as never },
      ],
    });
    expect(problems).toEqual([
      'row "DELETE /v1/things": DELETE /v1/things is not a declared route',
      'row "kv-v3 GET /v1/:mount/*path": GET /v1/:mount/*path (table kv-v3) is not a declared route',
      'row "GET /v1/things": no expected status for caller anon',
      'row "GET /v1/things": unknown caller admni',
    ]);
  });
});

describe('matrixCells', () => {
  it('makes one cell per row, method and caller, `other` filling in', () => {
    const cells = matrixCells<Caller>({ routes: ROUTES, callers: CALLERS, rows: [{ route: 'GET,HEAD /v1/things', expect: { admin: 200, other: 403 } }] });
    expect(cells.map((c) => `${c.method} ${c.caller} ${c.expected}`)).toEqual(['GET anon 403', 'GET admin 200', 'HEAD anon 403', 'HEAD admin 200']);
  });
});

describe('fillPattern', () => {
  it('replaces :name and *name parameters', () => {
    expect(fillPattern('/v1/:mount/data/*path', { mount: 'secret', path: 'a/b' })).toBe('/v1/secret/data/a/b');
  });

  it('fails on a parameter without a value', () => {
    expect(() => fillPattern('/v1/job/:id', {})).toThrow('no value for parameter :id of /v1/job/:id');
  });
});

describe('declaredRoutes', () => {
  it('turns row keys into routes of one label', () => {
    expect(declaredRoutes('ops', ['GET,HEAD /health']).map((r) => `${r.label} ${r.method} ${r.pattern}`)).toEqual(['ops GET /health', 'ops HEAD /health']);
  });
});

describe('groupRows', () => {
  it('groups rows by their pattern, in first-seen order', () => {
    const rows = [
      { route: 'GET /v1/jobs', expect: { other: 200 } },
      { route: 'GET /v1/nodes', expect: { other: 200 } },
      { route: 'kv-v2 PUT /v1/jobs', expect: { other: 200 } },
    ];
    expect(groupRows(rows, (p) => p.split('/')[2] ?? '').map(([g, r]) => [g, r.length])).toEqual([
      ['jobs', 2],
      ['nodes', 1],
    ]);
  });
});
