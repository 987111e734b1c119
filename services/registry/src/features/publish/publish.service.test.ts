import { descriptionFromReadme, requirementsOf } from './publish.service';
import type { ModuleAnalysis } from '../analysis/analysis.types';

describe('descriptionFromReadme', () => {
  it('takes the first prose line, skipping headings, badges, HTML and rules', () => {
    expect(descriptionFromReadme('# Title\n\n[![ci](x)](y)\n<p align="center">\n---\n\nCreates a VPC.\nMore.')).toBe('Creates a VPC.');
    expect(descriptionFromReadme('')).toBe('');
    expect(descriptionFromReadme('# Only a heading')).toBe('');
    expect(descriptionFromReadme('x'.repeat(300))).toBe(`${'x'.repeat(197)}...`);
  });
});

describe('requirementsOf', () => {
  it('keeps provider name/version and module calls per part', () => {
    const part = (path: string) => ({
      path,
      readme: 'r',
      empty: false,
      inputs: [],
      outputs: [],
      resources: [],
      dependencies: [{ name: 'm', source: 's', version: '1.0.0' }],
      providers: [{ name: 'aws', source: 'hashicorp/aws', version: '>= 4.0' }],
    });
    const analysis: ModuleAnalysis = { root: part(''), submodules: [part('modules/a')] };
    expect(requirementsOf(analysis)).toEqual({
      root: { providers: [{ name: 'aws', version: '>= 4.0' }], dependencies: [{ name: 'm', source: 's', version: '1.0.0' }] },
      submodules: [{ path: 'modules/a', providers: [{ name: 'aws', version: '>= 4.0' }], dependencies: [{ name: 'm', source: 's', version: '1.0.0' }] }],
    });
  });
});
