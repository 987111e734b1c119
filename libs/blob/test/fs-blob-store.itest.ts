import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createFsBlobStore, sweepStaleTemp } from '../src';
import { describeBlobStoreContract } from './blob-store.contract';

let root = '';

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'blob-fs-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describeBlobStoreContract('fs', () => createFsBlobStore({ root }), { largeBytes: 24 * 1024 * 1024, atomicReadsDuringOverwrite: true });

describe('fs blob store specifics', () => {
  it('sweeps temp files a killed writer left behind, and only stale ones', async () => {
    const own = await mkdtemp(path.join(tmpdir(), 'blob-fs-sweep-'));
    try {
      await mkdir(path.join(own, '.tmp'), { recursive: true });
      await writeFile(path.join(own, '.tmp', 'killed-mid-write'), 'partial');
      await writeFile(path.join(own, '.tmp', 'in-progress'), 'partial');
      const dayAgo = new Date(Date.now() - 25 * 60 * 60 * 1000);
      await utimes(path.join(own, '.tmp', 'killed-mid-write'), dayAgo, dayAgo);
      expect(await sweepStaleTemp(own, 24 * 60 * 60 * 1000)).toBe(1);
      expect(await readdir(path.join(own, '.tmp'))).toEqual(['in-progress']);
      // The store does it itself when created on the root.
      await utimes(path.join(own, '.tmp', 'in-progress'), dayAgo, dayAgo);
      createFsBlobStore({ root: own, staleTempMs: 60 * 60 * 1000 });
      for (let i = 0; i < 100 && (await readdir(path.join(own, '.tmp'))).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await readdir(path.join(own, '.tmp'))).toEqual([]);
      // Nothing to sweep, no temp directory: no error.
      expect(await sweepStaleTemp(path.join(own, 'none'), 1)).toBe(0);
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it('leaves no temp files behind after failed writes', async () => {
    const store = createFsBlobStore({ root });
    // A body that fails at once races the temp file's creation: many of them, in parallel.
    const failing = () =>
      new Readable({
        read() {
          this.destroy(new Error('boom'));
        },
      });
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.put(`tmpcheck/${i}`, failing())));
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'fulfilled'))).toEqual(Array(50).fill('boom'));
    const tmp = await readdir(path.join(root, '.tmp')).catch(() => []);
    expect(tmp).toEqual([]);
  });

  it('lays objects out under the root by key', async () => {
    const store = createFsBlobStore({ root });
    await store.put('boxes/u/b/1.0.0/virtualbox.box', Readable.from([Buffer.from('z')]));
    expect(await readdir(path.join(root, 'boxes', 'u', 'b', '1.0.0'))).toEqual(['virtualbox.box']);
  });

  it('treats a key whose parent is a file as missing on read', async () => {
    const store = createFsBlobStore({ root });
    await store.put('parentfile', Readable.from([Buffer.from('z')]));
    expect(await store.get('parentfile/child')).toBeNull();
    expect(await store.stat('parentfile/child')).toBeNull();
    await expect(store.delete('parentfile/child')).resolves.toBeUndefined();
  });
});
