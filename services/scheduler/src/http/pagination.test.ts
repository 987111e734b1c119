import { BadRequestError } from '@selfstack/errors';
import { compareKeys, compileFilter, paginate, parseToken } from './pagination';

interface Item {
  CreateIndex: number;
  ID: string;
  Meta: Record<string, string>;
}

const items: Item[] = [
  { CreateIndex: 5, ID: 'b', Meta: { k: 'x' } },
  { CreateIndex: 9, ID: 'a', Meta: { k: 'y' } },
  { CreateIndex: 10, ID: 'c', Meta: { k: 'x' } },
  { CreateIndex: 100, ID: 'd', Meta: { k: 'x' } },
];

const base = {
  items,
  keyOf: (i: Item) => [i.CreateIndex, i.ID] as const,
  tokenKind: 'create-index' as const,
  perPage: 0,
  nextToken: '',
  reverse: false,
  filter: null,
  datumOf: (i: Item) => i,
};

describe('paginate', () => {
  it('hands back the next item token and resumes from it', () => {
    const p1 = paginate({ ...base, perPage: 2 });
    expect(p1.items.map((i) => i.ID)).toEqual(['b', 'a']);
    expect(p1.nextToken).toBe('10.c');
    const p2 = paginate({ ...base, perPage: 2, nextToken: p1.nextToken });
    expect(p2.items.map((i) => i.ID)).toEqual(['c', 'd']);
    expect(p2.nextToken).toBe('');
  });

  it('compares CreateIndex tokens numerically (hashicorp/nomad#25435)', () => {
    expect(compareKeys(parseToken('create-index', '9.z'), parseToken('create-index', '10.a'))).toBe(-1);
    const p = paginate({ ...base, perPage: 1, nextToken: '100.d' });
    expect(p.items.map((i) => i.ID)).toEqual(['d']);
  });

  it('walks backwards with reverse', () => {
    const p = paginate({ ...base, perPage: 3, reverse: true });
    expect(p.items.map((i) => i.ID)).toEqual(['d', 'c', 'a']);
    expect(p.nextToken).toBe('5.b');
    expect(paginate({ ...base, reverse: true, nextToken: '9.a' }).items.map((i) => i.ID)).toEqual(['a', 'b']);
  });

  it('filters before counting the page and reports filter errors as 400s', () => {
    const p = paginate({ ...base, perPage: 2, filter: compileFilter('Meta.k == x') });
    expect(p.items.map((i) => i.ID)).toEqual(['b', 'c']);
    expect(p.nextToken).toBe('100.d');
    expect(() => paginate({ ...base, filter: compileFilter('Nope == 1') })).toThrow(
      new BadRequestError('failed to read result page: error finding value in datum: /Nope at part 0: couldn\'t find key: struct field with name "Nope"'),
    );
    expect(() => compileFilter('Meta ==')).toThrow(/^failed to create result paginator: failed to read filter expression: 1:8 \(7\): no match found/);
  });
});
