// Vault-style duration fields: an integer number of seconds, or a Go duration string
// ("1h30m", "90s"; a bare number string is seconds). Rendering follows Go's
// time.Duration.String() for the fields Vault prints that way (`delete_version_after`).
import { parseDuration } from '@selfstack/config';
import { AppError } from '@selfstack/errors';

/** Seconds (rounded down) or throws a RangeError with a message naming the input. */
/**
 * The longest duration Go's time.Duration (int64 nanoseconds) holds, in whole seconds. A
 * longer one is refused (Go's ParseDuration says "invalid duration" on overflow); accepted,
 * it would be stored and then break every answer that turns it into a time (issue 29's
 * body sweep: a KV delete_version_after of 9e18 s made every version's deletion_time throw).
 */
export const MAX_DURATION_SECONDS = 9_223_372_036;

export function parseSeconds(value: unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > MAX_DURATION_SECONDS) throw new RangeError(`invalid duration ${String(value)}`);
    return Math.floor(value);
  }
  if (typeof value === 'string') {
    if (value.trim() === '') return 0;
    const seconds = Math.floor(parseDuration(value) / 1000);
    if (!Number.isFinite(seconds) || seconds > MAX_DURATION_SECONDS) throw new RangeError(`invalid duration ${JSON.stringify(value)}`);
    return seconds;
  }
  throw new RangeError(`invalid duration ${JSON.stringify(value)}`);
}

/** Go's Duration.String() for whole seconds: 0s, 45s, 1m0s, 3h25m19s. */
export function goDuration(seconds: number): string {
  if (seconds <= 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

// The last whole second formatted (`2026-11-25T15:05:51`): a KV write or read formats
// times in the same second again and again; only the milliseconds then differ.
let lastSecond = Number.NaN;
let lastPrefix = '';

/** RFC 3339 with fractional seconds trimmed of trailing zeros, as Go's RFC3339Nano prints. */
export function rfc3339(ms: number): string {
  if (!Number.isSafeInteger(ms)) return rfc3339Slow(ms);
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    const iso = new Date(second * 1000).toISOString();
    // Years 0-9999 only (`YYYY-MM-DDTHH:MM:SS.000Z`); others keep toISOString's form.
    if (iso.length !== 24) return rfc3339Slow(ms);
    lastSecond = second;
    lastPrefix = iso.slice(0, 19);
  }
  // `.780` -> `.78`, `.000` -> nothing (Go's RFC3339Nano trims trailing zeros).
  const frac = ms - second * 1000;
  if (frac === 0) return `${lastPrefix}Z`;
  if (frac % 100 === 0) return `${lastPrefix}.${frac / 100}Z`;
  if (frac % 10 === 0) return `${lastPrefix}.${String(frac / 10).padStart(2, '0')}Z`;
  return `${lastPrefix}.${String(frac).padStart(3, '0')}Z`;
}

function rfc3339Slow(ms: number): string {
  const iso = new Date(ms).toISOString();
  let end = iso.length - 1; // the `Z`
  const dot = iso.lastIndexOf('.', end);
  if (dot === -1) return iso;
  while (end > dot + 1 && iso.charCodeAt(end - 1) === 48) end--;
  return end === dot + 1 ? `${iso.slice(0, dot)}Z` : `${iso.slice(0, end)}Z`;
}

/**
 * A duration field of a request (seconds or a Go duration string) as seconds; undefined
 * when absent; a 400 naming the field when it is not a duration.
 */
export function secondsField(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseSeconds(value);
  } catch {
    throw new AppError(400, [`invalid value for ${JSON.stringify(field)}: ${JSON.stringify(value)}`]);
  }
}
