// The BlobStore contract, run against every implementation (fs, and S3 against s3rver).
// Each implementation's test file calls `describeBlobStoreContract` with a factory.
import { createHash, randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { BlobKeyError, BlobRangeError, type BlobStore } from '../src';

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `total` pseudo-random bytes produced in 64 KiB chunks, never held whole. */
export function generated(total: number, seed = 1): Readable {
  let sent = 0;
  let state = seed;
  return new Readable({
    read() {
      if (sent >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(65536, total - sent);
      const chunk = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i++) {
        state = (state * 1103515245 + 12345) & 0x7fffffff;
        chunk[i] = state & 0xff;
      }
      sent += n;
      this.push(chunk);
    },
  });
}

/** Emits `good` bytes then fails, like a client that disconnects mid-upload. */
function failingAfter(good: Buffer): Readable {
  let done = false;
  return new Readable({
    read() {
      if (!done) {
        done = true;
        this.push(good);
        return;
      }
      this.destroy(new Error('client went away'));
    },
  });
}

export function describeBlobStoreContract(name: string, make: () => Promise<BlobStore> | BlobStore, options: { largeBytes: number; atomicReadsDuringOverwrite: boolean }): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    beforeAll(async () => {
      store = await make();
    });

    it('round-trips bytes, size and content type', async () => {
      const body = randomBytes(100_000);
      const info = await store.put('boxes/a/1.box', Readable.from([body]), { contentType: 'application/octet-stream' });
      expect(info).toEqual({ key: 'boxes/a/1.box', size: body.length, contentType: 'application/octet-stream' });
      const got = await store.get('boxes/a/1.box');
      expect(got).not.toBeNull();
      expect(got!.info.size).toBe(body.length);
      expect(got!.info.contentType).toBe('application/octet-stream');
      expect((await readAll(got!.stream)).equals(body)).toBe(true);
      expect(await store.stat('boxes/a/1.box')).toEqual({ key: 'boxes/a/1.box', size: body.length, contentType: 'application/octet-stream' });
    });

    it('stores an empty object', async () => {
      const info = await store.put('empty', Readable.from([]));
      expect(info.size).toBe(0);
      expect((await store.stat('empty'))?.size).toBe(0);
      const got = await store.get('empty');
      expect((await readAll(got!.stream)).length).toBe(0);
    });

    it('returns null for missing keys and deletes idempotently', async () => {
      expect(await store.get('nope/missing')).toBeNull();
      expect(await store.stat('nope/missing')).toBeNull();
      await expect(store.delete('nope/missing')).resolves.toBeUndefined();
      await store.put('gone', Readable.from([Buffer.from('x')]));
      await store.delete('gone');
      expect(await store.stat('gone')).toBeNull();
      expect(await store.get('gone')).toBeNull();
    });

    it('serves inclusive byte ranges, clamps the end and refuses unsatisfiable starts', async () => {
      const body = Buffer.from('0123456789abcdef');
      await store.put('ranged', Readable.from([body]));
      const mid = await store.get('ranged', { start: 2, end: 5 });
      expect(mid!.info.size).toBe(16);
      expect((await readAll(mid!.stream)).toString()).toBe('2345');
      const tail = await store.get('ranged', { start: 10, end: 1000 });
      expect((await readAll(tail!.stream)).toString()).toBe('abcdef');
      await expect(store.get('ranged', { start: 16, end: 20 })).rejects.toBeInstanceOf(BlobRangeError);
      await expect(store.get('ranged', { start: 5, end: 2 })).rejects.toBeInstanceOf(BlobRangeError);
      expect(await store.get('missing-ranged', { start: 0, end: 1 })).toBeNull();
    });

    it('rejects keys that could escape or collide with internal names', async () => {
      for (const key of ['', '../x', 'a/../../x', '/abs', 'a//b', 'a/./b', '.meta/x', '.tmp/y', 'a/.hidden', 'a\\b', 'a b', 'x/']) {
        await expect(store.put(key, Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(BlobKeyError);
        await expect(store.get(key)).rejects.toBeInstanceOf(BlobKeyError);
        await expect(store.stat(key)).rejects.toBeInstanceOf(BlobKeyError);
        await expect(store.delete(key)).rejects.toBeInstanceOf(BlobKeyError);
      }
    });

    it('keeps the previous object when a write fails mid-stream', async () => {
      await store.put('atomic', Readable.from([Buffer.from('good old bytes')]));
      await expect(store.put('atomic', failingAfter(randomBytes(4096)))).rejects.toThrow(/client went away/);
      const got = await store.get('atomic');
      expect((await readAll(got!.stream)).toString()).toBe('good old bytes');
    });

    it('keeps the previous object when the body is shorter or longer than contentLength', async () => {
      await store.put('sized', Readable.from([Buffer.from('v1')]));
      await expect(store.put('sized', Readable.from([Buffer.from('abc')]), { contentLength: 10 })).rejects.toThrow(/expected 10 bytes/);
      await expect(store.put('sized', Readable.from([Buffer.from('abcdef')]), { contentLength: 3 })).rejects.toThrow(/3 bytes/);
      expect((await readAll((await store.get('sized'))!.stream)).toString()).toBe('v1');
      const ok = await store.put('sized', Readable.from([Buffer.from('abc')]), { contentLength: 3 });
      expect(ok.size).toBe(3);
    });

    it('keeps the previous object when the write is aborted', async () => {
      await store.put('aborted', Readable.from([Buffer.from('still here')]));
      const controller = new AbortController();
      let sent = 0;
      const slow = new Readable({
        read() {
          sent++;
          if (sent === 3) controller.abort();
          setTimeout(() => this.push(Buffer.alloc(1024, 1)), 5);
        },
      });
      await expect(store.put('aborted', slow, { signal: controller.signal })).rejects.toThrow();
      expect((await readAll((await store.get('aborted'))!.stream)).toString()).toBe('still here');
    });

    it(`streams a ${options.largeBytes >> 20} MiB object through and back with matching digest`, async () => {
      const hashIn = createHash('sha256');
      const source = generated(options.largeBytes, 7).pipe(
        new Transform({
          transform(chunk: Buffer, _enc, cb) {
            hashIn.update(chunk);
            cb(null, chunk);
          },
        }),
      );
      const info = await store.put('large/object.box', source);
      expect(info.size).toBe(options.largeBytes);
      const got = await store.get('large/object.box');
      const hashOut = createHash('sha256');
      let n = 0;
      for await (const chunk of got!.stream) {
        hashOut.update(chunk as Buffer);
        n += (chunk as Buffer).length;
      }
      expect(n).toBe(options.largeBytes);
      expect(hashOut.digest('hex')).toBe(hashIn.digest('hex'));
    });

    // s3rver writes objects in place and resets readers mid-overwrite; real S3 (and
    // MinIO) publish an object only when its upload completes, so this case runs where
    // the server under test gives that guarantee.
    if (options.atomicReadsDuringOverwrite) it('readers during an overwrite see the old or the new object, never a mix', async () => {
      const oldBody = Buffer.alloc(256 * 1024, 0x61);
      const newBody = Buffer.alloc(256 * 1024, 0x62);
      await store.put('swap', Readable.from([oldBody]));
      const writing = store.put('swap', Readable.from([newBody.subarray(0, 128 * 1024), newBody.subarray(128 * 1024)]));
      const reads = await Promise.all(
        [0, 1, 2, 3].map(async () => {
          const got = await store.get('swap');
          return readAll(got!.stream);
        }),
      );
      await writing;
      for (const r of reads) expect(r.equals(oldBody) || r.equals(newBody)).toBe(true);
      expect((await readAll((await store.get('swap'))!.stream)).equals(newBody)).toBe(true);
    });
  });
}
