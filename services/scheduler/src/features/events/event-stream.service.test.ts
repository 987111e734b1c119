import type { StoredEvent } from '@selfstack/state';
import { Acl, parseRules } from '../acl/acl-policy';
import { authorizeStream, streamFilter, type EventStreamRequest } from './event-stream.service';
import { parseTopics } from './event-topics';

const req = (topics: string[], namespace = 'default', index = 0): EventStreamRequest => ({ index, namespace, topics: parseTopics(topics) });
const acl = async (...rules: string[]) => Acl.fromPolicies(await Promise.all(rules.map((r) => parseRules(r))));
const event = (topic: string, namespace: string, key = 'k'): StoredEvent => ({
  index: 5,
  seq: 0,
  topic,
  type: 'T',
  key,
  namespace,
  filterKeys: null,
  payload: {},
  createdAt: new Date(),
});
const allowed = (a: Acl, r: EventStreamRequest): boolean => {
  try {
    authorizeStream(a, r);
    return true;
  } catch (err) {
    expect((err as Error).message).toBe('Permission denied');
    return false;
  }
};

describe('event stream authorization (spec "Required ACL per topic")', () => {
  it('management may follow everything', () => {
    const m = Acl.management();
    for (const t of [[], ['*'], ['ACLToken'], ['Job'], ['Node']]) expect(allowed(m, req(t, '*'))).toBe(true);
  });

  it('read-job in the namespace for job-related topics; never `*` or ACL topics', async () => {
    const a = await acl('namespace "default" { capabilities = ["read-job"] }');
    expect(allowed(a, req(['Job', 'Allocation', 'Evaluation', 'Deployment', 'Service']))).toBe(true);
    expect(allowed(a, req(['Job'], 'prod'))).toBe(false);
    expect(allowed(a, req([]))).toBe(false);
    expect(allowed(a, req(['*']))).toBe(false);
    expect(allowed(a, req(['ACLToken']))).toBe(false);
    expect(allowed(a, req(['ACLPolicy']))).toBe(false);
    expect(allowed(a, req(['Node']))).toBe(false);
    // list-jobs alone is not read-job.
    expect(allowed(await acl('namespace "default" { capabilities = ["list-jobs"] }'), req(['Job']))).toBe(false);
  });

  it('namespace=* needs a policy applying to all namespaces', async () => {
    expect(allowed(await acl('namespace "*" { policy = "read" }'), req(['Job'], '*'))).toBe(true);
    expect(allowed(await acl('namespace "prod" { policy = "read" }', 'namespace "default" { policy = "read" }'), req(['Job'], '*'))).toBe(false);
  });

  it('node:read for the node topics', async () => {
    const n = await acl('node { policy = "read" }');
    expect(allowed(n, req(['Node']))).toBe(true);
    expect(allowed(n, req(['NodeDrain']))).toBe(true);
    expect(allowed(n, req(['Job']))).toBe(false);
    expect(allowed(await acl('node { policy = "deny" }'), req(['Node']))).toBe(false);
  });
});

describe('event stream filter', () => {
  it('keeps the namespace asked for, and events without a namespace', async () => {
    const f = streamFilter(Acl.management(), req([], 'prod'));
    expect(f(event('Job', 'prod'))).toBe(true);
    expect(f(event('Job', 'default'))).toBe(false);
    expect(f(event('Node', ''))).toBe(true);
  });

  it('with namespace=*, checks read-job per event namespace (a deny holds)', async () => {
    const a = await acl('namespace "*" { policy = "read" }', 'namespace "secret" { policy = "deny" }');
    const f = streamFilter(a, req(['Job'], '*'));
    expect(f(event('Job', 'default'))).toBe(true);
    expect(f(event('Job', 'prod'))).toBe(true);
    expect(f(event('Job', 'secret'))).toBe(false);
    expect(f(event('Evaluation', 'prod'))).toBe(false);
  });
});
