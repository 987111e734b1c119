// The scheduling engine end to end (issue 25): a registered service job is placed on
// ready nodes, the nodes report client status through the API, the job runs, is stopped
// and ends dead; a batch job completes. Real PostgreSQL and Redis, the engine in-process.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { waitFor } from '@selfstack/testing';
import type { JsonObject } from '../src/shared/common.types';
import { registerReadyNode, startHarness, type Harness, type TestNode } from './harness';

let h: Harness;
const allNodes = new Map<string, TestNode>();

async function readyNode(app: Harness['app'], fields: JsonObject = {}): Promise<TestNode> {
  const n = await registerReadyNode(app, fields);
  allNodes.set(n.id, n);
  return n;
}

beforeAll(async () => {
  h = await startHarness();
  await h.startEngine();
});

afterAll(async () => {
  await h.close();
});

async function allocsOf(jobId: string): Promise<JsonObject[]> {
  const res = await request(h.app).get(`/v1/job/${jobId}/allocations`);
  expect(res.status).toBe(200);
  return res.body as JsonObject[];
}

async function job(jobId: string): Promise<JsonObject> {
  const res = await request(h.app).get(`/v1/job/${jobId}`);
  expect(res.status).toBe(200);
  return res.body as JsonObject;
}

async function report(node: TestNode, updates: JsonObject[]) {
  return request(h.app).post(`/v1/internal/node/${node.id}/allocations`).set('X-Nomad-Token', node.secret).send({ Allocs: updates });
}

describe('service job: register -> placed -> running -> stop -> dead', () => {
  let nodes: TestNode[];
  beforeAll(async () => {
    nodes = [await readyNode(h.app), await readyNode(h.app)];
  });

  it('places every allocation, completes the evaluation and runs the job', async () => {
    const reg = await request(h.app)
      .put('/v1/jobs')
      .send({
        Job: {
          ID: 'web',
          Datacenters: ['dc1'],
          TaskGroups: [{ Name: 'web', Count: 3, Tasks: [{ Name: 'nginx', Driver: 'docker', Config: { image: 'nginx' }, Resources: { CPU: 500, MemoryMB: 256 } }] }],
        },
      });
    expect(reg.status).toBe(200);
    const evalId = reg.body.EvalID as string;
    const ev = await waitFor('evaluation complete', async () => {
      const r = await request(h.app).get(`/v1/evaluation/${evalId}`);
      return r.body.Status === 'complete' ? (r.body as JsonObject) : undefined;
    });
    expect(ev).toMatchObject({ TriggeredBy: 'job-register', Status: 'complete', FailedTGAllocs: null, QueuedAllocations: { web: 0 }, BlockedEval: '' });
    const allocs = await allocsOf('web');
    expect(allocs).toHaveLength(3);
    expect(allocs.map((a) => a['Name']).sort()).toEqual(['web.web[0]', 'web.web[1]', 'web.web[2]']);
    for (const a of allocs) {
      expect(a).toMatchObject({ DesiredStatus: 'run', ClientStatus: 'pending', EvalID: evalId, JobID: 'web', TaskGroup: 'web', JobVersion: 0 });
      expect(nodes.map((n) => n.id)).toContain(a['NodeID']);
    }
    // Anti-affinity spreads the three over both nodes.
    expect(new Set(allocs.map((a) => a['NodeID'])).size).toBe(2);
    const full = await request(h.app).get(`/v1/allocation/${String(allocs[0]?.['ID'])}`);
    expect(full.body.AllocatedResources.Tasks.nginx).toMatchObject({ Cpu: { CpuShares: 500 }, Memory: { MemoryMB: 256 } });
    expect(full.body.Metrics.NodesEvaluated).toBeGreaterThan(0);
    expect((await job('web'))['Status']).toBe('running');
    const summary = await request(h.app).get('/v1/job/web/summary');
    expect(summary.body.Summary.web).toEqual({ Queued: 0, Starting: 3, Running: 0, Complete: 0, Failed: 0, Lost: 0, Unknown: 0 });
  });

  it('takes client status from the node and counts it in the summary', async () => {
    const allocs = await allocsOf('web');
    for (const node of nodes) {
      const mine = allocs.filter((a) => a['NodeID'] === node.id);
      const res = await report(node, mine.map((a) => ({ ID: a['ID'], ClientStatus: 'running', TaskStates: { nginx: { State: 'running', Failed: false } } })));
      expect(res.status).toBe(200);
      expect(Number(res.headers['x-nomad-index'])).toBeGreaterThan(0);
    }
    const summary = await request(h.app).get('/v1/job/web/summary');
    expect(summary.body.Summary.web).toMatchObject({ Running: 3, Starting: 0 });
    const a = await request(h.app).get(`/v1/allocation/${String(allocs[0]?.['ID'])}`);
    expect(a.body.ClientStatus).toBe('running');
    expect(a.body.TaskStates.nginx.State).toBe('running');
  });

  it('refuses client updates without the node secret, for another node, or malformed', async () => {
    const allocs = await allocsOf('web');
    const onFirst = allocs.find((a) => a['NodeID'] === nodes[0]?.id) as JsonObject;
    const noSecret = await request(h.app).post(`/v1/internal/node/${nodes[0]?.id}/allocations`).send({ Allocs: [{ ID: onFirst['ID'], ClientStatus: 'running' }] });
    expect(noSecret.status).toBe(403);
    expect(noSecret.text).toBe('Permission denied');
    const wrongNode = await report(nodes[1] as TestNode, [{ ID: onFirst['ID'], ClientStatus: 'running' }]);
    expect(wrongNode.status).toBe(400);
    expect(wrongNode.headers['content-type']).toMatch(/^text\/plain/);
    const bad = await report(nodes[0] as TestNode, [{ ID: onFirst['ID'], ClientStatus: 'exploded' }]);
    expect(bad.status).toBe(400);
    const unknownNode = await request(h.app).post(`/v1/internal/node/${randomUUID()}/allocations`).set('X-Nomad-Token', 'x').send({ Allocs: [{ ID: 'a', ClientStatus: 'running' }] });
    expect(unknownNode.status).toBe(404);
  });

  it('stops the allocations when the job is stopped, and the job ends dead', async () => {
    const del = await request(h.app).delete('/v1/job/web');
    expect(del.status).toBe(200);
    await waitFor('evaluation complete', async () => {
      const r = await request(h.app).get(`/v1/evaluation/${String(del.body.EvalID)}`);
      return r.body.Status === 'complete' ? true : undefined;
    });
    const allocs = await allocsOf('web');
    expect(allocs.every((a) => a['DesiredStatus'] === 'stop' && a['DesiredDescription'] === 'alloc not needed due to job update')).toBe(true);
    for (const node of nodes) {
      const mine = allocs.filter((a) => a['NodeID'] === node.id);
      expect((await report(node, mine.map((a) => ({ ID: a['ID'], ClientStatus: 'complete' })))).status).toBe(200);
    }
    const j = await job('web');
    expect(j).toMatchObject({ Status: 'dead', Stop: true });
    const summary = await request(h.app).get('/v1/job/web/summary');
    expect(summary.body.Summary.web).toMatchObject({ Complete: 3, Running: 0 });
  });
});

describe('batch job', () => {
  it('runs to completion and the job is dead', async () => {
    await readyNode(h.app);
    const reg = await request(h.app)
      .put('/v1/jobs')
      .send({ Job: { ID: 'report', Type: 'batch', TaskGroups: [{ Name: 'r', Count: 2, Tasks: [{ Name: 't', Driver: 'exec', Resources: { CPU: 100, MemoryMB: 64 } }] }] } });
    expect(reg.status).toBe(200);
    const allocs = await waitFor('batch placed', async () => {
      const a = await allocsOf('report');
      return a.length === 2 ? a : undefined;
    });
    expect((await job('report'))['Status']).toBe('running');
    for (const a of allocs) {
      const node = allNodes.get(String(a['NodeID'])) as TestNode;
      expect((await report(node, [{ ID: a['ID'], ClientStatus: 'running' }])).status).toBe(200);
      expect((await report(node, [{ ID: a['ID'], ClientStatus: 'complete' }])).status).toBe(200);
    }
    expect((await job('report'))['Status']).toBe('dead');
    const summary = await request(h.app).get('/v1/job/report/summary');
    expect(summary.body.Summary.r).toMatchObject({ Complete: 2, Running: 0, Starting: 0, Queued: 0 });
    // A finished batch allocation is not replaced: a new evaluation places nothing.
    const ev = await request(h.app).put('/v1/job/report').send({ Job: { ID: 'report', Type: 'batch', TaskGroups: [{ Name: 'r', Count: 2, Tasks: [{ Name: 't', Driver: 'exec', Resources: { CPU: 100, MemoryMB: 64 } }] }] } });
    await waitFor('re-evaluation complete', async () => {
      const r = await request(h.app).get(`/v1/evaluation/${String(ev.body.EvalID)}`);
      return r.body.Status === 'complete' ? true : undefined;
    });
    expect(await allocsOf('report')).toHaveLength(2);
    expect((await job('report'))['Status']).toBe('dead');
  });
});

describe('client updates with ACLs enabled', () => {
  it('accept the node SecretID or a management token, and nothing else', async () => {
    const acl = h.appWith({ aclEnabled: true });
    const node = await readyNode(h.app);
    const reg = await request(h.app).put('/v1/jobs').send({ Job: { ID: 'acl-job', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker', Resources: { CPU: 100, MemoryMB: 64 } }] }] } });
    expect(reg.status).toBe(200);
    await waitFor('placed', async () => ((await allocsOf('acl-job')).length === 1 ? true : undefined));
    const [a] = await allocsOf('acl-job');
    const body = { Allocs: [{ ID: (a as JsonObject)['ID'], ClientStatus: 'running' }] };
    const owner = allNodes.get(String((a as JsonObject)['NodeID'])) as TestNode;
    const anonymous = await request(acl).post(`/v1/internal/node/${owner.id}/allocations`).send(body);
    expect(anonymous.status).toBe(403);
    expect(anonymous.text).toBe('Permission denied');
    const unknown = await request(acl).post(`/v1/internal/node/${owner.id}/allocations`).set('X-Nomad-Token', randomUUID()).send(body);
    expect(unknown.status).toBe(403);
    expect(unknown.text).toBe('ACL token not found');
    // Another node's secret is a known secret, but not this node's.
    if (node.id !== owner.id) {
      const other = await request(acl).post(`/v1/internal/node/${owner.id}/allocations`).set('X-Nomad-Token', node.secret).send(body);
      expect(other.status).toBe(403);
    }
    const bySecret = await request(acl).post(`/v1/internal/node/${owner.id}/allocations`).set('Authorization', `Bearer ${owner.secret}`).send(body);
    expect(bySecret.status).toBe(200);
    const boot = await request(acl).put('/v1/acl/bootstrap').send({});
    expect(boot.status).toBe(200);
    const byManagement = await request(acl).post(`/v1/internal/node/${owner.id}/allocations`).set('X-Nomad-Token', String(boot.body.SecretID)).send({ Allocs: [{ ID: (a as JsonObject)['ID'], ClientStatus: 'complete' }] });
    expect(byManagement.status).toBe(200);
    // The node secret grants nothing else.
    const read = await request(acl).get('/v1/jobs').set('X-Nomad-Token', owner.secret);
    expect(read.status).toBe(403);
  });
});
