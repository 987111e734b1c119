import { bearerToken, requestToken } from '../src';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER   abc  ', 'abc'],
    ['  Bearer\tabc', 'abc'],
    // RFC 6750 tokens have no spaces: the first word is the token (Nomad's parseToken).
    ['Bearer abc def', 'abc'],
  ])('%j -> %j', (header, token) => expect(bearerToken(header)).toBe(token));

  it.each(['Bearer', 'Bearer   ', 'Basic abc', 'Bearerabc', 'Token abc', ''])('%j has none', (header) => expect(bearerToken(header)).toBeUndefined());
});

describe('requestToken', () => {
  const VAULT = ['x-secrets-token', 'x-vault-token', 'authorization'];
  const REGISTRY = ['authorization', 'x-registry-token'];

  it('takes the first source that has a credential, in the order given', () => {
    expect(requestToken({ 'x-secrets-token': 'a', 'x-vault-token': 'b', authorization: 'Bearer c' }, VAULT)).toBe('a');
    expect(requestToken({ 'x-vault-token': ' b ', authorization: 'Bearer c' }, VAULT)).toBe('b');
    expect(requestToken({ authorization: 'Bearer c', 'x-registry-token': 'd' }, REGISTRY)).toBe('c');
    expect(requestToken({ authorization: 'Basic c', 'x-registry-token': 'd' }, REGISTRY)).toBe('d');
  });

  it('skips blank values and other schemes, and reads only the headers named', () => {
    expect(requestToken({ 'x-secrets-token': '  ', 'x-vault-token': 'b' }, VAULT)).toBe('b');
    expect(requestToken({ authorization: 'Bearer' }, VAULT)).toBeUndefined();
    expect(requestToken({ 'x-nomad-token': 'n' }, VAULT)).toBeUndefined();
    expect(requestToken({}, VAULT)).toBeUndefined();
    expect(requestToken({ 'x-vault-token': ['x', 'y'] as unknown as string }, VAULT)).toBe('x');
  });
});
