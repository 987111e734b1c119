// Vault-style duration fields: an integer number of seconds, or a Go duration string
// ("1h30m", "90s"; a bare number string is seconds). Rendering follows Go's
// time.Duration.String() for the fields Vault prints that way (`delete_version_after`).
import { parseDuration } from '@selfstack/config';

/** Seconds (rounded down) or throws a RangeError with a message naming the input. */
export function parseSeconds(value: unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`invalid duration ${String(value)}`);
    return Math.floor(value);
  }
  if (typeof value === 'string') {
    if (value.trim() === '') return 0;
    return Math.floor(parseDuration(value) / 1000);
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

/** RFC 3339 with fractional seconds trimmed of trailing zeros, as Go's RFC3339Nano prints. */
export function rfc3339(ms: number): string {
  const iso = new Date(ms).toISOString();
  // `...T12:34:56.780Z` -> `...T12:34:56.78Z`; `.000Z` -> `Z` (Go's RFC3339Nano). Done by
  // hand: this runs several times per KV response and the regex replace showed up in profiles.
  let end = iso.length - 1; // the `Z`
  const dot = iso.lastIndexOf('.', end);
  if (dot === -1) return iso;
  while (end > dot + 1 && iso.charCodeAt(end - 1) === 48) end--;
  return end === dot + 1 ? `${iso.slice(0, dot)}Z` : `${iso.slice(0, end)}Z`;
}
