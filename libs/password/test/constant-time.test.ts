import { secretsEqual } from '../src/constant-time';

describe('secretsEqual', () => {
  it('tells equal secrets from different ones, whatever their lengths and types', () => {
    expect(secretsEqual('s.abcdef', 's.abcdef')).toBe(true);
    expect(secretsEqual('s.abcdef', 's.abcdeg')).toBe(false);
    expect(secretsEqual('s.abcdef', 's.abcde')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
    expect(secretsEqual('', 'x')).toBe(false);
    expect(secretsEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 3]))).toBe(true);
    expect(secretsEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 4]))).toBe(false);
    expect(secretsEqual('é', Buffer.from('é', 'utf8'))).toBe(true);
  });
});
