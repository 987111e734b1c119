// ACL policies (issue 3, item 4; reference §4.8, §6). Documents are stored behind the
// barrier at `sys/policy/<name>`; parsed documents and compiled ACLs are cached in memory
// and invalidated across replicas through the bus.
import { followChannel, type Bus } from '@selfstack/bus';
import { badRequest } from '../../core/errors';
import type { Storage, StorageTx } from '../barrier/storage.types';
import { compileAcl, ROOT_ACL, type Acl, type PolicyDocument } from './acl';
import { DEFAULT_POLICY_TEXT, parsePolicy } from './policy-parse';

export const POLICY_CHANNEL = 'secrets.policies';
export const POLICY_PREFIX = 'sys/policy/';

export interface StoredPolicy {
  name: string;
  policy: string;
}

export interface PolicyService {
  list(): Promise<string[]>;
  get(name: string): Promise<StoredPolicy | null>;
  exists(name: string): Promise<boolean>;
  set(name: string, text: string): Promise<void>;
  delete(name: string): Promise<void>;
  aclFor(policies: readonly string[]): Promise<Acl>;
  /** `aclFor`'s answer when it is cached (no waiting); undefined otherwise. */
  cachedAcl(policies: readonly string[]): Acl | undefined;
  clearCache(): void;
  /** Subscribes to the bus; returns what unsubscribes (a namespace's policies, when it goes). */
  start(): Promise<() => void>;
}

export function normalisePolicyName(name: string): string {
  return name.trim().toLowerCase();
}

export async function writeDefaultPolicy(tx: StorageTx, prefix = POLICY_PREFIX): Promise<void> {
  await tx.put(`${prefix}default`, Buffer.from(JSON.stringify({ name: 'default', policy: DEFAULT_POLICY_TEXT })));
}

export function createPolicyService(deps: { storage: Storage; bus: Bus; prefix?: string; channel?: string }): PolicyService {
  const { storage, bus } = deps;
  const prefix = deps.prefix ?? POLICY_PREFIX;
  const CHANNEL = deps.channel ?? POLICY_CHANNEL;
  const docs = new Map<string, PolicyDocument | null>();
  const acls = new Map<string, Acl>();
  // Bumped on every invalidation: a load that started before it must not repopulate the
  // caches with what it read (it may be the old document).
  let generation = 0;
  const drop = (name: string | null): void => {
    generation++;
    if (name === null) docs.clear();
    else docs.delete(name);
    acls.clear();
  };

  const invalidate = (name: string): void => {
    drop(name);
    void bus.publish(CHANNEL, name).catch(() => undefined);
  };

  async function get(name: string): Promise<StoredPolicy | null> {
    const raw = await storage.get(prefix + name);
    return raw ? (JSON.parse(raw.toString('utf8')) as StoredPolicy) : null;
  }

  async function doc(name: string): Promise<PolicyDocument | null> {
    if (docs.has(name)) return docs.get(name) ?? null;
    const started = generation;
    const stored = await get(name);
    const parsed = stored ? await parsePolicy(name, stored.policy) : null;
    // A missing policy is not remembered: another replica may create it any moment, and
    // its bus message may come later than the next request naming it.
    if (parsed && generation === started) docs.set(name, parsed);
    return parsed;
  }

  return {
    async list() {
      const paths = await storage.list(prefix);
      return paths.map((p) => p.slice(prefix.length)).filter((n) => !n.includes('/')).sort();
    },
    async get(name) {
      if (name === 'root') return null;
      return get(name);
    },
    async exists(name) {
      return name === 'root' || (await doc(name)) !== null;
    },
    async set(name, text) {
      if (name === '') throw badRequest('policy name must not be empty');
      if (name === 'root') throw badRequest('cannot update "root" policy');
      if (text.trim() === '') throw badRequest("'policy' parameter not supplied or empty");
      await parsePolicy(name, text);
      await storage.put(prefix + name, Buffer.from(JSON.stringify({ name, policy: text })));
      invalidate(name);
    },
    async delete(name) {
      if (name === 'default') throw badRequest('cannot delete default policy');
      if (name === 'root') throw badRequest('cannot delete "root" policy');
      await storage.delete(prefix + name);
      invalidate(name);
    },
    async aclFor(policies) {
      if (policies.includes('root')) return ROOT_ACL;
      const key = policies.join('\n');
      const hit = acls.get(key);
      if (hit) return hit;
      const started = generation;
      const loaded: PolicyDocument[] = [];
      for (const name of policies) {
        const d = await doc(name);
        if (d) loaded.push(d);
      }
      const acl = compileAcl(loaded);
      // Only an ACL of policies that all exist is kept (see doc()).
      if (generation === started && loaded.length === policies.length) acls.set(key, acl);
      return acl;
    },
    cachedAcl(policies) {
      return policies.includes('root') ? ROOT_ACL : acls.get(policies.join('\n'));
    },
    clearCache: () => drop(null),
    start: () => followChannel(bus, CHANNEL, (name) => drop(name), () => drop(null)),
  };
}
