import { checksumMatches, migrationChecksum, migrationsSchemaFromUrl } from './migrate';

describe('migration checksums', () => {
  it('is the zero-padded lowercase hex SHA-256 of the script (Prisma checksum.rs test vector)', () => {
    expect(migrationChecksum('hello')).toBe('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
    expect(migrationChecksum(Buffer.from('hello'))).toBe(migrationChecksum('hello'));
  });

  it('matches regardless of LF / CRLF line endings', () => {
    const lf = 'ab\ncd\nef\n';
    const crlf = 'ab\r\ncd\r\nef\r\n';
    expect(checksumMatches(lf, migrationChecksum(crlf))).toBe(true);
    expect(checksumMatches(crlf, migrationChecksum(lf))).toBe(true);
  });

  it('accepts the old non-zero-padded format (prisma-engines#1887)', () => {
    const digest = Buffer.from(migrationChecksum('abc'), 'hex');
    const old = Array.from(digest, (b) => b.toString(16)).join('');
    expect(old.length).toBeLessThan(64); // sha256("abc") has bytes below 0x10
    expect(checksumMatches('abc', old)).toBe(true);
  });

  it('rejects a changed script', () => {
    expect(checksumMatches('abc', migrationChecksum('abcd'))).toBe(false);
    expect(checksumMatches('abc\n', migrationChecksum('abc'))).toBe(false);
  });
});

describe('migrationsSchemaFromUrl', () => {
  it('follows the URL schema parameter like Prisma, defaulting to public', () => {
    expect(migrationsSchemaFromUrl('postgresql://u@h:5432/db')).toBe('public');
    expect(migrationsSchemaFromUrl('postgresql://u@h:5432/db?schema=app')).toBe('app');
  });
});
