import { toSearchQuery } from './search';

describe('toSearchQuery', () => {
  it.each([
    ['vpc', { kind: 'prefix', tsquery: 'vpc:*' }],
    ['  aws  vpc ', { kind: 'prefix', tsquery: 'aws:* & vpc:*' }],
    ['terraform-aws_modules', { kind: 'prefix', tsquery: 'terraform:* & aws:* & modules:*' }],
    ['réseau 42', { kind: 'prefix', tsquery: 'réseau:* & 42:*' }],
    ['"private cloud"', { kind: 'web', text: '"private cloud"' }],
    ['network -google', { kind: 'web', text: 'network -google' }],
    ['aws or google', { kind: 'web', text: 'aws or google' }],
    ["net'work & (x)", { kind: 'web', text: "net'work & (x)" }],
    ['a:*', { kind: 'web', text: 'a:*' }],
  ])('%j', (q, want) => {
    expect(toSearchQuery(q)).toEqual(want);
  });
});
