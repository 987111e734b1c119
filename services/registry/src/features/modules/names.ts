// Module address grammar (reference B.2, terraform internal/registry/regsrc/module.go)
// and version rules.
import semver from 'semver';

const NAME_RE = /^[0-9A-Za-z](?:[0-9A-Za-z\-_]{0,62}[0-9A-Za-z])?$/;
const PROVIDER_RE = /^[0-9a-z]{1,64}$/;

export function isValidNamespaceOrName(value: string): boolean {
  return NAME_RE.test(value);
}

export function isValidProvider(value: string): boolean {
  return PROVIDER_RE.test(value);
}

/** Problems with a publish address, one message each (empty when valid). */
export function addressProblems(namespace: string, name: string, provider: string, version?: string): string[] {
  const problems: string[] = [];
  if (!isValidNamespaceOrName(namespace)) problems.push(`invalid namespace ${JSON.stringify(namespace)}: 1-64 letters, digits, "-" or "_", starting and ending with a letter or digit`);
  if (!isValidNamespaceOrName(name)) problems.push(`invalid module name ${JSON.stringify(name)}: 1-64 letters, digits, "-" or "_", starting and ending with a letter or digit`);
  if (!isValidProvider(provider)) problems.push(`invalid provider ${JSON.stringify(provider)}: 1-64 lowercase letters or digits`);
  if (version !== undefined && !isCanonicalVersion(version)) {
    problems.push(`invalid version ${JSON.stringify(version)}: must be a semantic version such as 1.2.3 or 1.2.3-rc.1 (no "v" prefix)`);
  }
  return problems;
}

/** Strict SemVer 2.0.0 as written (no `v` prefix, no leading zeros, no spaces). */
export function isCanonicalVersion(version: string): boolean {
  if (version.length > 128) return false;
  const parsed = semver.parse(version);
  if (!parsed) return false;
  // semver drops build metadata from .version; put it back to compare with the input.
  const canonical = parsed.build.length > 0 ? `${parsed.version}+${parsed.build.join('.')}` : parsed.version;
  return canonical === version;
}

/** Newest first (SemVer precedence; build metadata breaks ties by string order). */
export function compareVersionsDesc(a: string, b: string): number {
  const c = semver.rcompare(a, b);
  if (c !== 0) return c;
  return a < b ? 1 : a > b ? -1 : 0;
}

/**
 * The version list endpoints treat as "latest": the newest release; when a module only
 * has pre-releases, the newest pre-release (Terraform itself never picks a pre-release
 * unless asked for it exactly, so a module with only pre-releases still needs a latest).
 */
export function latestVersion(versions: readonly string[]): string | undefined {
  const sorted = [...versions].sort(compareVersionsDesc);
  return sorted.find((v) => semver.prerelease(v) === null) ?? sorted[0];
}
