import { compareVersions, isValidVersion, sortVersionsDescending } from './version-order';

describe('version numbers (Gem::Version semantics)', () => {
  it('accepts what Gem::Version accepts', () => {
    for (const v of ['1', '1.0', '1.2.3', '2024.01.15', '1.0.0-rc1', '1.0.0.beta2', '0.1.a']) expect(isValidVersion(v)).toBe(true);
    for (const v of ['', 'v1.0', '1..2', '1.0.', '.1', '1.0 ', '1.0/2', '../1', 'a1', '1.0-', '9'.repeat(65)]) expect(isValidVersion(v)).toBe(false);
  });

  it('orders like Gem::Version', () => {
    expect(compareVersions('1.10.0', '1.9.0')).toBeGreaterThan(0);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0-rc1', '1.0.0')).toBeLessThan(0);
    expect(compareVersions('1.0.0.beta', '1.0.0.rc')).toBeLessThan(0);
    expect(compareVersions('1.0.0.a', '0.9')).toBeGreaterThan(0);
    expect(compareVersions('2', '10')).toBeLessThan(0);
    expect(sortVersionsDescending([{ version: '1.2' }, { version: '1.10' }, { version: '1.10-rc1' }]).map((v) => v.version)).toEqual(['1.10', '1.10-rc1', '1.2']);
  });
});
