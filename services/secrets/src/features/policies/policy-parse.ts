// Policy documents (issue 3, item 4; reference §6): HCL (`path "x" { capabilities = [..] }`)
// or the JSON equivalent. HCL goes through @cdktf/hcl2json (HashiCorp's HCL2 parser
// compiled to wasm). The HCL1-era `policy = "read|write|deny|sudo"` shorthand is mapped
// to capabilities as Vault does.
import { parse as parseHcl2 } from '@cdktf/hcl2json';
import { badRequest } from '../../core/errors';
import { isCapabilityName, type CapabilityName, type PolicyDocument, type PolicyRule } from './acl';

const LEGACY_POLICY: Record<string, CapabilityName[]> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

const PATH_KEYS = new Set([
  'capabilities',
  'policy',
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
  'control_group',
  'comment',
  'expiration',
]);

function fail(message: string): never {
  throw badRequest(`failed to parse policy: ${message}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function toObject(text: string): Promise<Record<string, unknown>> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (!isObject(parsed)) fail('policy JSON must be an object');
      return parsed;
    } catch (err) {
      if (err instanceof SyntaxError) fail(err.message);
      throw err;
    }
  }
  try {
    return (await parseHcl2('policy.hcl', text)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message.replace(/^parse config: /, '') : String(err);
    fail(message);
  }
}

export async function parsePolicy(name: string, text: string): Promise<PolicyDocument> {
  const doc = await toObject(text);
  for (const key of Object.keys(doc)) {
    if (key !== 'path' && key !== 'name') fail(`invalid key ${JSON.stringify(key)}`);
  }
  const rules: PolicyRule[] = [];
  const paths = doc.path ?? {};
  if (!isObject(paths)) fail('"path" must be a map of path blocks');
  for (const [pattern, rawBlocks] of Object.entries(paths)) {
    const blocks = Array.isArray(rawBlocks) ? rawBlocks : [rawBlocks];
    for (const block of blocks) {
      if (!isObject(block)) fail(`path ${JSON.stringify(pattern)}: block must be an object`);
      for (const key of Object.keys(block)) {
        if (!PATH_KEYS.has(key)) fail(`path ${JSON.stringify(pattern)}: invalid key ${JSON.stringify(key)}`);
      }
      const caps = new Set<CapabilityName>();
      const rawCaps = block.capabilities ?? [];
      if (!Array.isArray(rawCaps)) fail(`path ${JSON.stringify(pattern)}: capabilities must be a list of strings`);
      for (const cap of rawCaps) {
        if (typeof cap !== 'string' || !isCapabilityName(cap.toLowerCase())) {
          fail(`path ${JSON.stringify(pattern)}: invalid capability ${JSON.stringify(cap)}`);
        }
        caps.add(cap.toLowerCase() as CapabilityName);
      }
      if (block.policy !== undefined) {
        const legacy = typeof block.policy === 'string' ? LEGACY_POLICY[block.policy.toLowerCase()] : undefined;
        if (!legacy) fail(`path ${JSON.stringify(pattern)}: invalid policy ${JSON.stringify(block.policy)}`);
        for (const c of legacy) caps.add(c);
      }
      const normalised = pattern.replace(/^\/+/, '');
      rules.push({ pattern: normalised, capabilities: caps.has('deny') ? ['deny'] : [...caps] });
    }
  }
  return { name, rules };
}

/** OpenBao's default policy (reference §6), attached to every token unless `no_default_policy`. */
export const DEFAULT_POLICY_TEXT = `# Allow tokens to look up their own properties
path "auth/token/lookup-self" {
    capabilities = ["read"]
}

# Allow tokens to renew themselves
path "auth/token/renew-self" {
    capabilities = ["update"]
}

# Allow tokens to revoke themselves
path "auth/token/revoke-self" {
    capabilities = ["update"]
}

# Allow a token to look up its own capabilities on a path
path "sys/capabilities-self" {
    capabilities = ["update"]
}

# Allow a token to look up its resultant ACL from all policies
path "sys/internal/ui/resultant-acl" {
    capabilities = ["read"]
}

# Allow a token to renew and look up leases
path "sys/leases/renew" {
    capabilities = ["update"]
}
path "sys/leases/lookup" {
    capabilities = ["update"]
}

# Allow a token to manage its own cubbyhole
path "cubbyhole/*" {
    capabilities = ["create", "read", "update", "delete", "list"]
}

# Allow a token to wrap arbitrary values in a response-wrapping token
path "sys/wrapping/wrap" {
    capabilities = ["update"]
}
path "sys/wrapping/lookup" {
    capabilities = ["update"]
}
path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}

# Allow general purpose tools
path "sys/tools/hash" {
    capabilities = ["update"]
}
path "sys/tools/hash/*" {
    capabilities = ["update"]
}
`;
