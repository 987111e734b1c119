// Blob keys are opaque to callers but become file paths (fs store) or object names (S3
// store), so they are validated once, here, for both: a key is one or more `/`-separated
// segments of [A-Za-z0-9._-], no segment empty, `.` or `..`, and no segment starting
// with `.` (the fs store keeps its temp and metadata folders under dot-names, so a key
// can never collide with them or climb out of the root).

export class BlobKeyError extends Error {
  override readonly name = 'BlobKeyError';
}

/** Raised by `get` when a range cannot be satisfied by the stored object. */
export class BlobRangeError extends Error {
  override readonly name = 'BlobRangeError';
  constructor(
    message: string,
    readonly size: number,
  ) {
    super(message);
  }
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 512;

export function assertValidBlobKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new BlobKeyError('blob key must be a non-empty string');
  if (key.length > MAX_KEY_LENGTH) throw new BlobKeyError(`blob key longer than ${MAX_KEY_LENGTH} characters`);
  for (const segment of key.split('/')) {
    if (!SEGMENT.test(segment)) {
      throw new BlobKeyError(
        `invalid blob key ${JSON.stringify(key)}: segments must match [A-Za-z0-9_-][A-Za-z0-9._-]* (no empty, dot or dot-dot segments)`,
      );
    }
  }
}

/**
 * Clamps an inclusive range to an object of `size` bytes, as HTTP does: an `end` past
 * the object is cut to the last byte; a `start` at or past the end is unsatisfiable.
 */
export function clampRange(range: { start: number; end: number }, size: number): { start: number; end: number } {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new BlobRangeError(`invalid range ${start}-${end}`, size);
  }
  if (start >= size) throw new BlobRangeError(`range ${start}-${end} not satisfiable for ${size} bytes`, size);
  return { start, end: Math.min(end, size - 1) };
}
