// Filesystem blob store (the default). Layout under `root`:
//   <key>             the object's bytes
//   .meta/<key>       {"contentType": ...} when one was given
//   .tmp/<random>     writes in progress
// A write streams into `.tmp` (same filesystem as the objects), fsyncs, then renames
// over the final path, so a reader opens either the previous complete object or the new
// complete one, never a partial file; a failed or aborted write leaves the previous
// object untouched and removes its temp file. A process killed mid-write (SIGKILL, power
// loss) cannot remove it: such leftovers are swept when a store is created on the root
// (`staleTempMs`, docs/operations.md "Failure behaviour").
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidBlobKey, BlobKeyError, clampRange } from './blob-key';
import type { BlobInfo, BlobPutOptions, BlobRange, BlobStore } from './blob.types';

export interface FsBlobStoreOptions {
  /** Directory holding the objects; created when missing. */
  root: string;
  /**
   * Temp files of writes untouched for this long are a killed process's leftovers and are
   * removed when the store is created (default 24 h; a write in progress touches its file
   * with every chunk, and upload URLs live minutes). 0 turns the sweep off.
   */
  staleTempMs?: number;
}

export const DEFAULT_STALE_TEMP_MS = 24 * 60 * 60 * 1000;

const META_DIR = '.meta';
const TMP_DIR = '.tmp';

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
}

/**
 * Removes the temp files under `<root>/.tmp` last modified more than `olderThanMs` ago;
 * returns how many. Writes in progress (recently modified files) are left alone.
 */
export async function sweepStaleTemp(root: string, olderThanMs: number, now: number = Date.now()): Promise<number> {
  const dir = path.join(path.resolve(root), TMP_DIR);
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile() || now - info.mtimeMs <= olderThanMs) continue;
    await unlinkIfPresent(file);
    removed++;
  }
  return removed;
}

export function createFsBlobStore(options: FsBlobStoreOptions): BlobStore {
  const root = path.resolve(options.root);
  const tmpDir = path.join(root, TMP_DIR);
  const staleTempMs = options.staleTempMs ?? DEFAULT_STALE_TEMP_MS;
  // Best effort and off the start-up path: a leftover only costs disk space.
  if (staleTempMs > 0) void sweepStaleTemp(root, staleTempMs).catch(() => undefined);

  function resolveKey(key: string, base = root): string {
    assertValidBlobKey(key);
    const full = path.resolve(base, ...key.split('/'));
    // Belt and braces: validation already forbids `..`, but never trust a join.
    if (!full.startsWith(base + path.sep)) throw new BlobKeyError(`blob key ${JSON.stringify(key)} escapes the store root`);
    return full;
  }

  async function readContentType(key: string): Promise<string | undefined> {
    try {
      const meta = JSON.parse(await readFile(resolveKey(key, path.join(root, META_DIR)), 'utf8')) as { contentType?: unknown };
      return typeof meta.contentType === 'string' ? meta.contentType : undefined;
    } catch (err) {
      if (isMissing(err) || err instanceof SyntaxError) return undefined;
      throw err;
    }
  }

  /** Streams into a temp file, fsyncs it, then renames it over `finalPath`. */
  async function writeAtomically(finalPath: string, write: (tmpPath: string) => Promise<void>): Promise<void> {
    await mkdir(tmpDir, { recursive: true });
    await mkdir(path.dirname(finalPath), { recursive: true });
    const tmp = path.join(tmpDir, randomUUID());
    try {
      await write(tmp);
      // fsync is per inode: a second descriptor flushes what the stream wrote.
      const fh = await open(tmp, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, finalPath);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  return {
    async put(key: string, body: Readable, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      const finalPath = resolveKey(key);
      const metaPath = resolveKey(key, path.join(root, META_DIR));
      let size = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          cb(null, chunk);
        },
      });
      await writeAtomically(finalPath, async (tmp) => {
        // Opened before the stream starts: createWriteStream(path) opens the file on its own
        // schedule, so a body that failed at once could reject the write before the file
        // existed, and the open, landing after writeAtomically's unlink, left it behind.
        const out = (await open(tmp, 'wx', 0o644)).createWriteStream();
        await pipeline(body, counter, out, putOptions.signal ? { signal: putOptions.signal } : {});
        if (putOptions.contentLength !== undefined && size !== putOptions.contentLength) {
          throw new Error(`blob ${key}: expected ${putOptions.contentLength} bytes, received ${size}`);
        }
      });
      // The meta file follows the bytes: a write cut short (SIGKILL mid-upload) leaves no
      // sidecar for a blob that does not exist; a reader may briefly see the new bytes with
      // the old content type, which is harmless.
      if (putOptions.contentType !== undefined) {
        const contentType = putOptions.contentType;
        await writeAtomically(metaPath, (tmp) => writeFile(tmp, JSON.stringify({ contentType }), { flag: 'wx' }));
      } else await unlinkIfPresent(metaPath);
      return putOptions.contentType === undefined ? { key, size } : { key, size, contentType: putOptions.contentType };
    },

    async get(key: string, range?: BlobRange) {
      const filePath = resolveKey(key);
      let fh: FileHandle;
      try {
        fh = await open(filePath, 'r');
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
      try {
        // fstat on the open descriptor: a concurrent rename swaps the directory entry,
        // not the inode we hold, so size and bytes always belong to the same object.
        const st = await fh.stat();
        if (!st.isFile()) {
          await fh.close();
          return null;
        }
        const contentType = await readContentType(key);
        const info: BlobInfo = contentType === undefined ? { key, size: st.size } : { key, size: st.size, contentType };
        if (range) {
          const r = clampRange(range, st.size);
          return { info, stream: fh.createReadStream({ start: r.start, end: r.end, autoClose: true }) };
        }
        return { info, stream: fh.createReadStream({ autoClose: true }) };
      } catch (err) {
        await fh.close().catch(() => undefined);
        throw err;
      }
    },

    async stat(key: string): Promise<BlobInfo | null> {
      const filePath = resolveKey(key);
      try {
        const st = await stat(filePath);
        if (!st.isFile()) return null;
        const contentType = await readContentType(key);
        return contentType === undefined ? { key, size: st.size } : { key, size: st.size, contentType };
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },

    async delete(key: string): Promise<void> {
      const filePath = resolveKey(key);
      const metaPath = resolveKey(key, path.join(root, META_DIR));
      await unlinkIfPresent(filePath);
      await unlinkIfPresent(metaPath);
    },
  };
}
