import { SAMPLE_MODULE } from '../../../test/archive-fixtures';
import { AnalysisError, analyzeModule, isAnalyzedPath } from './analysis';

function filesOf(record: Record<string, string>) {
  const files = Object.keys(record);
  const texts = new Map(Object.entries(record).filter(([p]) => isAnalyzedPath(p)));
  return { files, texts };
}

describe('isAnalyzedPath', () => {
  it.each([
    ['main.tf', true],
    ['README.md', true],
    ['readme', true],
    ['modules/x/vars.tf', true],
    ['modules/x/README.md', true],
    ['modules/x/nested/main.tf', false],
    ['examples/basic/main.tf', false],
    ['main.tf.json', false],
    ['LICENSE', false],
  ])('%s -> %s', (p, want) => {
    expect(isAnalyzedPath(p)).toBe(want);
  });
});

describe('analyzeModule', () => {
  it('extracts the root and submodule parts', async () => {
    const { files, texts } = filesOf(SAMPLE_MODULE);
    const a = await analyzeModule(files, texts);
    expect(a.root).toEqual({
      path: '',
      readme: '# Demo\n\nA demo module.\n',
      empty: false,
      inputs: [
        { name: 'name', type: 'string', description: 'Bucket name', default: '', required: true },
        { name: 'region', type: 'string', description: 'Region', default: '"us-east-1"', required: false },
        { name: 'tags', type: 'map(string)', description: '', default: '{}', required: false },
      ],
      outputs: [{ name: 'arn', description: 'Bucket ARN' }],
      dependencies: [{ name: 'label', source: 'cloudposse/label/null', version: '0.25.0' }],
      resources: [{ name: 'this', type: 'aws_s3_bucket' }],
      providers: [{ name: 'aws', source: 'hashicorp/aws', version: '>= 4.0' }],
    });
    expect(a.submodules).toEqual([
      {
        path: 'modules/policy',
        readme: 'Policy submodule\n',
        empty: false,
        inputs: [],
        outputs: [{ name: 'policy_arn', description: '' }],
        dependencies: [],
        resources: [{ name: 'p', type: 'aws_iam_policy' }],
        providers: [{ name: 'aws', source: '', version: '' }],
      },
    ]);
  });

  it('marks parts without .tf files empty', async () => {
    const { files, texts } = filesOf({ 'README.md': 'only docs', 'modules/docs/README.md': 'x', 'modules/assets/logo.png': 'png' });
    const a = await analyzeModule(files, texts);
    expect(a.root.empty).toBe(true);
    expect(a.root.readme).toBe('only docs');
    expect(a.submodules.map((s) => [s.path, s.empty])).toEqual([
      ['modules/assets', true],
      ['modules/docs', true],
    ]);
  });

  it('handles legacy required_providers, provider meta-arguments, null defaults and complex defaults', async () => {
    const { files, texts } = filesOf({
      'main.tf': `
terraform {
  required_providers {
    random = "~> 3.0"
  }
}
provider "google" {}
resource "random_id" "x" {
  byte_length = 4
}
data "http" "y" {
  url = "https://example.com"
  provider = other.alias
}
resource "terraform_data" "z" {}
variable "opt" {
  type    = object({ a = list(string) })
  default = null
}
variable "complex" {
  default = { list = [1, 2], nested = { k = "v" } }
}
`,
    });
    const a = await analyzeModule(files, texts);
    expect(a.root.providers).toEqual([
      { name: 'google', source: '', version: '' },
      { name: 'other', source: '', version: '' },
      { name: 'random', source: '', version: '~> 3.0' },
    ]);
    expect(a.root.inputs).toEqual([
      { name: 'complex', type: '', description: '', default: '{"list":[1,2],"nested":{"k":"v"}}', required: false },
      { name: 'opt', type: 'object({ a = list(string) })', description: '', default: 'null', required: false },
    ]);
  });

  it('names the file and position of a syntax error', async () => {
    const { files, texts } = filesOf({ 'main.tf': 'resource "a" "b" {}\n', 'modules/bad/main.tf': 'variable "x" {\n  default = \n}\n' });
    const err = await analyzeModule(files, texts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnalysisError);
    expect((err as AnalysisError).file).toBe('modules/bad/main.tf');
    expect((err as AnalysisError).message).toMatch(/^invalid HCL in modules\/bad\/main.tf: modules\/bad\/main.tf:2,\d+/);
  });

  it('strips NUL characters that Postgres JSON cannot store', async () => {
    const { files, texts } = filesOf({ 'README.md': 'a\u0000b' });
    expect((await analyzeModule(files, texts)).root.readme).toBe('ab');
  });
});
