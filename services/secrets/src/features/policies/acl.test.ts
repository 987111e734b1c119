import { compileAcl, lowerPriority, ROOT_ACL } from './acl';
import { parsePolicy } from './policy-parse';

describe('ACL matching and priority (reference §6)', () => {
  it('orders patterns by the five priority rules', () => {
    // (1) first wildcard earlier -> lower
    expect(lowerPriority('secret/+/x', 'secret/a/+')).toBe(true);
    // a wildcard anywhere is lower than none (`a+` is a literal segment)
    expect(lowerPriority('secret/a*', 'secret/a+')).toBe(true);
    // (2) same first wildcard position: ending in * -> lower
    expect(lowerPriority('secret/+/*', 'secret/+/b')).toBe(true);
    expect(lowerPriority('secret/+/b', 'secret/+/*')).toBe(false);
    // (3) more + segments -> lower
    expect(lowerPriority('a/+/+/c', 'a/+/b/c')).toBe(true);
    // (4) shorter -> lower
    expect(lowerPriority('secret/+/ab', 'secret/+/abc')).toBe(true);
    // (5) lexicographically smaller -> lower
    expect(lowerPriority('secret/+/aa', 'secret/+/ab')).toBe(true);
    expect(lowerPriority('secret/+/ab', 'secret/+/aa')).toBe(false);
  });

  it('grants, denies and prefers the most specific rule', async () => {
    const p1 = await parsePolicy(
      'p1',
      `
path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }
path "secret/super-secret" { capabilities = ["deny"] }
path "secret/+/teamb" { capabilities = ["read"] }
path "secret/zip-*" { capabilities = ["list"] }
`,
    );
    const acl = compileAcl([p1]);
    expect(acl.allows('secret/foo', 'read')).toBe(true);
    expect(acl.allows('secret/foo', 'sudo')).toBe(false);
    expect(acl.allows('secret/super-secret', 'read')).toBe(false);
    expect(acl.capabilityNames('secret/super-secret')).toEqual(['deny']);
    // secret/+/teamb beats secret/* (first wildcard later)
    expect(acl.capabilityNames('secret/x/teamb')).toEqual(['read']);
    // secret/zip-* beats secret/* (wildcard later)
    expect(acl.capabilityNames('secret/zip-zap/zong')).toEqual(['list']);
    expect(acl.capabilityNames('secret/foo')).toEqual(['create', 'delete', 'list', 'read', 'update']);
    expect(acl.capabilityNames('other/foo')).toEqual(['deny']);
    expect(acl.allows('other/foo', 'read')).toBe(false);
  });

  it('unions identical patterns across policies; deny wins', async () => {
    const a = await parsePolicy('a', 'path "kv/app/*" { capabilities = ["read"] }');
    const b = await parsePolicy('b', 'path "kv/app/*" { capabilities = ["list"] }');
    const c = await parsePolicy('c', 'path "kv/app/*" { capabilities = ["deny"] }');
    expect(compileAcl([a, b]).capabilityNames('kv/app/x')).toEqual(['list', 'read']);
    expect(compileAcl([a, b, c]).capabilityNames('kv/app/x')).toEqual(['deny']);
  });

  it('different patterns: only the highest-priority one applies', async () => {
    const a = await parsePolicy('a', 'path "kv/*" { capabilities = ["read", "update"] }');
    const b = await parsePolicy('b', 'path "kv/app/*" { capabilities = ["list"] }');
    expect(compileAcl([a, b]).capabilityNames('kv/app/x')).toEqual(['list']);
  });

  it('+ matches exactly one segment', async () => {
    const a = await parsePolicy('a', 'path "kv/+/cfg" { capabilities = ["read"] }');
    const acl = compileAcl([a]);
    expect(acl.allows('kv/one/cfg', 'read')).toBe(true);
    expect(acl.allows('kv/one/two/cfg', 'read')).toBe(false);
    expect(acl.allows('kv/one/cfg/x', 'read')).toBe(false);
  });

  it('treats regex metacharacters in patterns literally', async () => {
    const a = await parsePolicy('a', 'path "kv/a.b" { capabilities = ["read"] }');
    const acl = compileAcl([a]);
    expect(acl.allows('kv/a.b', 'read')).toBe(true);
    expect(acl.allows('kv/aXb', 'read')).toBe(false);
  });

  it('root allows everything', () => {
    expect(ROOT_ACL.allows('anything', 'sudo')).toBe(true);
    expect(ROOT_ACL.capabilityNames('x')).toEqual(['root']);
    expect(compileAcl([{ name: 'root', rules: [] }]).root).toBe(true);
  });
});

describe('policy documents', () => {
  it('parses JSON policies and the legacy policy shorthand', async () => {
    const json = await parsePolicy('j', '{"path":{"secret/foo":{"capabilities":["read"]}}}');
    expect(json.rules).toEqual([{ pattern: 'secret/foo', capabilities: ['read'] }]);
    const legacy = await parsePolicy('l', 'path "secret/*" { policy = "write" }');
    expect(legacy.rules[0]?.capabilities).toEqual(['create', 'read', 'update', 'delete', 'list']);
  });

  it('rejects bad documents with "failed to parse policy"', async () => {
    await expect(parsePolicy('x', 'path "a" { capabilities = ["fly"] }')).rejects.toMatchObject({
      status: 400,
      messages: ['failed to parse policy: path "a": invalid capability "fly"'],
    });
    await expect(parsePolicy('x', 'path "a" {')).rejects.toMatchObject({ status: 400 });
    await expect(parsePolicy('x', 'bogus "a" { }')).rejects.toMatchObject({ messages: ['failed to parse policy: invalid key "bogus"'] });
    await expect(parsePolicy('x', 'path "a" { colour = "red" }')).rejects.toMatchObject({ status: 400 });
    await expect(parsePolicy('x', '{"path": 1')).rejects.toMatchObject({ status: 400 });
  });

  it('hasMountAccess: a capability on the mount or anywhere under it (issue 33)', async () => {
    const acl = compileAcl([
      await parsePolicy(
        'p',
        `
path "kv/data/app/*" { capabilities = ["read"] }
path "locked/*" { capabilities = ["deny"] }
path "teams/+/shared" { capabilities = ["list"] }
path "exact/only/this" { capabilities = ["update"] }
path "pre*" { capabilities = ["read"] }
path "auth/token/lookup-self" { capabilities = ["read"] }
`,
      ),
    ]);
    expect(acl.hasMountAccess('kv/')).toBe(true);
    expect(acl.hasMountAccess('locked/')).toBe(false);
    expect(acl.hasMountAccess('teams/')).toBe(true);
    expect(acl.hasMountAccess('teams/x/')).toBe(true);
    expect(acl.hasMountAccess('exact/')).toBe(true);
    expect(acl.hasMountAccess('prefix/')).toBe(true);
    expect(acl.hasMountAccess('auth/token/')).toBe(true);
    expect(acl.hasMountAccess('other/')).toBe(false);
    expect(acl.hasMountAccess('kv2/')).toBe(false);
    expect(compileAcl([]).hasMountAccess('kv/')).toBe(false);
    expect(ROOT_ACL.hasMountAccess('anything/')).toBe(true);
  });
});
