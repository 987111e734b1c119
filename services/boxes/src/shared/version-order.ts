// Version numbers are parsed by the vagrant client with Ruby's Gem::Version (reference
// A.6), so we accept exactly what it accepts and order versions the way it does: the
// catalog's "highest matching version wins" and our `current_version` must agree.

/** Gem::Version::VERSION_PATTERN, anchored. */
const GEM_VERSION = /^[0-9]+(?:\.[0-9a-zA-Z]+)*(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export const MAX_VERSION_LENGTH = 64;

export function isValidVersion(version: string): boolean {
  return version.length <= MAX_VERSION_LENGTH && GEM_VERSION.test(version);
}

type Segment = number | string;

// Gem::Version#segments after canonicalisation: "-" becomes ".pre.", digit runs and
// letter runs are separate segments, trailing zeros (before any letter) are dropped.
function segments(version: string): Segment[] {
  const text = version.replace(/-/g, '.pre.');
  const raw = text.match(/[0-9]+|[a-z]+/gi) ?? [];
  const segs: Segment[] = raw.map((s) => (/^[0-9]+$/.test(s) ? Number(s) : s));
  const firstString = segs.findIndex((s) => typeof s === 'string');
  const numericPart = firstString === -1 ? segs : segs.slice(0, firstString);
  const rest = firstString === -1 ? [] : segs.slice(firstString);
  while (numericPart.length > 1 && numericPart[numericPart.length - 1] === 0) numericPart.pop();
  // Zeros right before the prerelease part are dropped too ("1.0.a" == "1.a").
  if (rest.length > 0) while (numericPart.length > 0 && numericPart[numericPart.length - 1] === 0) numericPart.pop();
  return [...numericPart, ...rest];
}

/** Gem::Version#<=>: negative when a < b. Prereleases (any letter) sort before releases. */
export function compareVersions(a: string, b: string): number {
  const sa = segments(a);
  const sb = segments(b);
  const n = Math.max(sa.length, sb.length);
  for (let i = 0; i < n; i++) {
    const x = sa[i] ?? 0;
    const y = sb[i] ?? 0;
    if (x === y) continue;
    if (typeof x === 'string' && typeof y === 'number') return -1;
    if (typeof x === 'number' && typeof y === 'string') return 1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return (x as string) < (y as string) ? -1 : 1;
  }
  return 0;
}

/** Highest first. */
export function sortVersionsDescending<T extends { version: string }>(items: readonly T[]): T[] {
  return [...items].sort((p, q) => compareVersions(q.version, p.version));
}
