// Nodes, allocations, evaluations, deployments, namespaces and agent endpoints, plus
// `filter` on every list endpoint (spec "Filter expressions"; reference §2-§4, §7).
import request from 'supertest';
import { expectPlain, insertAllocation, insertDeployment, minimalJob, registerJob, registerNode, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('nodes', () => {
  it('registers through the internal route (NodeRegistration, status initializing) and lists stubs', async () => {
    const id = await registerNode(h.app, { Name: 'alpha', HTTPAddr: '10.1.2.3:4646' });
    const node = await request(h.app).get(`/v1/node/${id}`);
    expect(node.status).toBe(200);
    expect(node.body).toMatchObject({ ID: id, Name: 'alpha', Status: 'initializing', SchedulingEligibility: 'eligible', Datacenter: 'dc1', Drain: false });
    expect(node.body.SecretID).toBeUndefined();
    expect(node.body.Events[0]).toMatchObject({ Message: 'Node registered', Subsystem: 'Cluster' });
    const byPrefix = await request(h.app).get(`/v1/node/${id.slice(0, 8)}`);
    expect(byPrefix.body.ID).toBe(id);

    const events = await h.state.eventsAfter(0);
    const reg = events.find((e) => e.type === 'NodeRegistration' && e.key === id);
    expect(reg).toMatchObject({ topic: 'Node', namespace: '', filterKeys: null });
    expect((reg?.payload as { Node: { Status: string } }).Node.Status).toBe('initializing');

    const list = await request(h.app).get(`/v1/nodes?prefix=${id}`);
    expect(list.body).toEqual([
      expect.objectContaining({ ID: id, Address: '10.1.2.3', Name: 'alpha', Version: '2.0.6', Drain: false, Status: 'initializing', NodePool: 'default' }),
    ]);
    expect(list.body[0].Attributes).toBeUndefined();
    const withOs = await request(h.app).get(`/v1/nodes?prefix=${id}&os=true`);
    expect(withOs.body[0].Attributes).toEqual({ 'os.name': 'ubuntu' });
    expectPlain(await request(h.app).get('/v1/node/00000000-0000-0000-0000-000000000000'), 404, 'node not found');
  });

  it('refuses a re-registration with another secret', async () => {
    const id = await registerNode(h.app);
    const res = await request(h.app).put('/v1/internal/node/register').send({ Node: { ID: id, SecretID: 'other-secret' } });
    // Issue 26: the SecretID is the node's credential; another one is refused as a stranger.
    expectPlain(res, 403, 'Permission denied');
  });

  it('drains and sets eligibility with their events', async () => {
    const id = await registerNode(h.app);
    const drain = await request(h.app).put(`/v1/node/${id}/drain`).send({ DrainSpec: { Deadline: 3600_000_000_000, IgnoreSystemJobs: false }, Meta: { message: 'maint' } });
    expect(drain.status).toBe(200);
    expect(drain.body).toMatchObject({ NodeModifyIndex: drain.body.Index, EvalIDs: [], EvalCreateIndex: 0 });
    expect(drain.headers['x-scheduler-index']).toBe(String(drain.body.Index));
    let node = (await request(h.app).get(`/v1/node/${id}`)).body;
    expect(node).toMatchObject({ Drain: true, SchedulingEligibility: 'ineligible', DrainStrategy: { DrainSpec: { Deadline: 3600_000_000_000, IgnoreSystemJobs: false } } });
    expectPlain(
      await request(h.app).post(`/v1/node/${id}/eligibility`).send({ Eligibility: 'eligible' }),
      400,
      "can not set node's scheduling eligibility to eligible while it is draining",
    );
    await request(h.app).put(`/v1/node/${id}/drain`).send({ DrainSpec: null, MarkEligible: true }).expect(200);
    node = (await request(h.app).get(`/v1/node/${id}`)).body;
    expect(node).toMatchObject({ Drain: false, DrainStrategy: null, SchedulingEligibility: 'eligible' });
    const elig = await request(h.app).put(`/v1/node/${id}/eligibility`).send({ Eligibility: 'ineligible' });
    expect(elig.status).toBe(200);
    expect((await request(h.app).get(`/v1/node/${id}`)).body.SchedulingEligibility).toBe('ineligible');
    expectPlain(await request(h.app).put(`/v1/node/${id}/eligibility`).send({ Eligibility: 'maybe' }), 400, 'invalid scheduling eligibility "maybe"');
    const types = (await h.state.eventsAfter(0)).filter((e) => e.key === id).map((e) => e.type);
    expect(types).toEqual(['NodeRegistration', 'NodeDrain', 'NodeDrain', 'NodeEligibility']);
    expectPlain(await request(h.app).put('/v1/node/00000000-0000-0000-0000-000000000000/drain').send({ DrainSpec: null }), 404, 'node not found');
  });

  it('lists the allocations of a node', async () => {
    await registerJob(h.app, minimalJob('on-node'));
    const id = await registerNode(h.app);
    const a = await insertAllocation(h, { JobID: 'on-node', NodeID: id });
    const res = await request(h.app).get(`/v1/node/${id}/allocations`);
    expect(res.status).toBe(200);
    expect(res.body.map((x: { ID: string }) => x.ID)).toEqual([a.ID]);
    expect(res.body[0].Job.ID).toBe('on-node');
  });
});

describe('allocations and evaluations', () => {
  it('lists, reads and stops allocations', async () => {
    await registerJob(h.app, minimalJob('alloc-job'));
    const node = await registerNode(h.app);
    const a = await insertAllocation(h, { JobID: 'alloc-job', NodeID: node });
    const list = await request(h.app).get('/v1/allocations');
    expect(list.status).toBe(200);
    expect(list.body.find((x: { ID: string }) => x.ID === a.ID)).toMatchObject({ JobID: 'alloc-job', DesiredStatus: 'run', TaskGroup: 'web' });
    const one = await request(h.app).get(`/v1/allocation/${a.ID}`);
    expect(one.body).toMatchObject({ ID: a.ID, Job: { ID: 'alloc-job' } });
    expectPlain(await request(h.app).get('/v1/allocation/nope'), 404, 'alloc not found');
    const stop = await request(h.app).post(`/v1/allocation/${a.ID}/stop`);
    expect(stop.status).toBe(200);
    expect(stop.body).toEqual({ EvalID: expect.any(String), Index: Number(stop.headers['x-scheduler-index']) });
    expect((await request(h.app).get(`/v1/allocation/${a.ID}`)).body.DesiredTransition.Migrate).toBe(true);
    const ev = await request(h.app).get(`/v1/evaluation/${stop.body.EvalID}`);
    expect(ev.body).toMatchObject({ TriggeredBy: 'alloc-stop', Status: 'pending', JobID: 'alloc-job' });
    // pagination by CreateIndex: token "<CreateIndex>.<ID>"
    const p = await request(h.app).get('/v1/allocations?per_page=1');
    if (list.body.length > 1) expect(p.headers['x-scheduler-nexttoken']).toMatch(/^\d+\.[0-9a-f-]{36}$/);
  });

  it('lists and reads evaluations, with the legacy status/job parameters', async () => {
    const r = await registerJob(h.app, minimalJob('eval-job'));
    const list = await request(h.app).get('/v1/evaluations?job=eval-job');
    expect(list.body.map((e: { ID: string }) => e.ID)).toEqual([r['EvalID']]);
    expect((await request(h.app).get('/v1/evaluations?status=complete')).body).toEqual([]);
    const one = await request(h.app).get(`/v1/evaluation/${String(r['EvalID'])}?related=true`);
    expect(one.body).toMatchObject({ ID: r['EvalID'], RelatedEvals: [] });
    expectPlain(await request(h.app).get('/v1/evaluation/nope'), 404, 'eval not found');
    expect((await request(h.app).get(`/v1/evaluation/${String(r['EvalID'])}/allocations`)).body).toEqual([]);
    expectPlain(
      await request(h.app).get('/v1/evaluations?job=eval-job&filter=' + encodeURIComponent('Status == "pending"')),
      400,
      'Filter expression cannot be used with other filter parameters',
    );
  });
});

describe('deployments', () => {
  it('lists, reads, pauses, resumes, promotes and fails a deployment', async () => {
    await registerJob(h.app, minimalJob('dep-job'));
    const d = await insertDeployment(h, 'dep-job');
    expect((await request(h.app).get('/v1/deployments')).body.map((x: { ID: string }) => x.ID)).toContain(d.ID);
    expectPlain(await request(h.app).get('/v1/deployment/nope'), 404, 'deployment not found');
    expectPlain(await request(h.app).put(`/v1/deployment/pause/${d.ID}`).send({ Pause: true }), 400, 'DeploymentID must be specified');
    expectPlain(await request(h.app).put(`/v1/deployment/pause/${d.ID}`).send({ DeploymentID: 'x', Pause: true }), 400, 'Deployment ID does not match');
    const pause = await request(h.app).put(`/v1/deployment/pause/${d.ID}`).send({ DeploymentID: d.ID, Pause: true });
    expect(pause.status).toBe(200);
    expect(pause.body).toMatchObject({ EvalID: '', DeploymentModifyIndex: pause.body.Index, RevertedJobVersion: null });
    expect((await request(h.app).get(`/v1/deployment/${d.ID}`)).body).toMatchObject({ Status: 'paused', StatusDescription: 'Deployment is paused' });
    const resume = await request(h.app).put(`/v1/deployment/pause/${d.ID}`).send({ DeploymentID: d.ID, Pause: false });
    expect(resume.body.EvalID).not.toBe('');
    const promote = await request(h.app).post(`/v1/deployment/promote/${d.ID}`).send({ DeploymentID: d.ID, All: true });
    expect(promote.status).toBe(200);
    expect((await request(h.app).get(`/v1/deployment/${d.ID}`)).body.TaskGroups.web.Promoted).toBe(true);
    const fail = await request(h.app).put(`/v1/deployment/fail/${d.ID}`);
    expect(fail.status).toBe(200);
    expect((await request(h.app).get(`/v1/deployment/${d.ID}`)).body).toMatchObject({ Status: 'failed', StatusDescription: 'Deployment marked as failed' });
    expectPlain(await request(h.app).put(`/v1/deployment/fail/${d.ID}`), 400, "can't fail terminal deployment");
    expectPlain(await request(h.app).put(`/v1/deployment/promote/${d.ID}`).send({ DeploymentID: d.ID, All: true }), 400, "can't promote terminal deployment");
    const types = (await h.state.eventsAfter(0)).filter((e) => e.topic === 'Deployment' && e.key === d.ID).map((e) => e.type);
    expect(types).toEqual(['DeploymentStatusUpdate', 'DeploymentStatusUpdate', 'DeploymentStatusUpdate', 'DeploymentPromotion', 'DeploymentStatusUpdate']);
  });

  it('records allocation health and fails on unhealthy allocations', async () => {
    await registerJob(h.app, minimalJob('health-job'));
    const node = await registerNode(h.app);
    const d = await insertDeployment(h, 'health-job');
    const good = await insertAllocation(h, { JobID: 'health-job', NodeID: node, DeploymentID: d.ID });
    const bad = await insertAllocation(h, { JobID: 'health-job', NodeID: node, DeploymentID: d.ID });
    const ok = await request(h.app).put(`/v1/deployment/allocation-health/${d.ID}`).send({ DeploymentID: d.ID, HealthyAllocationIDs: [good.ID] });
    expect(ok.status).toBe(200);
    expect((await request(h.app).get(`/v1/deployment/${d.ID}`)).body.TaskGroups.web.HealthyAllocs).toBe(1);
    expect((await request(h.app).get(`/v1/allocation/${good.ID}`)).body.DeploymentStatus.Healthy).toBe(true);
    const allocs = await request(h.app).get(`/v1/deployment/allocations/${d.ID}`);
    expect(allocs.body.map((a: { ID: string }) => a.ID).sort()).toEqual([good.ID, bad.ID].sort());
    await request(h.app).put(`/v1/deployment/allocation-health/${d.ID}`).send({ DeploymentID: d.ID, UnhealthyAllocationIDs: [bad.ID] }).expect(200);
    expect((await request(h.app).get(`/v1/deployment/${d.ID}`)).body).toMatchObject({ Status: 'failed', StatusDescription: 'Failed due to unhealthy allocations' });
    const ev = (await h.state.eventsAfter(0)).filter((e) => e.type === 'DeploymentAllocHealth').map((e) => e.topic);
    expect(ev).toEqual(expect.arrayContaining(['Allocation', 'Deployment', 'Evaluation']));
  });
});

describe('namespaces', () => {
  it('creates, reads, lists and deletes namespaces', async () => {
    await request(h.app).put('/v1/namespace/ops').send({ Description: 'operations', Meta: { team: 'ops' } }).expect(200);
    const ns = await request(h.app).get('/v1/namespace/ops');
    expect(ns.body).toMatchObject({ Name: 'ops', Description: 'operations', Meta: { team: 'ops' } });
    expect(ns.headers['x-scheduler-index']).toBeDefined();
    const list = await request(h.app).get('/v1/namespaces');
    expect(list.body.map((n: { Name: string }) => n.Name)).toEqual(expect.arrayContaining(['default', 'ops']));
    await request(h.app).post('/v1/namespace').send({ Name: 'ops2' }).expect(200);
    expectPlain(await request(h.app).delete('/v1/namespace/default'), 400, 'default namespace can not be deleted');
    await registerJob(h.app, minimalJob('ops-job', { Namespace: 'ops' }));
    expectPlain(await request(h.app).delete('/v1/namespace/ops'), 400, 'namespace "ops" has non-terminal jobs in regions: [global]');
    await request(h.app).delete('/v1/namespace/ops2').expect(200);
    expectPlain(await request(h.app).get('/v1/namespace/ops2'), 404, 'namespace not found');
    expectPlain(await request(h.app).put('/v1/namespace/bad name').send({}), 400, 'invalid name "bad name". Must match regex ^[a-zA-Z0-9-]{1,128}$');
  });
});

describe('agent and status', () => {
  it('answers members, self, leader, peers', async () => {
    const members = await request(h.app).get('/v1/agent/members');
    expect(members.body).toMatchObject({ ServerRegion: 'global', ServerDC: 'dc1', Members: [expect.objectContaining({ Status: 'alive', Tags: expect.objectContaining({ region: 'global', dc: 'dc1' }) })] });
    const self = await request(h.app).get('/v1/agent/self');
    expect(self.body.config).toMatchObject({ Region: 'global', Datacenter: 'dc1', ACL: { Enabled: false } });
    expect((await request(h.app).get('/v1/status/leader')).body).toBe('127.0.0.1:4647');
    expect((await request(h.app).get('/v1/status/peers')).body).toEqual(['127.0.0.1:4647']);
  });
});

describe('filter on every list endpoint', () => {
  let nodeA = '';
  let depId = '';
  beforeAll(async () => {
    await registerJob(h.app, minimalJob('flt-a', { Meta: { tier: 'gold' }, Priority: 70 }));
    await registerJob(h.app, minimalJob('flt-b', { Meta: { tier: 'bronze' } }));
    nodeA = await registerNode(h.app, { Name: 'flt-node', HTTPAddr: '192.168.9.9:4646', Meta: { rack: 'r9' } });
    await insertAllocation(h, { JobID: 'flt-a', NodeID: nodeA, ClientStatus: 'failed' });
    depId = (await insertDeployment(h, 'flt-b')).ID;
  });

  const f = (e: string) => encodeURIComponent(e);

  it('filters jobs on the full job (Meta, TaskGroups), not the stub', async () => {
    const gold = await request(h.app).get(`/v1/jobs?filter=${f('Meta.tier == "gold"')}`);
    expect(gold.body.map((j: { ID: string }) => j.ID)).toEqual(['flt-a']);
    const tg = await request(h.app).get(`/v1/jobs?prefix=flt-&filter=${f('TaskGroups.0.Tasks.0.Driver == docker')}`);
    expect(tg.body.map((j: { ID: string }) => j.ID)).toEqual(['flt-a', 'flt-b']);
    const notIn = await request(h.app).get(`/v1/jobs?prefix=flt-&filter=${f('Priority != 70 and "bronze" in Meta.tier')}`);
    expect(notIn.body.map((j: { ID: string }) => j.ID)).toEqual(['flt-b']);
    const missing = await request(h.app).get(`/v1/jobs?filter=${f('Meta.nothing == "x"')}`);
    expect(missing.body).toEqual([]);
  });

  it('answers the anchor 400s for missing fields and bad expressions', async () => {
    const res = await request(h.app).get(`/v1/nodes?filter=${f('Address == "192.168.9.9"')}`);
    expect(res.status).toBe(400);
    expect(res.text).toBe('failed to read result page: error finding value in datum: /Address at part 0: couldn\'t find key: struct field with name "Address"');
    const parse = await request(h.app).get(`/v1/jobs?filter=${f('Status ==')}`);
    expect(parse.status).toBe(400);
    expect(parse.text).toMatch(/^failed to create result paginator: failed to read filter expression: 1:10 \(9\): no match found, expected: /);
  });

  it('filters nodes, allocations, evaluations, deployments and ACL tokens', async () => {
    const nodes = await request(h.app).get(`/v1/nodes?filter=${f('HTTPAddr matches "^192\\\\.168" and Meta.rack == r9')}`);
    expect(nodes.body.map((n: { ID: string }) => n.ID)).toEqual([nodeA]);
    const allocs = await request(h.app).get(`/v1/allocations?filter=${f('ClientStatus == "failed" and Job.Meta.tier == gold')}`);
    expect(allocs.body.map((a: { JobID: string }) => a.JobID)).toEqual(['flt-a']);
    const evals = await request(h.app).get(`/v1/evaluations?filter=${f('JobID == "flt-b" and TriggeredBy == "job-register"')}`);
    expect(evals.body).toHaveLength(1);
    expect(evals.body[0].JobID).toBe('flt-b');
    const deps = await request(h.app).get(`/v1/deployments?filter=${f('JobID == "flt-b" and TaskGroups.web.DesiredCanaries == 1')}`);
    expect(deps.body.map((d: { ID: string }) => d.ID)).toEqual([depId]);
    const tokens = await request(h.app).get(`/v1/acl/tokens?filter=${f('Type == "management"')}`);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toEqual([]);
  });

  it('applies the filter before per_page, and the token points at the next match', async () => {
    for (const id of ['fp-1', 'fp-2', 'fp-3', 'fp-4']) await registerJob(h.app, minimalJob(id, { Priority: id === 'fp-2' ? 10 : 60 }));
    const res = await request(h.app).get(`/v1/jobs?prefix=fp-&per_page=2&filter=${f('Priority == 60')}`);
    expect(res.body.map((j: { ID: string }) => j.ID)).toEqual(['fp-1', 'fp-3']);
    expect(res.headers['x-scheduler-nexttoken']).toBe('default.fp-4');
  });
});
