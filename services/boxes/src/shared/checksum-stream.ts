// One pass over an upload computes every checksum a provider may declare (spec
// "Provider": md5, sha1, sha256, sha384, sha512), so the stored image can be verified
// against whichever type the user declared, now or later, without reading it again.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export const CHECKSUM_TYPES = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const;
export type ChecksumType = (typeof CHECKSUM_TYPES)[number];
export type Digests = Record<ChecksumType, string>;

/** Hex length of each digest: what a declared checksum must look like. */
export const CHECKSUM_HEX_LENGTH: Record<ChecksumType, number> = { md5: 32, sha1: 40, sha256: 64, sha384: 96, sha512: 128 };

export class SizeLimitError extends Error {
  override readonly name = 'SizeLimitError';
  constructor(readonly limit: number) {
    super(`upload larger than the limit of ${limit} bytes`);
  }
}

/** A pass-through stream that hashes and counts what flows through it. */
export class ChecksumStream extends Transform {
  private readonly hashes: Record<ChecksumType, Hash>;
  private bytes = 0;
  private result: Digests | undefined;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
    this.hashes = {
      md5: createHash('md5'),
      sha1: createHash('sha1'),
      sha256: createHash('sha256'),
      sha384: createHash('sha384'),
      sha512: createHash('sha512'),
    };
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new SizeLimitError(this.maxBytes));
      return;
    }
    for (const type of CHECKSUM_TYPES) this.hashes[type].update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.result = {
      md5: this.hashes.md5.digest('hex'),
      sha1: this.hashes.sha1.digest('hex'),
      sha256: this.hashes.sha256.digest('hex'),
      sha384: this.hashes.sha384.digest('hex'),
      sha512: this.hashes.sha512.digest('hex'),
    };
    callback();
  }

  get size(): number {
    return this.bytes;
  }

  /** Available once the stream has ended. */
  get digests(): Digests {
    if (!this.result) throw new Error('digests are only available after the stream ended');
    return this.result;
  }
}
