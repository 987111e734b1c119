import { Acl, parseRules } from './acl-policy';

describe('ACL policies', () => {
  it('parses HCL and JSON rules into capabilities', async () => {
    const hcl = await parseRules('namespace "default" {\n  policy = "read"\n  capabilities = ["submit-job"]\n}\nnode {\n  policy = "write"\n}\n');
    const acl = Acl.fromPolicies([hcl]);
    expect(acl.allowNamespaceOperation('default', 'read-job')).toBe(true);
    expect(acl.allowNamespaceOperation('default', 'submit-job')).toBe(true);
    expect(acl.allowNamespaceOperation('default', 'alloc-exec')).toBe(false);
    expect(acl.allowNamespaceOperation('prod', 'read-job')).toBe(false);
    expect(acl.allowNodeWrite()).toBe(true);
    const json = await parseRules(JSON.stringify({ namespace: { 'prod-*': { policy: 'write' }, '*': { policy: 'read' } } }));
    const g = Acl.fromPolicies([json]);
    expect(g.allowNamespaceOperation('prod-eu', 'submit-job')).toBe(true);
    expect(g.allowNamespaceOperation('dev', 'submit-job')).toBe(false);
    expect(g.allowNamespaceOperation('dev', 'list-jobs')).toBe(true);
    expect(g.allowNodeRead()).toBe(false);
  });

  it('lets deny win when policies are merged', async () => {
    const allow = await parseRules('namespace "default" { policy = "write" }');
    const deny = await parseRules('namespace "default" { policy = "deny" }');
    expect(Acl.fromPolicies([allow, deny]).allowNamespaceOperation('default', 'read-job')).toBe(false);
    expect(Acl.management().allowNamespaceOperation('anything', 'submit-job')).toBe(true);
  });

  it('rejects unknown policies and capabilities', async () => {
    await expect(parseRules('namespace "x" { policy = "root" }')).rejects.toThrow('Failed to parse ACL Policy: Invalid namespace policy: "root"');
    await expect(parseRules('node { policy = "all" }')).rejects.toThrow('Failed to parse ACL Policy: Invalid node policy: "all"');
    await expect(parseRules('namespace "x" { capabilities = ["fly"] }')).rejects.toThrow(/Invalid namespace capability 'fly'/);
    await expect(parseRules('namespace "x" {')).rejects.toThrow(/^Failed to parse ACL Policy: /);
  });
});
