// Version constraints as the anchor checks them (hashicorp/go-version for the `version`
// operand, strict semantic versions for `semver`): a comma-separated list of
// `<op> <version>` with ops =, !=, >, <, >=, <=, ~> (pessimistic).

interface Version {
  segments: number[];
  prerelease: string;
}

const VERSION_RE = /^v?([0-9]+(?:\.[0-9]+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;
const SEMVER_RE = /^v?([0-9]+\.[0-9]+\.[0-9]+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

export function parseVersion(text: string, strict = false): Version | null {
  const m = (strict ? SEMVER_RE : VERSION_RE).exec(text.trim());
  if (!m) return null;
  const segments = (m[1] as string).split('.').map(Number);
  if (!strict) while (segments.length < 3) segments.push(0);
  return { segments, prerelease: m[2] ?? '' };
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return Math.sign(d);
    } else if (nx !== ny) return nx ? -1 : 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export function compareVersions(a: Version, b: Version): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const d = (a.segments[i] ?? 0) - (b.segments[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return comparePrerelease(a.prerelease, b.prerelease);
}

type Check = (v: Version) => boolean;

const PART_RE = /^\s*(=|!=|>=|<=|>|<|~>)?\s*(\S+)\s*$/;

/** Parses `>= 1.2, < 2.0`; null when any part is not a valid constraint. */
export function parseVersionConstraint(text: string, strict = false): Check | null {
  const checks: Check[] = [];
  for (const part of text.split(',')) {
    const m = PART_RE.exec(part);
    if (!m) return null;
    const op = m[1] ?? '=';
    const target = parseVersion(m[2] as string, strict);
    if (!target) return null;
    const written = (m[2] as string).replace(/^v/, '').split(/[-+]/)[0]?.split('.').length ?? 1;
    switch (op) {
      case '=':
        checks.push((v) => compareVersions(v, target) === 0);
        break;
      case '!=':
        checks.push((v) => compareVersions(v, target) !== 0);
        break;
      case '>':
        checks.push((v) => compareVersions(v, target) > 0);
        break;
      case '<':
        checks.push((v) => compareVersions(v, target) < 0);
        break;
      case '>=':
        checks.push((v) => compareVersions(v, target) >= 0);
        break;
      case '<=':
        checks.push((v) => compareVersions(v, target) <= 0);
        break;
      case '~>': {
        // Pessimistic: the last written segment may grow, the ones before are fixed.
        const fixed = Math.max(1, written - 1);
        checks.push((v) => {
          if (compareVersions(v, target) < 0) return false;
          for (let i = 0; i < fixed; i++) if ((v.segments[i] ?? 0) !== (target.segments[i] ?? 0)) return false;
          return true;
        });
        break;
      }
    }
    // go-version: a prerelease version only satisfies constraints naming a prerelease.
    if (target.prerelease === '') {
      const inner = checks.pop() as Check;
      checks.push((v) => v.prerelease === '' && inner(v));
    }
  }
  return checks.length === 0 ? null : (v) => checks.every((c) => c(v));
}

export function versionMatches(value: string, constraint: string, strict = false): boolean {
  const v = parseVersion(value, strict);
  const check = parseVersionConstraint(constraint, strict);
  return v !== null && check !== null && check(v);
}
