import { buildFixture } from './fixture';

describe('buildFixture', () => {
  const buildJob = buildFixture((n) => ({ id: `job-${n}`, priority: 50, datacenters: ['dc1'] as string[], region: 'global' as string | undefined }));

  it('returns fresh defaults with a per-builder sequence', () => {
    const a = buildJob();
    const b = buildJob();
    expect(a.id).not.toBe(b.id);
    expect(a.datacenters).not.toBe(b.datacenters); // no shared mutable defaults
    expect(a).toEqual({ id: expect.stringMatching(/^job-\d+$/), priority: 50, datacenters: ['dc1'], region: 'global' });
  });

  it('applies overrides, including an explicit undefined', () => {
    expect(buildJob({ priority: 90, region: undefined })).toEqual({ id: expect.any(String), priority: 90, datacenters: ['dc1'], region: undefined });
  });
});
