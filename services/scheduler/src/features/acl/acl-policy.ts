// ACL policy rules (spec "Authentication"; reference §5): namespace and node rules written
// in HCL or JSON, compiled into capability sets the way Nomad's acl package does.
import { BadRequestError } from '@selfstack/errors';
import { parseHcl } from '@selfstack/config';
import { asObject, type JsonObject } from '../../shared/common.types';

export type Capability =
  | 'deny'
  | 'list-jobs'
  | 'parse-job'
  | 'read-job'
  | 'submit-job'
  | 'dispatch-job'
  | 'read-logs'
  | 'read-fs'
  | 'alloc-exec'
  | 'alloc-lifecycle'
  | 'purge-job'
  | 'scale-job'
  | 'read-job-scaling'
  | 'list-scaling-policies'
  | 'read-scaling-policy';

const READ_CAPS: Capability[] = ['list-jobs', 'parse-job', 'read-job', 'read-job-scaling', 'list-scaling-policies', 'read-scaling-policy'];
const WRITE_CAPS: Capability[] = [
  ...READ_CAPS,
  'submit-job',
  'dispatch-job',
  'read-logs',
  'read-fs',
  'alloc-exec',
  'alloc-lifecycle',
  'scale-job',
];
const ALL_CAPS = new Set<string>([...WRITE_CAPS, 'deny', 'purge-job']);

export type CoarsePolicy = '' | 'deny' | 'read' | 'write';

export interface NamespaceRule {
  pattern: string;
  capabilities: Set<Capability>;
}

export interface PolicyRules {
  namespaces: NamespaceRule[];
  node: CoarsePolicy;
  agent: CoarsePolicy;
  operator: CoarsePolicy;
}

function coarse(v: unknown, where: string): CoarsePolicy {
  if (v === undefined || v === null || v === '') return '';
  if (v === 'deny' || v === 'read' || v === 'write') return v;
  throw new BadRequestError(`Failed to parse ACL Policy: Invalid ${where} policy: ${JSON.stringify(v)}`);
}

/** hcl2json renders each block as a list of bodies; JSON rules may use a plain object. */
function blockBody(v: unknown): JsonObject {
  if (Array.isArray(v)) return Object.assign({}, ...v.map(asObject)) as JsonObject;
  return asObject(v);
}

function namespaceCaps(name: string, body: JsonObject): Set<Capability> {
  const caps = new Set<Capability>();
  const policy = body['policy'];
  if (policy !== undefined && policy !== '') {
    switch (policy) {
      case 'deny':
        caps.add('deny');
        break;
      case 'read':
        READ_CAPS.forEach((c) => caps.add(c));
        break;
      case 'write':
        WRITE_CAPS.forEach((c) => caps.add(c));
        break;
      case 'scale':
        (['list-scaling-policies', 'read-scaling-policy', 'read-job-scaling', 'scale-job'] as Capability[]).forEach((c) => caps.add(c));
        break;
      default:
        throw new BadRequestError(`Failed to parse ACL Policy: Invalid namespace policy: ${JSON.stringify(policy)}`);
    }
  }
  const extra = body['capabilities'];
  if (extra !== undefined) {
    if (!Array.isArray(extra)) throw new BadRequestError(`Failed to parse ACL Policy: Invalid namespace capabilities for "${name}"`);
    for (const c of extra) {
      if (typeof c !== 'string' || !ALL_CAPS.has(c)) {
        throw new BadRequestError(`Failed to parse ACL Policy: Invalid namespace capability '${String(c)}': ${JSON.stringify(body)}`);
      }
      caps.add(c as Capability);
    }
  }
  return caps;
}

/** Parses policy rules (HCL or JSON); 400 `Failed to parse ACL Policy: ...` when malformed. */
export async function parseRules(rules: string): Promise<PolicyRules> {
  let doc: JsonObject;
  const text = rules.trim();
  if (text === '') throw new BadRequestError('Failed to parse ACL Policy: policy has no rules');
  try {
    doc = text.startsWith('{') ? asObject(JSON.parse(text)) : asObject(await parseHcl(text, 'policy.hcl'));
  } catch (e) {
    throw new BadRequestError(`Failed to parse ACL Policy: ${e instanceof Error ? e.message : String(e)}`);
  }
  const out: PolicyRules = { namespaces: [], node: '', agent: '', operator: '' };
  for (const [name, body] of Object.entries(asObject(doc['namespace']))) {
    out.namespaces.push({ pattern: name, capabilities: namespaceCaps(name, blockBody(body)) });
  }
  out.node = coarse(blockBody(doc['node'])['policy'], 'node');
  out.agent = coarse(blockBody(doc['agent'])['policy'], 'agent');
  out.operator = coarse(blockBody(doc['operator'])['policy'], 'operator');
  return out;
}

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp('^' + pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
  return re.test(name);
}

function mergeCoarse(a: CoarsePolicy, b: CoarsePolicy): CoarsePolicy {
  if (a === 'deny' || b === 'deny') return 'deny';
  if (a === 'write' || b === 'write') return 'write';
  if (a === 'read' || b === 'read') return 'read';
  return '';
}

/** The effective permissions of a token: its policies merged (deny wins). */
export class Acl {
  private constructor(
    readonly management: boolean,
    private readonly exact: Map<string, Set<Capability>>,
    private readonly globs: NamespaceRule[],
    readonly node: CoarsePolicy,
    readonly agent: CoarsePolicy,
    readonly operator: CoarsePolicy,
  ) {}

  static management(): Acl {
    return new Acl(true, new Map(), [], 'write', 'write', 'write');
  }

  static fromPolicies(policies: readonly PolicyRules[]): Acl {
    const exact = new Map<string, Set<Capability>>();
    const globs = new Map<string, Set<Capability>>();
    let node: CoarsePolicy = '';
    let agent: CoarsePolicy = '';
    let operator: CoarsePolicy = '';
    for (const p of policies) {
      for (const rule of p.namespaces) {
        const target = rule.pattern.includes('*') ? globs : exact;
        const caps = target.get(rule.pattern) ?? new Set<Capability>();
        rule.capabilities.forEach((c) => caps.add(c));
        target.set(rule.pattern, caps);
      }
      node = mergeCoarse(node, p.node);
      agent = mergeCoarse(agent, p.agent);
      operator = mergeCoarse(operator, p.operator);
    }
    const globList = [...globs.entries()].map(([pattern, capabilities]) => ({ pattern, capabilities }));
    return new Acl(false, exact, globList, node, agent, operator);
  }

  /** Capabilities in a namespace: the exact rule, else the closest glob (Nomad's rule). */
  private capsFor(namespace: string): Set<Capability> | undefined {
    const exact = this.exact.get(namespace);
    if (exact) return exact;
    let best: NamespaceRule | undefined;
    let bestScore = Infinity;
    for (const g of this.globs) {
      if (!globMatch(g.pattern, namespace)) continue;
      // Closest match: fewest characters matched by wildcards.
      const score = namespace.length - g.pattern.replace(/\*/g, '').length;
      if (score < bestScore) {
        best = g;
        bestScore = score;
      }
    }
    return best?.capabilities;
  }

  allowNamespaceOperation(namespace: string, cap: Capability): boolean {
    if (this.management) return true;
    const caps = this.capsFor(namespace);
    if (!caps || caps.has('deny')) return false;
    if (cap === 'purge-job') return caps.has('purge-job') || caps.has('submit-job');
    return caps.has(cap);
  }

  /** Any non-deny capability in the namespace (namespace read). */
  allowNamespace(namespace: string): boolean {
    if (this.management) return true;
    const caps = this.capsFor(namespace);
    return !!caps && !caps.has('deny') && caps.size > 0;
  }

  allowNodeRead(): boolean {
    return this.management || this.node === 'read' || this.node === 'write';
  }

  allowNodeWrite(): boolean {
    return this.management || this.node === 'write';
  }

  allowAgentRead(): boolean {
    return this.management || this.agent === 'read' || this.agent === 'write';
  }
}
