// ACL evaluation (issue 3, item 4; reference §6). Pure domain logic: compile the rules of
// a token's policies once, then answer "which capabilities does this path grant?".
//
// Matching: an exact pattern wins outright; otherwise every glob pattern (`*` as the last
// character = prefix, `+` = exactly one path segment) that matches competes and the
// highest-priority one applies. Identical patterns from different policies are unioned;
// `deny` on the winning pattern denies everything (also `sudo`).

export const CAP = {
  deny: 1,
  create: 2,
  read: 4,
  update: 8,
  delete: 16,
  list: 32,
  sudo: 64,
  patch: 128,
  subscribe: 256,
  recover: 512,
  scan: 1024,
} as const;

export type CapabilityName = keyof typeof CAP;
export const CAPABILITY_NAMES = Object.keys(CAP) as CapabilityName[];

export function isCapabilityName(name: string): name is CapabilityName {
  return Object.prototype.hasOwnProperty.call(CAP, name);
}

export interface PolicyRule {
  readonly pattern: string;
  readonly capabilities: readonly CapabilityName[];
}

export interface PolicyDocument {
  readonly name: string;
  readonly rules: readonly PolicyRule[];
}

interface CompiledRule {
  readonly pattern: string;
  caps: number;
  readonly regex: RegExp;
  readonly firstWildcard: number;
  readonly endsWithStar: boolean;
  readonly plusCount: number;
}

export interface Acl {
  readonly root: boolean;
  /** Capability bitmask granted on `path` (0 when nothing matches; `CAP.deny` when denied). */
  capabilities(path: string): number;
  allows(path: string, cap: CapabilityName): boolean;
  /** Sorted names as `sys/capabilities-self` reports them. */
  capabilityNames(path: string): string[];
  /**
   * Whether any rule gives a capability on the mount path `mountPath` (ending in `/`) or
   * on a path under it: the anchor's `hasMountAccess`, which decides what
   * `sys/internal/ui/mounts` shows.
   */
  hasMountAccess(mountPath: string): boolean;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compileRule(pattern: string, caps: number): CompiledRule {
  const endsWithStar = pattern.endsWith('*');
  const body = endsWithStar ? pattern.slice(0, -1) : pattern;
  const segments = body.split('/');
  let plusCount = 0;
  const source = segments
    .map((seg) => {
      if (seg === '+') {
        plusCount++;
        return '[^/]*';
      }
      return escapeRegex(seg);
    })
    .join('/');
  const plusIdx = segments.findIndex((s) => s === '+');
  let firstWildcard = Number.POSITIVE_INFINITY;
  if (plusIdx >= 0) firstWildcard = segments.slice(0, plusIdx).join('/').length + (plusIdx > 0 ? 1 : 0);
  if (endsWithStar) firstWildcard = Math.min(firstWildcard, pattern.length - 1);
  return {
    pattern,
    caps,
    regex: new RegExp(`^${source}${endsWithStar ? '' : '$'}`, 's'),
    firstWildcard,
    endsWithStar,
    plusCount,
  };
}

/** True when `a` has lower priority than `b` (reference §6 rules 1-5). */
export function lowerPriority(a: string, b: string): boolean {
  const ra = compileRule(a, 0);
  const rb = compileRule(b, 0);
  return ruleLower(ra, rb);
}

function ruleLower(a: CompiledRule, b: CompiledRule): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard < b.firstWildcard;
  if (a.endsWithStar !== b.endsWithStar) return a.endsWithStar;
  if (a.plusCount !== b.plusCount) return a.plusCount > b.plusCount;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length < b.pattern.length;
  return a.pattern < b.pattern;
}

function capsFromNames(names: readonly CapabilityName[]): number {
  let bits = 0;
  for (const n of names) bits |= CAP[n];
  return bits;
}

function mergeCaps(a: number, b: number): number {
  const merged = a | b;
  return merged & CAP.deny ? CAP.deny : merged;
}

const SORTED_NAMES = [...CAPABILITY_NAMES].filter((n) => n !== 'deny').sort();

export function capabilityNamesOf(bits: number): string[] {
  if (bits === 0 || bits & CAP.deny) return ['deny'];
  return SORTED_NAMES.filter((n) => bits & CAP[n]);
}

export const ROOT_ACL: Acl = {
  root: true,
  capabilities: () => ~CAP.deny & 0x7ff,
  allows: () => true,
  capabilityNames: () => ['root'],
  hasMountAccess: () => true,
};

export function compileAcl(policies: readonly PolicyDocument[]): Acl {
  if (policies.some((p) => p.name === 'root')) return ROOT_ACL;
  const exact = new Map<string, number>();
  const globs = new Map<string, CompiledRule>();
  for (const policy of policies) {
    for (const rule of policy.rules) {
      const bits = capsFromNames(rule.capabilities);
      const isGlob = rule.pattern.endsWith('*') || rule.pattern.split('/').includes('+');
      if (!isGlob) {
        exact.set(rule.pattern, mergeCaps(exact.get(rule.pattern) ?? 0, bits));
      } else {
        const existing = globs.get(rule.pattern);
        if (existing) existing.caps = mergeCaps(existing.caps, bits);
        else globs.set(rule.pattern, compileRule(rule.pattern, bits));
      }
    }
  }
  const globList = [...globs.values()];
  const capabilities = (path: string): number => {
    const direct = exact.get(path);
    if (direct !== undefined) return direct;
    let best: CompiledRule | null = null;
    for (const rule of globList) {
      if (!rule.regex.test(path)) continue;
      if (best === null || ruleLower(best, rule)) best = rule;
    }
    return best ? best.caps : 0;
  };
  return {
    root: false,
    capabilities,
    allows(path, cap) {
      const bits = capabilities(path);
      return (bits & CAP.deny) === 0 && (bits & CAP[cap]) !== 0;
    },
    capabilityNames: (path) => capabilityNamesOf(capabilities(path)),
    hasMountAccess(mountPath) {
      const granted = (bits: number): boolean => bits !== 0 && (bits & CAP.deny) === 0;
      if (granted(capabilities(mountPath))) return true;
      for (const [pattern, bits] of exact) if (pattern.startsWith(mountPath) && granted(bits)) return true;
      const mountSegments = mountPath.replace(/\/$/, '').split('/');
      for (const rule of globList) {
        if (!granted(rule.caps)) continue;
        const body = rule.endsWithStar ? rule.pattern.slice(0, -1) : rule.pattern;
        if (rule.plusCount === 0) {
          if (body.startsWith(mountPath)) return true;
          continue;
        }
        // A `+` rule reaches the mount when the mount's segments match its leading ones
        // (the anchor's CheckAllowedFromNonExactPaths with bareMount).
        const ruleSegments = body.split('/');
        if (mountSegments.length > ruleSegments.length) continue;
        const matches = mountSegments.every((seg, i) => {
          const r = ruleSegments[i] as string;
          if (r === '+') return true;
          if (rule.endsWithStar && i === ruleSegments.length - 1) return seg.startsWith(r);
          return r === seg;
        });
        if (matches) return true;
      }
      return false;
    },
  };
}
