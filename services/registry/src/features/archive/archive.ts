// Reading uploaded module archives (.tar.gz and .zip) safely, in memory, without ever
// writing an entry to disk. Everything a hostile archive can try is refused here, before
// anything is stored, because the same bytes are later served to Terraform clients
// (go-getter unpacks them on the user's machine):
//   - path tricks: absolute paths, `..` segments, backslashes, drive letters, control
//     characters, duplicate entries;
//   - links and special files (symlinks, hard links, devices, FIFOs);
//   - bombs: the uncompressed bytes are counted as they stream out of gzip/deflate, and
//     reading stops as soon as the limit is passed, whatever the headers claim;
//   - too many entries, oversized `.tf` files, encrypted or unknown zip compression.
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import type { ArchiveFormat, ArchiveLimits, InspectedArchive } from './archive.types';

export type ArchiveErrorKind = 'invalid' | 'too-large';

export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';
  constructor(
    readonly kind: ArchiveErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** By magic bytes, never by file name or Content-Type (both are caller-controlled). */
export function detectArchiveFormat(buf: Buffer): ArchiveFormat | null {
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return 'tar.gz';
  // Local file header, or the end-of-central-directory record of an empty zip.
  if (buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && ((buf[2] === 3 && buf[3] === 4) || (buf[2] === 5 && buf[3] === 6))) {
    return 'zip';
  }
  return null;
}

export const ARCHIVE_CONTENT_TYPES: Record<ArchiveFormat, string> = {
  'tar.gz': 'application/gzip',
  zip: 'application/zip',
};

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Normalises an entry name to a relative `a/b/c` path (directories keep no trailing
 * slash) or throws an ArchiveError saying what is wrong with it.
 */
export function normaliseEntryPath(raw: string): string {
  const shown = JSON.stringify(raw);
  if (raw.length === 0) throw new ArchiveError('invalid', 'archive entry with an empty name');
  if (raw.length > 1024) throw new ArchiveError('invalid', `archive entry name longer than 1024 characters: ${shown.slice(0, 80)}...`);
  if (CONTROL.test(raw)) throw new ArchiveError('invalid', `archive entry ${shown} contains control characters`);
  if (raw.includes('\\')) throw new ArchiveError('invalid', `archive entry ${shown} contains a backslash`);
  if (raw.startsWith('/')) throw new ArchiveError('invalid', `archive entry ${shown} is an absolute path`);
  if (/^[A-Za-z]:/.test(raw)) throw new ArchiveError('invalid', `archive entry ${shown} starts with a drive letter`);
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..')) throw new ArchiveError('invalid', `archive entry ${shown} climbs out of the archive ("..")`);
  return segments.join('/');
}

interface Collector {
  readonly result: InspectedArchive;
  /** Registers an entry; returns whether its text should be captured. */
  addEntry(rawPath: string, kind: 'file' | 'dir'): { path: string; capture: boolean } | null;
  /** Counts `n` more uncompressed bytes; throws once past the limit. */
  countBytes(n: number): void;
}

function createCollector(format: ArchiveFormat, limits: ArchiveLimits, wantText: (path: string) => boolean): Collector {
  const result: InspectedArchive = { format, files: [], texts: new Map(), truncated: [], unpackedBytes: 0, entryCount: 0 };
  const seen = new Set<string>();
  return {
    result,
    addEntry(rawPath, kind) {
      result.entryCount += 1;
      if (result.entryCount > limits.maxEntries) {
        throw new ArchiveError('too-large', `archive has more than ${limits.maxEntries} entries`);
      }
      const path = normaliseEntryPath(rawPath);
      if (path === '') return null; // "./" itself
      if (seen.has(path)) {
        // Directories may legitimately repeat in sloppy tars; files may not: which copy
        // would a client see?
        if (kind === 'dir') return null;
        throw new ArchiveError('invalid', `archive contains ${JSON.stringify(path)} more than once`);
      }
      seen.add(path);
      if (kind === 'dir') return null;
      result.files.push(path);
      return { path, capture: wantText(path) };
    },
    countBytes(n) {
      result.unpackedBytes += n;
      if (result.unpackedBytes > limits.maxUnpackedBytes) {
        throw new ArchiveError('too-large', `archive unpacks to more than ${limits.maxUnpackedBytes} bytes`);
      }
    },
  };
}

/** Captures an entry's text up to the per-file limit. `.tf` files over it are refused. */
function createTextSink(path: string, limits: ArchiveLimits, collector: Collector) {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let bytes = 0;
  let truncated = false;
  return {
    write(chunk: Buffer) {
      if (truncated) return;
      if (bytes + chunk.length > limits.maxTextFileBytes) {
        if (path.endsWith('.tf')) {
          throw new ArchiveError('too-large', `${path} is larger than ${limits.maxTextFileBytes} bytes`);
        }
        text += decoder.write(chunk.subarray(0, limits.maxTextFileBytes - bytes));
        truncated = true;
        collector.result.truncated.push(path);
        return;
      }
      bytes += chunk.length;
      text += decoder.write(chunk);
    },
    end() {
      text += decoder.end();
      collector.result.texts.set(path, text);
    },
  };
}

async function inspectTarGz(buf: Buffer, limits: ArchiveLimits, wantText: (path: string) => boolean): Promise<InspectedArchive> {
  const collector = createCollector('tar.gz', limits, wantText);
  const parser = new Parser({ strict: true });
  let failure: Error | null = null;
  const fail = (err: unknown) => {
    if (!failure) failure = err instanceof Error ? err : new Error(String(err));
  };

  parser.on('entry', (entry: ReadEntry) => {
    if (failure) {
      entry.resume();
      return;
    }
    try {
      const type = entry.type;
      if (type === 'GlobalExtendedHeader' || type === 'ExtendedHeader' || type === 'NextFileHasLongPath' || type === 'NextFileHasLongLinkpath') {
        entry.resume();
        return;
      }
      let kind: 'file' | 'dir';
      if (type === 'File' || type === 'OldFile' || type === 'ContiguousFile') kind = 'file';
      else if (type === 'Directory') kind = 'dir';
      else if (type === 'SymbolicLink' || type === 'Link') {
        throw new ArchiveError('invalid', `archive entry ${JSON.stringify(entry.path)} is a link (to ${JSON.stringify(entry.linkpath ?? '')}); links are not allowed`);
      } else {
        throw new ArchiveError('invalid', `archive entry ${JSON.stringify(entry.path)} is a ${type}; only files and directories are allowed`);
      }
      const added = collector.addEntry(entry.path, kind);
      const sink = added?.capture ? createTextSink(added.path, limits, collector) : null;
      entry.on('data', (chunk: Buffer) => {
        if (failure) return;
        try {
          collector.countBytes(chunk.length);
          sink?.write(chunk);
        } catch (err) {
          fail(err);
        }
      });
      entry.on('end', () => {
        if (!failure) sink?.end();
      });
    } catch (err) {
      fail(err);
      entry.resume();
    }
  });
  parser.on('error', (err: Error & { code?: string }) => {
    fail(new ArchiveError('invalid', `not a valid tar archive inside the gzip stream: ${err.message.replace(/^TAR_[A-Z_]+: /, '')}`));
  });
  const ended = new Promise<void>((resolve) => parser.on('end', () => resolve()));

  // gunzip ourselves (rather than letting the parser do it) so that every decompressed
  // byte passes the counter before the tar parser buffers it.
  const gunzip = zlib.createGunzip();
  Readable.from([buf]).pipe(gunzip);
  let unzipped = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      unzipped += chunk.length;
      // The tar container adds at most headers + padding per entry; bound it with the
      // same limit plus some slack so a bomb of zero blocks stops early too.
      if (unzipped > limits.maxUnpackedBytes + 512 * (limits.maxEntries * 3 + 2) + 10240) {
        throw new ArchiveError('too-large', `archive unpacks to more than ${limits.maxUnpackedBytes} bytes`);
      }
      parser.write(chunk);
      if (failure) break;
    }
  } catch (err) {
    gunzip.destroy();
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError('invalid', `not a valid gzip stream: ${(err as Error).message}`);
  }
  gunzip.destroy();
  if (failure) throw failure;
  parser.end();
  await ended;
  if (failure) throw failure;
  return collector.result;
}

function openZip(buf: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) reject(new ArchiveError('invalid', `not a valid zip archive: ${err?.message ?? 'unreadable'}`));
      else resolve(zip);
    });
  });
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

async function inspectZip(buf: Buffer, limits: ArchiveLimits, wantText: (path: string) => boolean): Promise<InspectedArchive> {
  const collector = createCollector('zip', limits, wantText);
  const zip = await openZip(buf);
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw new ArchiveError('too-large', `archive has more than ${limits.maxEntries} entries`);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (err: unknown) => {
        reject(err instanceof ArchiveError ? err : new ArchiveError('invalid', `not a valid zip archive: ${(err as Error).message}`));
      };
      zip.on('error', fail);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        try {
          const name = entry.fileName;
          // Unix "version made by" carries the mode in the high 16 bits.
          const mode = (entry.versionMadeBy >> 8) === 3 ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
          const isDir = name.endsWith('/') || mode === S_IFDIR;
          if (mode === S_IFLNK) {
            throw new ArchiveError('invalid', `archive entry ${JSON.stringify(name)} is a symbolic link; links are not allowed`);
          }
          if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
            throw new ArchiveError('invalid', `archive entry ${JSON.stringify(name)} is a special file; only files and directories are allowed`);
          }
          if (entry.isEncrypted()) throw new ArchiveError('invalid', `archive entry ${JSON.stringify(name)} is encrypted`);
          const added = collector.addEntry(name, isDir ? 'dir' : 'file');
          if (isDir) {
            zip.readEntry();
            return;
          }
          if (!entry.canDecodeFileData()) {
            throw new ArchiveError('invalid', `archive entry ${JSON.stringify(name)} uses unsupported compression method ${entry.compressionMethod}`);
          }
          // Cheap early refusal on declared sizes; the real guard is the byte counter.
          if (collector.result.unpackedBytes + entry.uncompressedSize > limits.maxUnpackedBytes) {
            throw new ArchiveError('too-large', `archive unpacks to more than ${limits.maxUnpackedBytes} bytes`);
          }
          const sink = added?.capture ? createTextSink(added.path, limits, collector) : null;
          zip.openReadStream(entry, (err, stream) => {
            if (err || !stream) {
              fail(err ?? new Error('cannot open entry'));
              return;
            }
            let done = false;
            stream.on('data', (chunk: Buffer) => {
              if (done) return;
              try {
                collector.countBytes(chunk.length);
                sink?.write(chunk);
              } catch (e) {
                done = true;
                stream.destroy();
                fail(e);
              }
            });
            stream.on('error', (e: Error) => {
              if (!done) {
                done = true;
                fail(e);
              }
            });
            stream.on('end', () => {
              if (done) return;
              done = true;
              sink?.end();
              zip.readEntry();
            });
          });
        } catch (err) {
          fail(err);
        }
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return collector.result;
}

/**
 * Checks and reads an archive held in memory (uploads are size-limited before this is
 * called). `wantText(path)` selects the files whose text is returned.
 */
export async function inspectArchive(buf: Buffer, limits: ArchiveLimits, wantText: (path: string) => boolean): Promise<InspectedArchive> {
  const format = detectArchiveFormat(buf);
  if (format === null) {
    throw new ArchiveError('invalid', 'unsupported archive format: upload a .tar.gz (gzip-compressed tar) or a .zip archive');
  }
  return format === 'zip' ? inspectZip(buf, limits, wantText) : inspectTarGz(buf, limits, wantText);
}
