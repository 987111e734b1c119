// ACLs enabled (spec "Authentication"; reference §5): bootstrap once, policies with
// namespace and node rules (HCL and JSON), management and client tokens, the anonymous
// policy, and an allow/deny matrix over the endpoints.
import request from 'supertest';
import type { Express } from 'express';
import { expectPlain, minimalJob, registerJob, startHarness, type Harness } from './harness';

let h: Harness;
let app: Express;
let root = '';
beforeAll(async () => {
  h = await startHarness({ aclEnabled: true });
  app = h.app;
});
afterAll(async () => {
  await h.close();
});

const mgmt = () => ({ 'X-Scheduler-Token': root });

describe('bootstrap', () => {
  it('denies anonymous requests before bootstrap and bootstraps exactly once', async () => {
    expectPlain(await request(app).get('/v1/jobs'), 403, 'Permission denied');
    const boot = await request(app).put('/v1/acl/bootstrap');
    expect(boot.status).toBe(200);
    expect(boot.body).toMatchObject({ Name: 'Bootstrap Token', Type: 'management', Global: true, Policies: null, SecretID: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    root = boot.body.SecretID;
    const again = await request(app).post('/v1/acl/bootstrap');
    expectPlain(again, 400, `ACL bootstrap already done (reset index: ${String(boot.body.CreateIndex)})`);
    // The secret is stored hashed.
    const row = await h.prisma.schedulerAclToken.findUnique({ where: { accessorId: boot.body.AccessorID } });
    expect(row?.secretHash).not.toContain(root);
    expect(JSON.stringify(row?.data)).not.toContain(root);
  });

  it('accepts the token in X-Scheduler-Token, X-Nomad-Token and Authorization: Bearer', async () => {
    expect((await request(app).get('/v1/jobs').set('X-Scheduler-Token', root)).status).toBe(200);
    expect((await request(app).get('/v1/jobs').set('X-Nomad-Token', root)).status).toBe(200);
    expect((await request(app).get('/v1/jobs').set('Authorization', `Bearer ${root}`)).status).toBe(200);
    expectPlain(await request(app).get('/v1/jobs').set('X-Nomad-Token', '3f7d0d6e-0000-0000-0000-000000000000'), 403, 'ACL token not found');
    expectPlain(await request(app).get('/v1/jobs').set('Authorization', `Basic ${root}`), 403, 'Permission denied');
  });
});

describe('policies and the allow/deny matrix', () => {
  let reader = '';
  let writer = '';
  let nodeOps = '';

  beforeAll(async () => {
    await request(app).put('/v1/namespace/prod').set(mgmt()).send({}).expect(200);
    await registerJob(app, minimalJob('m-default'), mgmt());
    await registerJob(app, minimalJob('m-prod', { Namespace: 'prod' }), mgmt());
    // HCL rules
    await request(app)
      .put('/v1/acl/policy/readonly')
      .set(mgmt())
      .send({ Name: 'readonly', Description: 'read default', Rules: 'namespace "default" {\n  policy = "read"\n}\n' })
      .expect(200);
    // JSON rules, glob namespace, node write
    await request(app)
      .put('/v1/acl/policy/deployer')
      .set(mgmt())
      .send({ Rules: JSON.stringify({ namespace: { 'pro*': { policy: 'write' } }, node: { policy: 'read' } }) })
      .expect(200);
    await request(app).put('/v1/acl/policy/nodes').set(mgmt()).send({ Rules: 'node {\n  policy = "write"\n}\n' }).expect(200);
    const mk = async (policies: string[]) => {
      const res = await request(app).put('/v1/acl/token').set(mgmt()).send({ Name: policies.join('+'), Type: 'client', Policies: policies });
      expect(res.status).toBe(200);
      expect(res.body.SecretID).toMatch(/^[0-9a-f-]{36}$/);
      return res.body.SecretID as string;
    };
    reader = await mk(['readonly']);
    writer = await mk(['deployer']);
    nodeOps = await mk(['nodes']);
  });

  const as = (secret: string) => ({ 'X-Nomad-Token': secret });

  it('rejects malformed policies and tokens with clear 400s', async () => {
    const bad = await request(app).put('/v1/acl/policy/bad').set(mgmt()).send({ Rules: 'namespace "x" { policy = "admin" }' });
    expectPlain(bad, 400, 'Failed to parse ACL Policy: Invalid namespace policy: "admin"');
    expectPlain(await request(app).put('/v1/acl/policy/other').set(mgmt()).send({ Name: 'x', Rules: 'node { policy = "read" }' }), 400, 'ACL policy name does not match request path');
    expectPlain(await request(app).put('/v1/acl/token').set(mgmt()).send({ Type: 'client' }), 400, 'client token missing policies');
    expectPlain(await request(app).put('/v1/acl/token').set(mgmt()).send({ Type: 'management', Policies: ['readonly'] }), 400, 'management token cannot be associated with policies');
    expectPlain(await request(app).put('/v1/acl/token').set(mgmt()).send({ Type: 'client', Policies: ['nope'] }), 400, 'policy lookup for "nope" failed: ACL policy not found');
  });

  it('enforces the matrix', async () => {
    const cases: Array<[string, string, () => request.Test, number]> = [
      ['reader', 'list default jobs', () => request(app).get('/v1/jobs').set(as(reader)), 200],
      ['reader', 'read default job', () => request(app).get('/v1/job/m-default').set(as(reader)), 200],
      ['reader', 'read prod job', () => request(app).get('/v1/job/m-prod?namespace=prod').set(as(reader)), 403],
      ['reader', 'register in default', () => request(app).put('/v1/jobs').set(as(reader)).send({ Job: minimalJob('r-x') }), 403],
      ['reader', 'list nodes', () => request(app).get('/v1/nodes').set(as(reader)), 403],
      ['reader', 'list policies', () => request(app).get('/v1/acl/policies').set(as(reader)), 403],
      ['reader', 'read own policy', () => request(app).get('/v1/acl/policy/readonly').set(as(reader)), 200],
      ['reader', 'read other policy', () => request(app).get('/v1/acl/policy/deployer').set(as(reader)), 403],
      ['reader', 'token self', () => request(app).get('/v1/acl/token/self').set(as(reader)), 200],
      ['reader', 'create namespace', () => request(app).put('/v1/namespace/x').set(as(reader)).send({}), 403],
      ['writer', 'register in prod (glob)', () => request(app).put('/v1/jobs?namespace=prod').set(as(writer)).send({ Job: minimalJob('w-x') }), 200],
      ['writer', 'register in default', () => request(app).put('/v1/jobs').set(as(writer)).send({ Job: minimalJob('w-y') }), 403],
      ['writer', 'deregister in prod', () => request(app).delete('/v1/job/w-x?namespace=prod').set(as(writer)), 200],
      ['writer', 'list nodes (node read)', () => request(app).get('/v1/nodes').set(as(writer)), 200],
      ['writer', 'drain node (node read only)', () => request(app).put('/v1/node/00000000-0000-0000-0000-000000000000/drain').set(as(writer)).send({ DrainSpec: null }), 403],
      ['nodeOps', 'drain missing node (allowed, 404)', () => request(app).put('/v1/node/00000000-0000-0000-0000-000000000000/drain').set(as(nodeOps)).send({ DrainSpec: null }), 404],
      ['nodeOps', 'register node (node:write may; the body is checked)', () => request(app).put('/v1/internal/node/register').set(as(nodeOps)).send({ Node: {} }), 400],
      ['writer', 'register node (node read only)', () => request(app).put('/v1/internal/node/register').set(as(writer)).send({ Node: {} }), 403],
      ['nodeOps', 'list jobs', () => request(app).get('/v1/jobs').set(as(nodeOps)), 403],
      ['anonymous', 'agent self', () => request(app).get('/v1/agent/self'), 403],
      ['anonymous', 'status leader (no ACL)', () => request(app).get('/v1/status/leader'), 200],
      ['management', 'list tokens', () => request(app).get('/v1/acl/tokens').set(mgmt()), 200],
    ];
    const failures: string[] = [];
    for (const [who, what, run, status] of cases) {
      const res = await run();
      if (res.status !== status) failures.push(`${who} ${what}: expected ${status}, got ${res.status} ${res.text}`);
      if (status === 403 && res.text !== 'Permission denied') failures.push(`${who} ${what}: body ${res.text}`);
    }
    expect(failures).toEqual([]);
  });

  it('limits namespace=* lists to the namespaces the token may read (no 403)', async () => {
    const all = await request(app).get('/v1/jobs?namespace=*').set(as(reader));
    expect(all.status).toBe(200);
    expect(all.body.map((j: { Namespace: string }) => j.Namespace)).toEqual(['default']);
    const none = await request(app).get('/v1/jobs?namespace=*').set(as(nodeOps));
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
    const nsList = await request(app).get('/v1/namespaces').set(as(reader));
    expect(nsList.body.map((n: { Name: string }) => n.Name)).toEqual(['default']);
  });

  it('applies the anonymous policy to requests without a token', async () => {
    expectPlain(await request(app).get('/v1/jobs'), 403, 'Permission denied');
    await request(app).put('/v1/acl/policy/anonymous').set(mgmt()).send({ Rules: 'namespace "default" { policy = "read" }' }).expect(200);
    const res = await request(app).get('/v1/jobs');
    expect(res.status).toBe(200);
    expect(res.body.map((j: { ID: string }) => j.ID)).toContain('m-default');
    expectPlain(await request(app).put('/v1/jobs').send({ Job: minimalJob('anon') }), 403, 'Permission denied');
    await request(app).delete('/v1/acl/policy/anonymous').set(mgmt()).expect(200);
    expectPlain(await request(app).get('/v1/jobs'), 403, 'Permission denied');
  });

  it('updates and deletes tokens; a deleted token is not found', async () => {
    const created = await request(app).put('/v1/acl/token').set(mgmt()).send({ Name: 'temp', Type: 'client', Policies: ['readonly'] });
    const accessor = created.body.AccessorID as string;
    const read = await request(app).get(`/v1/acl/token/${accessor}`).set(mgmt());
    expect(read.body).toMatchObject({ AccessorID: accessor, Name: 'temp', Policies: ['readonly'] });
    const upd = await request(app).post(`/v1/acl/token/${accessor}`).set(mgmt()).send({ Name: 'renamed', Policies: ['readonly', 'nodes'] });
    expect(upd.body).toMatchObject({ Name: 'renamed', Policies: ['readonly', 'nodes'] });
    expect((await request(app).get('/v1/nodes').set(as(created.body.SecretID))).status).toBe(200);
    await request(app).delete(`/v1/acl/token/${accessor}`).set(mgmt()).expect(200);
    expectPlain(await request(app).get('/v1/jobs').set(as(created.body.SecretID)), 403, 'ACL token not found');
    const types = (await h.state.eventsAfter(0)).filter((e) => e.key === accessor).map((e) => `${e.topic}:${e.type}`);
    expect(types).toEqual(['ACLToken:ACLTokenUpserted', 'ACLToken:ACLTokenUpserted', 'ACLToken:ACLTokenDeleted']);
    const payload = JSON.stringify((await h.state.eventsAfter(0)).filter((e) => e.topic === 'ACLToken').map((e) => e.payload));
    expect(payload).not.toContain(created.body.SecretID);
  });

  it('accepts node registration with the configured node secret', async () => {
    const withSecret = h.appWith({ aclEnabled: true, nodeSecret: 'node-shared-secret' });
    const body = { Node: { ID: '11111111-2222-3333-4444-555555555555', SecretID: 'abc' } };
    expectPlain(await request(withSecret).put('/v1/internal/node/register').send(body), 403, 'Permission denied');
    const ok = await request(withSecret).put('/v1/internal/node/register').set('X-Scheduler-Node-Secret', 'node-shared-secret').send(body);
    expect(ok.status).toBe(200);
  });
});
