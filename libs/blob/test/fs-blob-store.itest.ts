import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createFsBlobStore } from '../src';
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
