import zlib from 'node:zlib';
import { makeTar, makeTarGz, makeZip, renameInZip, sampleModuleTarGz, sampleModuleZip } from '../../../test/archive-fixtures';
import { ArchiveError, detectArchiveFormat, inspectArchive, normaliseEntryPath } from './archive';
import type { ArchiveLimits } from './archive.types';

const limits: ArchiveLimits = { maxUnpackedBytes: 1024 * 1024, maxEntries: 100, maxTextFileBytes: 64 * 1024 };
const wantTf = (p: string) => p.endsWith('.tf') || /readme/i.test(p);

async function expectArchiveError(p: Promise<unknown>, kind: 'invalid' | 'too-large', pattern: RegExp) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ArchiveError);
  expect((err as ArchiveError).kind).toBe(kind);
  expect((err as ArchiveError).message).toMatch(pattern);
}

describe('detectArchiveFormat', () => {
  it('recognises gzip and zip by magic bytes only', async () => {
    expect(detectArchiveFormat(makeTarGz([{ name: 'a.tf', content: '' }]))).toBe('tar.gz');
    expect(detectArchiveFormat(await makeZip([{ name: 'a.tf', content: '' }]))).toBe('zip');
    expect(detectArchiveFormat(await makeZip([]))).toBe('zip');
    expect(detectArchiveFormat(makeTar([{ name: 'a.tf' }]))).toBeNull();
    expect(detectArchiveFormat(Buffer.from('hello'))).toBeNull();
    expect(detectArchiveFormat(Buffer.alloc(0))).toBeNull();
  });
});

describe('normaliseEntryPath', () => {
  it.each([
    ['./main.tf', 'main.tf'],
    ['a//b/./c.tf', 'a/b/c.tf'],
    ['dir/', 'dir'],
    ['./', ''],
  ])('%s -> %s', (raw, want) => {
    expect(normaliseEntryPath(raw)).toBe(want);
  });
  it.each([
    ['../evil.tf', /climbs out/],
    ['a/../../evil.tf', /climbs out/],
    ['/etc/passwd', /absolute path/],
    ['C:/windows/x', /drive letter/],
    ['..\\evil.tf', /backslash/],
    ['a\u0000b', /control characters/],
    ['', /empty name/],
  ])('refuses %j', (raw, pattern) => {
    expect(() => normaliseEntryPath(raw)).toThrow(pattern);
  });
});

describe('inspectArchive: tar.gz', () => {
  it('lists files and returns the requested texts', async () => {
    const got = await inspectArchive(sampleModuleTarGz(), limits, wantTf);
    expect(got.format).toBe('tar.gz');
    expect(got.files).toEqual(['README.md', 'main.tf', 'variables.tf', 'outputs.tf', 'modules/policy/README.md', 'modules/policy/main.tf', 'examples/basic/main.tf']);
    expect(got.texts.get('README.md')).toBe('# Demo\n\nA demo module.\n');
    expect(got.texts.get('modules/policy/main.tf')).toContain('aws_iam_policy');
    expect(got.entryCount).toBe(7);
    expect(got.unpackedBytes).toBeGreaterThan(100);
  });

  it('accepts ./-prefixed names and directory entries', async () => {
    const buf = makeTarGz([{ name: './', type: '5' }, { name: './modules/', type: '5' }, { name: './main.tf', content: 'x' }]);
    const got = await inspectArchive(buf, limits, wantTf);
    expect(got.files).toEqual(['main.tf']);
  });

  it.each([
    ['../evil.tf', /climbs out/],
    ['/abs.tf', /absolute path/],
    ['a/../../evil.tf', /climbs out/],
  ])('refuses the entry %j', async (name, pattern) => {
    await expectArchiveError(inspectArchive(makeTarGz([{ name: 'ok.tf', content: '' }, { name, content: 'x' }]), limits, wantTf), 'invalid', pattern);
  });

  it('refuses symbolic and hard links, and devices', async () => {
    await expectArchiveError(inspectArchive(makeTarGz([{ name: 'link', type: '2', linkname: '/etc/passwd' }]), limits, wantTf), 'invalid', /"link" is a link \(to "\/etc\/passwd"\)/);
    await expectArchiveError(inspectArchive(makeTarGz([{ name: 'a', content: '' }, { name: 'hard', type: '1', linkname: 'a' }]), limits, wantTf), 'invalid', /is a link/);
    await expectArchiveError(inspectArchive(makeTarGz([{ name: 'dev', type: '3' }]), limits, wantTf), 'invalid', /CharacterDevice; only files and directories/);
  });

  it('refuses duplicate files', async () => {
    await expectArchiveError(inspectArchive(makeTarGz([{ name: 'main.tf', content: 'a' }, { name: './main.tf', content: 'b' }]), limits, wantTf), 'invalid', /"main.tf" more than once/);
  });

  it('stops a gzip bomb at the unpacked-size limit', async () => {
    const bomb = makeTarGz([{ name: 'zeros.bin', content: Buffer.alloc(8 * 1024 * 1024) }]);
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expectArchiveError(inspectArchive(bomb, limits, wantTf), 'too-large', /unpacks to more than 1048576 bytes/);
  });

  it('stops a bomb of many small files at the sum limit', async () => {
    const files = Array.from({ length: 40 }, (_, i) => ({ name: `f${i}.bin`, content: Buffer.alloc(40 * 1024) }));
    await expectArchiveError(inspectArchive(makeTarGz(files), { ...limits, maxEntries: 1000 }, wantTf), 'too-large', /unpacks to more than/);
  });

  it('refuses too many entries', async () => {
    const files = Array.from({ length: 101 }, (_, i) => ({ name: `f${i}.txt`, content: '' }));
    await expectArchiveError(inspectArchive(makeTarGz(files), limits, wantTf), 'too-large', /more than 100 entries/);
  });

  it('refuses an oversized .tf but truncates an oversized README', async () => {
    await expectArchiveError(inspectArchive(makeTarGz([{ name: 'big.tf', content: 'x'.repeat(70_000) }]), limits, wantTf), 'too-large', /big.tf is larger than 65536 bytes/);
    const got = await inspectArchive(makeTarGz([{ name: 'README.md', content: 'y'.repeat(70_000) }]), limits, wantTf);
    expect(got.texts.get('README.md')).toHaveLength(65536);
    expect(got.truncated).toEqual(['README.md']);
  });

  it('reports gzip that is not a tar, truncated gzip and garbage', async () => {
    await expectArchiveError(inspectArchive(zlib.gzipSync(Buffer.from('just some text, not a tar archive '.repeat(30))), limits, wantTf), 'invalid', /not a valid tar archive/);
    const good = sampleModuleTarGz();
    await expectArchiveError(inspectArchive(good.subarray(0, good.length - 40), limits, wantTf), 'invalid', /not a valid (gzip stream|tar archive)/);
    await expectArchiveError(inspectArchive(Buffer.from([0x1f, 0x8b, 1, 2, 3, 4, 5]), limits, wantTf), 'invalid', /not a valid gzip stream/);
    await expectArchiveError(inspectArchive(Buffer.from('PK not really'), limits, wantTf), 'invalid', /unsupported archive format/);
  });
});

describe('inspectArchive: zip', () => {
  it('lists files and returns the requested texts', async () => {
    const got = await inspectArchive(await sampleModuleZip(), limits, wantTf);
    expect(got.format).toBe('zip');
    expect(got.files).toContain('modules/policy/main.tf');
    expect(got.texts.get('variables.tf')).toContain('variable "region"');
  });

  it('refuses ../ and absolute names smuggled past the zip writer', async () => {
    const zip = await makeZip([{ name: 'ok.tf', content: '' }, { name: 'xx/evil.tf', content: 'x' }]);
    await expectArchiveError(inspectArchive(renameInZip(zip, 'xx/evil.tf', '../evil.tf'), limits, wantTf), 'invalid', /(climbs out|invalid relative path|not a valid zip)/);
    await expectArchiveError(inspectArchive(renameInZip(zip, 'xx/evil.tf', '/x/evil.tf'), limits, wantTf), 'invalid', /(absolute path|not a valid zip)/);
  });

  it('refuses symlinks', async () => {
    const zip = await makeZip([{ name: 'link.tf', content: '/etc/passwd', mode: 0o120777 }]);
    await expectArchiveError(inspectArchive(zip, limits, wantTf), 'invalid', /"link.tf" is a symbolic link/);
  });

  it('stops a zip bomb (highly compressible entry) at the unpacked-size limit', async () => {
    const bomb = await makeZip([{ name: 'zeros.bin', content: Buffer.alloc(8 * 1024 * 1024) }]);
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expectArchiveError(inspectArchive(bomb, limits, wantTf), 'too-large', /unpacks to more than/);
  });

  it('stops an entry whose header lies about its size', async () => {
    const zip = await makeZip([{ name: 'lie.bin', content: Buffer.alloc(2 * 1024 * 1024) }]);
    // Patch the declared uncompressed size (central directory, offset 24 of the entry
    // record) down to 10 bytes: the stream must still be cut at the real byte count.
    const cd = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    const patched = Buffer.from(zip);
    patched.writeUInt32LE(10, cd + 24);
    await expectArchiveError(inspectArchive(patched, limits, wantTf), 'invalid', /not a valid zip archive|too many bytes/);
  });

  it('refuses too many entries before reading them', async () => {
    const zip = await makeZip(Array.from({ length: 101 }, (_, i) => ({ name: `f${i}`, content: '' })));
    await expectArchiveError(inspectArchive(zip, limits, wantTf), 'too-large', /more than 100 entries/);
  });

  it('reports a truncated zip', async () => {
    const zip = await sampleModuleZip();
    await expectArchiveError(inspectArchive(zip.subarray(0, zip.length - 30), limits, wantTf), 'invalid', /not a valid zip archive/);
  });
});
