// Concurrent writers against every route that creates or updates a named resource: 8
// identical requests (and 8 differing ones) at once, half through a second process on the
// same database and bus. Never a 5xx; Nomad's statuses; the resource exists once and holds
// one of the bodies sent; write indexes are distinct and the read index covers them all.
//
// Write routes on named resources (docs/scheduler.md "Endpoints"; statuses from
// ../shared/reference/workload-scheduler-nomad-api.md; every write is a 200 in Nomad):
//   PUT /v1/jobs, PUT /v1/job/:id              register = upsert: all 200; an unchanged spec keeps its Version,
//                                              each changed spec gets the next Version (reference §1)
//   PUT /v1/jobs {EnforceIndex}                check-and-set: one 200, the rest 400 `Enforcing job modify index ...`
//   DELETE /v1/job/:id?purge=true              200 also for a missing job (zeros)            -> register+purge race
//   PUT /v1/namespace/:name, PUT /v1/namespace upsert: all 200; DELETE 200 / 404 `namespace not found` -> create+delete race
//                                              (+ job register into a namespace being deleted: no orphan job)
//   PUT /v1/internal/node/register             upsert by node ID: all 200; another SecretID: 403 `Permission denied`
//   PUT /v1/node/:id/drain, /eligibility       update: all 200, distinct NodeModifyIndex
//   PUT /v1/allocation/:id/stop                update: all 200, one alloc-stop evaluation each
//   PUT /v1/deployment/pause/:id               update: all 200
//   PUT /v1/acl/bootstrap                      once: one 200, the rest 400 `ACL bootstrap already done (reset index: N)`
//   PUT /v1/acl/policy/:name                   upsert: all 200; DELETE 200 / 404 `ACL policy not found` -> create+delete race
//   PUT /v1/acl/token/:accessor                update: all 200, one of the bodies stored
// Skipped: PUT /v1/acl/token (creates a new accessor each time, no name to race on);
// deployment fail/promote/allocation-health (state transitions of one deployment, the same
// withWrite path as pause; fail/promote on a terminal deployment are documented 400s).
import type { Express } from 'express';
import request from 'supertest';
import { insertAllocation, insertDeployment, minimalJob, registerNode, startHarness, type Harness } from './harness';

/** The request behind a supertest response (supertest's types do not declare `req`). */
const methodOf = (r: { status: number }): string => (r as unknown as { req: { method: string } }).req.method;

const N = 8;
let h: Harness;
let sib: { app: Express; close(): Promise<void> };
const app = (i: number): Express => (i % 2 === 0 ? h.app : sib.app);
const times = <T>(fn: (i: number) => T): T[] => Array.from({ length: N }, (_, i) => fn(i));
type Res = request.Response;

function no5xx(rs: Res[]): void {
  for (const r of rs) if (r.status >= 500) throw new Error(`5xx: ${r.status} ${r.text}`);
}
const sorted = (rs: Res[]): number[] => rs.map((r) => r.status).sort((a, b) => a - b);
const indexOf = (r: Res): number => Number(r.headers['x-scheduler-index']);
/** Successful writes each took their own index from the counter. */
function distinctIndexes(rs: Res[]): number[] {
  const ix = rs.filter((r) => r.status === 200).map(indexOf);
  expect(new Set(ix).size).toBe(ix.length);
  for (const i of ix) expect(i).toBeGreaterThan(0);
  return ix;
}
function interleave(create: (i: number) => Promise<Res>, del: (i: number) => Promise<Res>): Promise<Res[]> {
  const all: Promise<Res>[] = [];
  for (let i = 0; i < N; i++) all.push(create(i), del(i));
  return Promise.all(all);
}

beforeAll(async () => {
  h = await startHarness();
  sib = await h.sibling();
});
afterAll(async () => {
  await sib.close();
  await h.close();
});

describe('jobs', () => {
  it('8 identical registers: all 200, Version 0 once, one job row', async () => {
    const rs = await Promise.all(times((i) => request(app(i)).put('/v1/jobs').send({ Job: minimalJob('same') })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const ix = distinctIndexes(rs);
    // Only the first register changed the spec: every answer names that JobModifyIndex.
    expect(new Set(rs.map((r) => r.body.JobModifyIndex)).size).toBe(1);
    expect(rs[0]?.body.JobModifyIndex).toBe(Math.min(...ix));
    const job = await request(h.app).get('/v1/job/same').expect(200);
    expect(job.body).toMatchObject({ ID: 'same', Version: 0, JobModifyIndex: Math.min(...ix) });
    expect(indexOf(job)).toBeGreaterThanOrEqual(Math.max(...ix));
    const versions = await request(sib.app).get('/v1/job/same/versions').expect(200);
    expect(versions.body.Versions.map((v: { Version: number }) => v.Version)).toEqual([0]);
    expect(await h.prisma.schedulerJob.count({ where: { id: 'same' } })).toBe(1);
    const evals = await request(h.app).get('/v1/job/same/evaluations').expect(200);
    expect(evals.body).toHaveLength(N);
  });

  it('8 different registers: versions 0..7 once each, the newest is stored and listed once', async () => {
    const rs = await Promise.all(times((i) => request(app(i)).put('/v1/job/diff').send({ Job: minimalJob('diff', { Meta: { writer: String(i) } }) })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const ix = distinctIndexes(rs);
    const job = await request(sib.app).get('/v1/job/diff').expect(200);
    const last = rs[ix.indexOf(Math.max(...ix))] as Res;
    expect(job.body).toMatchObject({ Version: N - 1, JobModifyIndex: last.body.JobModifyIndex, Meta: { writer: String(rs.indexOf(last)) } });
    const versions = await request(h.app).get('/v1/job/diff/versions').expect(200);
    const vs = versions.body.Versions as { Version: number; JobModifyIndex: number; Meta: { writer: string } }[];
    expect(vs.map((v) => v.Version)).toEqual(times((i) => N - 1 - i));
    // Version order follows index order, and each body is one version.
    expect(vs.map((v) => v.JobModifyIndex)).toEqual([...ix].sort((a, b) => b - a));
    expect(vs.map((v) => v.Meta.writer).sort()).toEqual(times(String));
    const list = await request(h.app).get('/v1/jobs?prefix=diff').expect(200);
    expect(list.body).toHaveLength(1);
    expect(await h.prisma.schedulerJobVersion.count({ where: { jobId: 'diff' } })).toBe(N);
  });

  it('8 EnforceIndex creators of one new job: one 200, seven "job already exists"', async () => {
    const rs = await Promise.all(
      times((i) => request(app(i)).put('/v1/jobs').send({ Job: minimalJob('enforced', { Meta: { writer: String(i) } }), EnforceIndex: true, JobModifyIndex: 0 })),
    );
    no5xx(rs);
    expect(sorted(rs)).toEqual([200, ...times(() => 400).slice(1)]);
    for (const r of rs.filter((x) => x.status === 400)) expect(r.text).toBe('Enforcing job modify index 0: job already exists');
    const winner = rs.findIndex((r) => r.status === 200);
    const job = await request(h.app).get('/v1/job/enforced').expect(200);
    expect(job.body).toMatchObject({ Version: 0, Meta: { writer: String(winner) } });

    // Check-and-set on the current index with 8 different bodies: one wins.
    const at = job.body.JobModifyIndex as number;
    const cas = await Promise.all(
      times((i) => request(app(i)).put('/v1/job/enforced').send({ Job: minimalJob('enforced', { Meta: { cas: String(i) } }), EnforceIndex: true, JobModifyIndex: at })),
    );
    no5xx(cas);
    expect(sorted(cas)).toEqual([200, ...times(() => 400).slice(1)]);
    const won = cas.find((r) => r.status === 200) as Res;
    for (const r of cas.filter((x) => x.status === 400)) {
      expect(r.text).toBe(`Enforcing job modify index ${at}: job exists with conflicting job modify index: ${String(won.body.JobModifyIndex)}`);
    }
    const after = await request(sib.app).get('/v1/job/enforced').expect(200);
    expect(after.body).toMatchObject({ Version: 1, Meta: { cas: String(cas.indexOf(won)) } });
  });

  it('8 registers and 8 purges interleaved: job, list, summary and versions agree', async () => {
    const rs = await interleave(
      (i) => request(app(i)).put('/v1/jobs').send({ Job: minimalJob('flap', { Meta: { writer: String(i) } }) }),
      (i) => request(app(i + 1)).delete('/v1/job/flap?purge=true'),
    );
    no5xx(rs);
    expect(sorted(rs)).toEqual(Array.from({ length: 2 * N }, () => 200));
    const job = await request(h.app).get('/v1/job/flap');
    const listed = ((await request(sib.app).get('/v1/jobs?prefix=flap').expect(200)).body as unknown[]).length;
    const summary = await request(h.app).get('/v1/job/flap/summary');
    const versions = await request(sib.app).get('/v1/job/flap/versions');
    if (job.status === 200) {
      expect([listed, summary.status, versions.status]).toEqual([1, 200, 200]);
      // Versions restart at 0 after a purge: exactly 0..current, newest matches the job.
      const vs = (versions.body.Versions as { Version: number; Meta: unknown }[]).map((v) => v.Version);
      expect(vs).toEqual(Array.from({ length: (job.body.Version as number) + 1 }, (_, i) => job.body.Version - i));
      expect(versions.body.Versions[0].Meta).toEqual(job.body.Meta);
    } else {
      expect(job.status).toBe(404);
      expect([listed, summary.status]).toEqual([0, 404]);
      expect(await h.prisma.schedulerJobVersion.count({ where: { jobId: 'flap' } })).toBe(0);
    }
  });
});

describe('namespaces', () => {
  it('8 identical and 8 different upserts (path and body forms): all 200, one row', async () => {
    const same = await Promise.all(times((i) => request(app(i)).put('/v1/namespace/ns1').send({ Description: 'same' })));
    no5xx(same);
    expect(sorted(same)).toEqual(times(() => 200));
    distinctIndexes(same);
    const diff = await Promise.all(times((i) => request(app(i)).post('/v1/namespace').send({ Name: 'ns1', Description: `d${i}`, Meta: { w: String(i) } })));
    no5xx(diff);
    expect(sorted(diff)).toEqual(times(() => 200));
    const ix = distinctIndexes(diff);
    const ns = await request(sib.app).get('/v1/namespace/ns1').expect(200);
    const i = Number(ns.body.Meta.w);
    expect(ns.body).toMatchObject({ Description: `d${i}`, ModifyIndex: Math.max(...ix), CreateIndex: Math.min(...distinctIndexes(same)) });
    expect(indexOf(diff[i] as Res)).toBe(Math.max(...ix));
    const list = await request(h.app).get('/v1/namespaces').expect(200);
    expect(list.body.filter((n: { Name: string }) => n.Name === 'ns1')).toHaveLength(1);
    expect(await h.prisma.schedulerNamespace.count({ where: { name: 'ns1' } })).toBe(1);
  });

  it('8 upserts and 8 deletes interleaved: read and list agree', async () => {
    const rs = await interleave(
      (i) => request(app(i)).put('/v1/namespace/nsflap').send({ Description: `d${i}` }),
      (i) => request(app(i + 1)).delete('/v1/namespace/nsflap'),
    );
    no5xx(rs);
    for (const r of rs) {
      if (methodOf(r) === 'PUT') expect(r.status).toBe(200);
      else if (r.status !== 200) expect([r.status, r.text]).toEqual([404, 'namespace not found']);
    }
    const one = await request(h.app).get('/v1/namespace/nsflap');
    const listed = ((await request(sib.app).get('/v1/namespaces').expect(200)).body as { Name: string }[]).some((n) => n.Name === 'nsflap');
    expect([one.status, listed]).toEqual(one.status === 200 ? [200, true] : [404, false]);
  });

  it('8 job registers into a namespace racing 8 deletes of it: never a job in a missing namespace', async () => {
    await request(h.app).put('/v1/namespace/nsjobs').send({}).expect(200);
    const rs = await interleave(
      (i) => request(app(i)).put('/v1/jobs?namespace=nsjobs').send({ Job: minimalJob(`j${i}`, { Namespace: 'nsjobs' }) }),
      (i) => request(app(i + 1)).delete('/v1/namespace/nsjobs'),
    );
    no5xx(rs);
    for (const r of rs) {
      if (r.status === 200) continue;
      if (methodOf(r) === 'DELETE' && r.status === 404) {
        expect(r.text).toBe('namespace not found');
        continue;
      }
      expect(r.status).toBe(400);
      expect(r.text).toMatch(/^(job "j\d" is in nonexistent namespace "nsjobs"|namespace "nsjobs" has non-terminal jobs in regions: \[global\])$/);
    }
    const ns = await request(h.app).get('/v1/namespace/nsjobs');
    const jobs = (await request(sib.app).get('/v1/jobs?namespace=*').expect(200)).body as { Namespace: string }[];
    const inNs = jobs.filter((j) => j.Namespace === 'nsjobs').length;
    const registered = rs.filter((r) => methodOf(r) === 'PUT' && r.status === 200).length;
    expect(inNs).toBe(registered);
    if (ns.status === 404) expect(inNs).toBe(0);
  });
});

describe('nodes, allocations, deployments', () => {
  it('8 registrations of one node ID: all 200, one row; another secret is refused', async () => {
    const id = 'c0ffee00-0000-4000-8000-000000000001';
    const node = (i: number, secret: string) => ({ Node: { ID: id, SecretID: secret, Name: `n${i}`, Datacenter: 'dc1', HTTPAddr: '10.0.0.9:4646' } });
    const same = await Promise.all(times((i) => request(app(i)).put('/v1/internal/node/register').send(node(0, 'aaaa'))));
    no5xx(same);
    expect(sorted(same)).toEqual(times(() => 200));
    distinctIndexes(same);
    const diff = await Promise.all(times((i) => request(app(i)).put('/v1/internal/node/register').send(node(i, 'aaaa'))));
    no5xx(diff);
    expect(sorted(diff)).toEqual(times(() => 200));
    const got = await request(sib.app).get(`/v1/node/${id}`).expect(200);
    expect(times((i) => `n${i}`)).toContain(got.body.Name);
    expect(await h.prisma.schedulerNode.count({ where: { id } })).toBe(1);
    expect(((await request(h.app).get('/v1/nodes').expect(200)).body as { ID: string }[]).filter((n) => n.ID === id)).toHaveLength(1);

    // A fresh ID claimed with 8 different secrets at once: the first one owns it.
    const fresh = 'c0ffee00-0000-4000-8000-000000000002';
    const claims = await Promise.all(times((i) => request(app(i)).put('/v1/internal/node/register').send({ Node: { ...node(i, `secret-${i}`).Node, ID: fresh } })));
    no5xx(claims);
    expect(sorted(claims)).toEqual([200, ...times(() => 403).slice(1)]);
    for (const r of claims.filter((x) => x.status === 403)) expect(r.text).toBe('Permission denied');
    const owner = claims.findIndex((r) => r.status === 200);
    expect((await request(h.app).get(`/v1/node/${fresh}`).expect(200)).body.Name).toBe(`n${owner}`);
  });

  it('8 drains and 8 eligibility updates: all 200, distinct indexes, final state is one of them', async () => {
    const id = await registerNode(h.app);
    const drains = await Promise.all(times((i) => request(app(i)).put(`/v1/node/${id}/drain`).send({ DrainSpec: { Deadline: (i + 1) * 1e9, IgnoreSystemJobs: false } })));
    no5xx(drains);
    expect(sorted(drains)).toEqual(times(() => 200));
    const ix = distinctIndexes(drains);
    for (const r of drains) expect(r.body.NodeModifyIndex).toBe(indexOf(r));
    const drained = await request(h.app).get(`/v1/node/${id}`).expect(200);
    const last = drains.findIndex((r) => indexOf(r) === Math.max(...ix));
    expect(drained.body).toMatchObject({ Drain: true, ModifyIndex: Math.max(...ix), DrainStrategy: { DrainSpec: { Deadline: (last + 1) * 1e9 } } });
    await request(h.app).put(`/v1/node/${id}/drain`).send({ DrainSpec: null }).expect(200);
    const elig = await Promise.all(times((i) => request(app(i)).put(`/v1/node/${id}/eligibility`).send({ Eligibility: i % 2 === 0 ? 'eligible' : 'ineligible' })));
    no5xx(elig);
    expect(sorted(elig)).toEqual(times(() => 200));
    const eix = distinctIndexes(elig);
    const lastElig = elig.findIndex((r) => indexOf(r) === Math.max(...eix));
    expect((await request(sib.app).get(`/v1/node/${id}`).expect(200)).body.SchedulingEligibility).toBe(lastElig % 2 === 0 ? 'eligible' : 'ineligible');
  });

  it('8 stops of one allocation: all 200, one alloc-stop evaluation each', async () => {
    await request(h.app).put('/v1/jobs').send({ Job: minimalJob('alloc-job') }).expect(200);
    const node = await registerNode(h.app);
    const a = await insertAllocation(h, { JobID: 'alloc-job', NodeID: node });
    const rs = await Promise.all(times((i) => request(app(i)).post(`/v1/allocation/${a.ID}/stop`)));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    distinctIndexes(rs);
    expect(new Set(rs.map((r) => r.body.EvalID)).size).toBe(N);
    expect((await request(h.app).get(`/v1/allocation/${a.ID}`).expect(200)).body.DesiredTransition.Migrate).toBe(true);
    const evals = (await request(sib.app).get('/v1/job/alloc-job/evaluations').expect(200)).body as { TriggeredBy: string }[];
    expect(evals.filter((e) => e.TriggeredBy === 'alloc-stop')).toHaveLength(N);
  });

  it('8 pause/resume requests on one deployment: all 200, final status is the last write\'s', async () => {
    const d = await insertDeployment(h, 'dep-job');
    const rs = await Promise.all(times((i) => request(app(i)).put(`/v1/deployment/pause/${d.ID}`).send({ DeploymentID: d.ID, Pause: i % 2 === 0 })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const ix = distinctIndexes(rs);
    const last = rs.findIndex((r) => indexOf(r) === Math.max(...ix));
    const got = await request(h.app).get(`/v1/deployment/${d.ID}`).expect(200);
    expect(got.body).toMatchObject({ Status: last % 2 === 0 ? 'paused' : 'running', ModifyIndex: Math.max(...ix) });
  });
});

describe('ACLs', () => {
  let acl: Express;
  let acl2: Express;
  let root = '';
  const mgmt = () => ({ 'X-Scheduler-Token': root });
  const aclApp = (i: number): Express => (i % 2 === 0 ? acl : acl2);
  beforeAll(() => {
    acl = h.appWith({ aclEnabled: true });
    acl2 = h.appWith({ aclEnabled: true });
  });

  it('8 concurrent bootstraps: one 200, seven "already done"; one management token', async () => {
    const rs = await Promise.all(times((i) => request(aclApp(i)).put('/v1/acl/bootstrap')));
    no5xx(rs);
    expect(sorted(rs)).toEqual([200, ...times(() => 400).slice(1)]);
    const won = rs.find((r) => r.status === 200) as Res;
    root = won.body.SecretID as string;
    for (const r of rs.filter((x) => x.status === 400)) expect(r.text).toBe(`ACL bootstrap already done (reset index: ${String(won.body.CreateIndex)})`);
    const tokens = await request(acl).get('/v1/acl/tokens').set(mgmt()).expect(200);
    expect(tokens.body).toHaveLength(1);
  });

  it('8 identical and 8 different policy upserts: all 200, one row holding one body', async () => {
    const rules = (i: number) => `namespace "n${i}" { policy = "read" }`;
    const same = await Promise.all(times((i) => request(aclApp(i)).put('/v1/acl/policy/p1').set(mgmt()).send({ Name: 'p1', Rules: rules(0) })));
    no5xx(same);
    expect(sorted(same)).toEqual(times(() => 200));
    const diff = await Promise.all(times((i) => request(aclApp(i)).put('/v1/acl/policy/p1').set(mgmt()).send({ Name: 'p1', Rules: rules(i), Description: `d${i}` })));
    no5xx(diff);
    expect(sorted(diff)).toEqual(times(() => 200));
    const ix = distinctIndexes(diff);
    const last = diff.findIndex((r) => indexOf(r) === Math.max(...ix));
    const got = await request(acl2).get('/v1/acl/policy/p1').set(mgmt()).expect(200);
    expect(got.body).toMatchObject({ Rules: rules(last), Description: `d${last}`, ModifyIndex: Math.max(...ix) });
    expect(await h.prisma.schedulerAclPolicy.count({ where: { name: 'p1' } })).toBe(1);
  });

  it('8 policy upserts and 8 deletes interleaved: read and list agree', async () => {
    const rs = await interleave(
      (i) => request(aclApp(i)).put('/v1/acl/policy/pflap').set(mgmt()).send({ Rules: 'namespace "x" { policy = "read" }' }),
      (i) => request(aclApp(i + 1)).delete('/v1/acl/policy/pflap').set(mgmt()),
    );
    no5xx(rs);
    for (const r of rs) {
      if (methodOf(r) === 'PUT' || r.status === 200) expect(r.status).toBe(200);
      else expect([r.status, r.text]).toEqual([404, 'ACL policy not found']);
    }
    const one = await request(acl).get('/v1/acl/policy/pflap').set(mgmt());
    const listed = ((await request(acl2).get('/v1/acl/policies').set(mgmt()).expect(200)).body as { Name: string }[]).some((p) => p.Name === 'pflap');
    expect([one.status, listed]).toEqual(one.status === 200 ? [200, true] : [404, false]);
  });

  it('8 updates of one token: all 200, the stored token is the last write', async () => {
    const created = await request(acl).put('/v1/acl/token').set(mgmt()).send({ Name: 't', Type: 'client', Policies: ['p1'] }).expect(200);
    const accessor = created.body.AccessorID as string;
    const rs = await Promise.all(times((i) => request(aclApp(i)).put(`/v1/acl/token/${accessor}`).set(mgmt()).send({ Name: `t${i}`, Type: 'client', Policies: ['p1'] })));
    no5xx(rs);
    expect(sorted(rs)).toEqual(times(() => 200));
    const ix = distinctIndexes(rs);
    const last = rs.findIndex((r) => indexOf(r) === Math.max(...ix));
    const got = await request(acl2).get(`/v1/acl/token/${accessor}`).set(mgmt()).expect(200);
    expect(got.body).toMatchObject({ Name: `t${last}`, CreateIndex: created.body.CreateIndex, ModifyIndex: Math.max(...ix) });
    // The secret still works (updates do not touch it).
    expect((await request(acl).get('/v1/acl/token/self').set('X-Scheduler-Token', created.body.SecretID as string)).status).toBe(200);
  });
});
