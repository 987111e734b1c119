import { assertDisjointPaths } from './storage.types';

const puts = (...paths: string[]) => paths.map((path) => ({ path, value: Buffer.alloc(0) }));

describe('assertDisjointPaths', () => {
  it('accepts a write whose guard, deletes and puts are all different paths', () => {
    expect(() => assertDisjointPaths('m/k', ['v/1'], puts('v/11'))).not.toThrow();
    expect(() => assertDisjointPaths('m/k', [], [])).not.toThrow();
    const many = Array.from({ length: 40 }, (_, i) => `v/${i}`);
    expect(() => assertDisjointPaths('m/k', many.slice(0, 30), puts(...many.slice(30)))).not.toThrow();
  });

  it.each([
    ['guard and a delete', 'm/k', ['v/1', 'm/k'], puts('v/2')],
    ['guard and a put', 'm/k', ['v/1'], puts('m/k')],
    ['a delete and a put', 'm/k', ['v/1'], puts('v/2', 'v/1')],
    ['two deletes', 'm/k', ['v/1', 'v/1'], puts()],
    ['two puts', 'm/k', [], puts('v/2', 'v/2')],
  ])('refuses a path named twice (%s)', (_, guard, deletes, p) => {
    expect(() => assertDisjointPaths(guard, deletes, p)).toThrow(/appears more than once/);
  });

  it('refuses a repeated path among many (the long form)', () => {
    const many = Array.from({ length: 40 }, (_, i) => `v/${i}`);
    expect(() => assertDisjointPaths('m/k', many, puts('v/39'))).toThrow('applyIf: v/39 appears more than once');
    expect(() => assertDisjointPaths('v/0', many, [])).toThrow('applyIf: v/0 appears more than once');
  });
});
