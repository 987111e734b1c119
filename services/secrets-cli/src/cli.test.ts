// Unit tests of the CLI's parsing and formatting (no I/O: usage errors stop before any request).
import { envBool, envValue } from './cli-context';
import { EXIT_LOCAL, normaliseArgs, runCli } from './cli';
import { cell, kvTable, table } from './format';

describe('secrets CLI', () => {
  it('turns Go-style single-dash flags into commander long flags, leaving the rest', () => {
    expect(normaliseArgs(['kv', 'get', '-format=json', '-field', 'a', 'secret/x', '-h', '--mount=s', '-', 'a=-b', '--', '-x=1'])).toEqual([
      'kv', 'get', '--format=json', '--field', 'a', 'secret/x', '-h', '--mount=s', '-', 'a=-b', '--', '-x=1',
    ]);
    expect(normaliseArgs(['-ns=team', '-tls-skip-verify'])).toEqual(['--ns=team', '--tls-skip-verify']);
  });

  it('reads SECRETS_* before VAULT_* and Go booleans', () => {
    expect(envValue({ SECRETS_ADDR: 'a', VAULT_ADDR: 'b' }, 'ADDR')).toBe('a');
    expect(envValue({ VAULT_ADDR: 'b' }, 'ADDR')).toBe('b');
    expect(envValue({ SECRETS_ADDR: '', VAULT_ADDR: 'b' }, 'ADDR')).toBe('b');
    expect(envBool('true', 'X')).toBe(true);
    expect(envBool('0', 'X')).toBe(false);
    expect(envBool(undefined, 'X')).toBe(false);
    expect(() => envBool('yes', 'X')).toThrow('Invalid value for X: "yes"');
  });

  it('formats tables as the Vault CLI does', () => {
    expect(table(['Key', 'Value'], [['a', '1'], ['longer', 'x']])).toBe('Key       Value\n---       -----\na         1\nlonger    x');
    expect(kvTable({ b: [1, 'x'], a: null, c: { z: 1, y: 'q' } })).toBe('Key    Value\n---    -----\na      n/a\nb      [1 x]\nc      map[y:q z:1]');
    expect(cell(true)).toBe('true');
  });

  it('answers usage errors with exit code 1 and a message, before any request', async () => {
    const err: string[] = [];
    const io = { env: { SECRETS_ADDR: 'http://127.0.0.1:1' }, home: '/nonexistent', stdout: () => undefined, stderr: (s: string) => void err.push(s), readStdin: async () => '' };
    expect(await runCli(['kv', 'get'], io)).toBe(EXIT_LOCAL);
    expect(err.join('')).toBe('Error: Not enough arguments (expected 1, got 0)\n');
    expect(await runCli(['token', 'create', '-num-uses=many'], io)).toBe(EXIT_LOCAL);
    expect(await runCli(['status', '-format=xml'], io)).toBe(EXIT_LOCAL);
    expect(err.join('')).toContain('Invalid output format: xml');
  });
});
