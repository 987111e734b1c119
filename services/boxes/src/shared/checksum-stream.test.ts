import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ChecksumStream, CHECKSUM_TYPES, SizeLimitError } from './checksum-stream';

const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

describe('ChecksumStream', () => {
  it('computes all five digests in one pass and passes bytes through', async () => {
    const parts = [Buffer.from('hello '), Buffer.from('box '), Buffer.alloc(100_000, 7)];
    const whole = Buffer.concat(parts);
    const cs = new ChecksumStream();
    const out: Buffer[] = [];
    await pipeline(Readable.from(parts), cs, new Writable({ write: (c: Buffer, _e, cb) => { out.push(c); cb(); } }));
    expect(Buffer.concat(out).equals(whole)).toBe(true);
    expect(cs.size).toBe(whole.length);
    for (const type of CHECKSUM_TYPES) expect(cs.digests[type]).toBe(createHash(type).update(whole).digest('hex'));
  });

  it('fails once the size limit is passed', async () => {
    const cs = new ChecksumStream(10);
    await expect(pipeline(Readable.from([Buffer.alloc(6), Buffer.alloc(6)]), cs, sink())).rejects.toBeInstanceOf(SizeLimitError);
  });

  it('refuses to report digests before the end', () => {
    expect(() => new ChecksumStream().digests).toThrow(/after the stream ended/);
  });
});
