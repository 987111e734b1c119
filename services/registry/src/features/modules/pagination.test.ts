import { addressProblems, compareVersionsDesc, isCanonicalVersion, latestVersion } from './names';
import { PAGE_RULES, paginationMeta, resolvePage } from './pagination';

describe('resolvePage', () => {
  it('applies defaults and caps the limit at the maximum', () => {
    expect(resolvePage(PAGE_RULES.list, undefined, undefined)).toEqual({ limit: 15, offset: 0 });
    expect(resolvePage(PAGE_RULES.list, 500, 7)).toEqual({ limit: 100, offset: 7 });
    expect(resolvePage(PAGE_RULES.latestForAllProviders, 80, 0)).toEqual({ limit: 50, offset: 0 });
  });
});

describe('paginationMeta', () => {
  it('first page with more results: next_offset and next_url, no prev_offset', () => {
    expect(paginationMeta({ limit: 2, offset: 0 }, true, '/v1/modules', [['verified', 'true']])).toEqual({
      limit: 2,
      current_offset: 0,
      next_offset: 2,
      next_url: '/v1/modules?verified=true&limit=2&offset=2',
    });
  });
  it('middle page: prev_offset clamped at 0, offset/limit replaced in next_url', () => {
    expect(paginationMeta({ limit: 5, offset: 3 }, true, '/v1/modules/search', [['q', 'a b'], ['offset', '3'], ['limit', '500']])).toEqual({
      limit: 5,
      current_offset: 3,
      next_offset: 8,
      prev_offset: 0,
      next_url: '/v1/modules/search?q=a+b&limit=5&offset=8',
    });
  });
  it('last page: no next_offset, no next_url', () => {
    expect(paginationMeta({ limit: 5, offset: 10 }, false, '/v1/modules', [])).toEqual({ limit: 5, current_offset: 10, prev_offset: 5 });
    expect(paginationMeta({ limit: 5, offset: 0 }, false, '/v1/modules', [])).toEqual({ limit: 5, current_offset: 0 });
  });
});

describe('versions and names', () => {
  it('accepts canonical semver only', () => {
    expect(isCanonicalVersion('1.2.3')).toBe(true);
    expect(isCanonicalVersion('1.2.3-rc.1+build.5')).toBe(true);
    expect(isCanonicalVersion('v1.2.3')).toBe(false);
    expect(isCanonicalVersion('1.2')).toBe(false);
    expect(isCanonicalVersion('01.2.3')).toBe(false);
    expect(isCanonicalVersion(' 1.2.3')).toBe(false);
  });
  it('orders newest first and picks the newest release as latest', () => {
    expect(['1.0.0', '1.10.0', '1.2.0', '2.0.0-rc.1'].sort(compareVersionsDesc)).toEqual(['2.0.0-rc.1', '1.10.0', '1.2.0', '1.0.0']);
    expect(latestVersion(['1.0.0', '1.10.0', '2.0.0-rc.1'])).toBe('1.10.0');
    expect(latestVersion(['2.0.0-alpha', '2.0.0-beta'])).toBe('2.0.0-beta');
    expect(latestVersion([])).toBeUndefined();
  });
  it('reports every address problem', () => {
    expect(addressProblems('hashicorp', 'consul', 'aws', '1.0.0')).toEqual([]);
    expect(addressProblems('-bad', 'ok', 'AWS', 'v1')).toHaveLength(3);
    expect(addressProblems('a'.repeat(65), 'x', 'aws')[0]).toMatch(/invalid namespace/);
  });
});
