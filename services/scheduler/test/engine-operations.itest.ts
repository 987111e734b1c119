// Job operations (issue 25 item 5): scale, dispatch, periodic launches on a controlled
// clock (time zone, prohibit_overlap, force), plan with diff, revert, evaluate,
// validate/job and jobs/parse. Real PostgreSQL and Redis.
import request from 'supertest';
import { waitFor } from '@selfstack/testing';
import type { JsonObject } from '../src/shared/common.types';
import type { Engine } from '../src/engine/engine';
import { nextPeriodicLaunch } from '../src/engine/periodic';
import type { Job } from '../src/features/jobs/jobs.types';
import { jobAllocs, registerReadyNode, reportAllocs, startHarness, waitForEval, type Harness, type TestNode } from './harness';

let h: Harness;
let node: TestNode;
let nowMs = Date.now();
const clock = { nowMs: () => nowMs };
let engine: Engine;

beforeAll(async () => {
  h = await startHarness();
  engine = await h.startEngine({ clock, pollMs: 60_000 });
  node = await registerReadyNode(h.app);
});

afterAll(async () => {
  await h.close();
});

const task = { Name: 't', Driver: 'exec', Config: { command: '/bin/true' }, Resources: { CPU: 100, MemoryMB: 64 } };

async function put(path: string, body: JsonObject) {
  return request(h.app).put(path).send(body);
}

describe('scale', () => {
  it('reports the status, changes the count with a job-scaling evaluation and records events', async () => {
    const reg = await put('/v1/jobs', { Job: { ID: 'svc', TaskGroups: [{ Name: 'web', Count: 1, Tasks: [task] }] } });
    await waitForEval(h.app, String(reg.body.EvalID));
    const status = await request(h.app).get('/v1/job/svc/scale');
    expect(status.status).toBe(200);
    expect(status.headers['x-nomad-index']).toBeDefined();
    expect(status.body).toMatchObject({ JobID: 'svc', Namespace: 'default', JobStopped: false, TaskGroups: { web: { Desired: 1, Placed: 1, Running: 0, Events: null } } });

    const scaled = await put('/v1/job/svc/scale', { Count: 3, Target: { Group: 'web' }, Message: 'more traffic', Meta: { by: 'test' } });
    expect(scaled.status).toBe(200);
    const ev = await waitForEval(h.app, String(scaled.body.EvalID));
    expect(ev['TriggeredBy']).toBe('job-scaling');
    expect(await jobAllocs(h.app, 'svc')).toHaveLength(3);
    const job = await request(h.app).get('/v1/job/svc');
    expect(job.body).toMatchObject({ Version: 1 });
    expect(job.body.TaskGroups[0].Count).toBe(3);
    const after = await request(h.app).get('/v1/job/svc/scale');
    expect(after.body.TaskGroups.web).toMatchObject({ Desired: 3, Placed: 3 });
    expect(after.body.TaskGroups.web.Events[0]).toMatchObject({ Count: 3, PreviousCount: 1, Message: 'more traffic', Error: false, Meta: { by: 'test' }, EvalID: scaled.body.EvalID });

    const errorEvent = await put('/v1/job/svc/scale', { Target: { Group: 'web' }, Error: true, Message: 'autoscaler failed' });
    expect(errorEvent.status).toBe(200);
    expect(errorEvent.body.EvalID).toBe('');
    expect((await request(h.app).get('/v1/job/svc')).body.Version).toBe(1);
  });

  it.each<[string, JsonObject, number, string]>([
    ['negative count', { Count: -1, Target: { Group: 'web' } }, 400, "scaling action count can't be negative"],
    ['unknown group', { Count: 2, Target: { Group: 'nope' } }, 400, 'task group "nope" specified for scaling does not exist in job'],
    ['no group', { Count: 2 }, 400, 'missing task group name for scaling action'],
    ['wrong type', { Count: 'two', Target: { Group: 'web' } }, 400, ''],
  ])('rejects %s', async (_n, body, status, text) => {
    const res = await put('/v1/job/svc/scale', body);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    if (text) expect(res.text).toBe(text);
  });

  it('is a 404 for a missing job', async () => {
    expect((await request(h.app).get('/v1/job/ghost/scale')).status).toBe(404);
    expect((await put('/v1/job/ghost/scale', { Count: 1, Target: { Group: 'g' } })).status).toBe(404);
  });
});

describe('dispatch', () => {
  const parameterized = { ID: 'report', Type: 'batch', ParameterizedJob: { Payload: 'optional', MetaRequired: ['customer'], MetaOptional: ['tier'] }, TaskGroups: [{ Name: 'r', Tasks: [task] }] };

  it('registers the parameterized parent without an evaluation and dispatches children', async () => {
    const reg = await put('/v1/jobs', { Job: parameterized });
    expect(reg.status).toBe(200);
    expect(reg.body.EvalID).toBe('');
    const res = await put('/v1/job/report/dispatch', { Meta: { customer: 'acme' }, Payload: Buffer.from('hello').toString('base64') });
    expect(res.status).toBe(200);
    expect(res.body.DispatchedJobID).toMatch(/^report\/dispatch-\d{10}-[0-9a-f]{8}$/);
    expect(res.body.EvalID).not.toBe('');
    expect(res.body.JobCreateIndex).toBe(res.body.Index);
    await waitForEval(h.app, String(res.body.EvalID));
    const list = await request(h.app).get('/v1/jobs?prefix=report/');
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ ID: res.body.DispatchedJobID, ParentID: 'report', ParameterizedJob: false, Type: 'batch', Status: 'running' });
    const child = await h.prisma.schedulerJob.findFirst({ where: { id: res.body.DispatchedJobID } });
    expect(child?.data).toMatchObject({ Dispatched: true, Meta: { customer: 'acme' }, Payload: Buffer.from('hello').toString('base64') });
    const parent = await request(h.app).get('/v1/job/report/summary');
    expect(parent.body.Children).toEqual({ Pending: 0, Running: 1, Dead: 0 });
    // The child's ID holds a slash: read by ID as the Go client sends it (url.PathEscape),
    // and with the slash as is, the job and its sub-resources.
    const childId = String(res.body.DispatchedJobID);
    for (const path of [`/v1/job/${encodeURIComponent(childId)}`, `/v1/job/${childId}`]) {
      const read = await request(h.app).get(path);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ ID: childId, ParentID: 'report', Dispatched: true });
    }
    const summary = await request(h.app).get(`/v1/job/${encodeURIComponent(childId)}/summary`);
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ JobID: childId });
    const childAllocs = await request(h.app).get(`/v1/job/${encodeURIComponent(childId)}/allocations`);
    expect(childAllocs.status).toBe(200);
    expect((childAllocs.body as JsonObject[]).every((a) => a['JobID'] === childId)).toBe(true);
    const versions = await request(h.app).get(`/v1/job/${childId}/versions`);
    expect(versions.status).toBe(200);
    expect((versions.body as { Versions: JsonObject[] }).Versions[0]).toMatchObject({ ID: childId });
  });

  it('checks meta, payload and the job kind with the anchor texts', async () => {
    const cases: Array<[string, JsonObject, number, string]> = [
      ['report', {}, 400, 'Dispatch did not provide required meta keys: [customer]'],
      ['report', { Meta: { customer: 'a', color: 'red' } }, 400, 'Dispatch request included unpermitted metadata keys: [color]'],
      ['report', { Meta: { customer: 'a' }, Payload: Buffer.alloc(17 * 1024).toString('base64') }, 400, 'Payload exceeds maximum size; 17408 > 16384'],
      ['report', { Meta: { customer: 'a' }, Payload: 'not base64!' }, 400, ''],
      ['svc', {}, 400, 'Specified job "svc" is not a parameterized job'],
      ['ghost', {}, 404, 'parameterized job not found'],
    ];
    for (const [id, body, status, text] of cases) {
      const res = await put(`/v1/job/${id}/dispatch`, body);
      expect(res.status).toBe(status);
      if (text) expect(res.text).toBe(text);
    }
  });

  it('returns the earlier child for a repeated idempotency token', async () => {
    const a = await put('/v1/job/report/dispatch', { Meta: { customer: 'b' }, IdempotencyToken: 'once' });
    const b = await put('/v1/job/report/dispatch', { Meta: { customer: 'b' }, IdempotencyToken: 'once' });
    expect(a.status).toBe(200);
    expect(b.body.DispatchedJobID).toBe(a.body.DispatchedJobID);
    expect(b.body.EvalID).toBe('');
  });
});

describe('periodic', () => {
  it('launches on its cron spec in its time zone, honours prohibit_overlap, and force launches', async () => {
    const job = { ID: 'nightly', Type: 'batch', Periodic: { Enabled: true, Spec: '30 9 * * *', SpecType: 'cron', TimeZone: 'America/New_York', ProhibitOverlap: true }, TaskGroups: [{ Name: 'n', Tasks: [task] }] };
    const reg = await put('/v1/jobs', { Job: job });
    expect(reg.status).toBe(200);
    expect(reg.body.EvalID).toBe('');
    const stored = (await request(h.app).get('/v1/job/nightly')).body as Job;
    expect(stored.Status).toBe('running');
    const due = nextPeriodicLaunch(stored, Math.floor(stored.SubmitTime / 1e6)) as number;
    // 09:30 in New York is 13:30 or 14:30 UTC depending on daylight saving time.
    expect([13, 14]).toContain(new Date(due).getUTCHours());
    expect(new Date(due).getUTCMinutes()).toBe(30);

    nowMs = due - 1000;
    await engine.tick();
    expect((await request(h.app).get('/v1/jobs?prefix=nightly/')).body).toHaveLength(0);

    nowMs = due + 500;
    await engine.tick();
    const children = (await request(h.app).get('/v1/jobs?prefix=nightly/')).body as JsonObject[];
    expect(children.map((c) => c['ID'])).toEqual([`nightly/periodic-${due / 1000}`]);
    expect(children[0]).toMatchObject({ ParentID: 'nightly', Periodic: false, Type: 'batch' });

    // The next day the first child is still running: prohibit_overlap skips the launch.
    const child = children[0] as JsonObject;
    const evals = await request(h.app).get(`/v1/evaluations?job=${encodeURIComponent(String(child['ID']))}`);
    await waitForEval(h.app, String(evals.body[0].ID));
    nowMs = due + 24 * 3600 * 1000 + 500;
    await engine.tick();
    expect((await request(h.app).get('/v1/jobs?prefix=nightly/')).body).toHaveLength(1);

    // Force launches whatever the schedule (at the API server's own time).
    const before = Math.floor(Date.now() / 1000);
    const forced = await put('/v1/job/nightly/periodic/force', {});
    expect(forced.status).toBe(200);
    expect(forced.body.EvalID).not.toBe('');
    const after = ((await request(h.app).get('/v1/jobs?prefix=nightly/')).body as JsonObject[]).map((c) => String(c['ID']));
    expect(after).toHaveLength(2);
    const forcedAt = Number((after.find((id) => id !== `nightly/periodic-${due / 1000}`) as string).split('-').pop());
    expect(forcedAt).toBeGreaterThanOrEqual(before);
    expect(forcedAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect((await put('/v1/job/svc/periodic/force', {})).text).toBe("can't force launch non-periodic job");
  });
});

describe('plan', () => {
  it('answers what a register would do, with annotations, diff and JobModifyIndex', async () => {
    const current = await request(h.app).get('/v1/job/svc');
    const spec = { ...current.body, TaskGroups: [{ ...current.body.TaskGroups[0], Count: 5 }] };
    const res = await put('/v1/job/svc/plan', { Job: spec, Diff: true });
    expect(res.status).toBe(200);
    expect(res.body.JobModifyIndex).toBe(current.body.JobModifyIndex);
    // A count change moves the existing allocations to the new version in place.
    expect(res.body.Annotations.DesiredTGUpdates.web).toMatchObject({ Place: 2, InPlaceUpdate: 3, Ignore: 0, Stop: 0, DestructiveUpdate: 0 });
    expect(res.body.FailedTGAllocs).toBeNull();
    expect(res.body.Diff).toMatchObject({ Type: 'Edited', ID: 'svc' });
    expect(res.body.Diff.TaskGroups[0]).toMatchObject({ Type: 'Edited', Name: 'web', Updates: { create: 2, 'in-place update': 3 } });
    expect(res.body.Diff.TaskGroups[0].Fields).toEqual([{ Type: 'Edited', Name: 'Count', Old: '3', New: '5', Annotations: null }]);
    // Nothing was written.
    expect((await request(h.app).get('/v1/job/svc')).body.Version).toBe(1);

    const impossible = await put('/v1/job/huge/plan', { Job: { ID: 'huge', TaskGroups: [{ Name: 'g', Tasks: [{ ...task, Resources: { CPU: 100_000, MemoryMB: 64 } }] }] } });
    expect(impossible.body.FailedTGAllocs.g).toMatchObject({ NodesExhausted: 1, DimensionExhausted: { cpu: 1 } });
    expect(impossible.body.JobModifyIndex).toBe(0);
    const mismatch = await put('/v1/job/other/plan', { Job: { ID: 'huge', TaskGroups: [{ Name: 'g', Tasks: [task] }] } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toBe('Job ID does not match name');
  });
});

describe('revert and evaluate', () => {
  it('reverts to an earlier version as a new version', async () => {
    const res = await put('/v1/job/svc/revert', { JobID: 'svc', JobVersion: 0 });
    expect(res.status).toBe(200);
    await waitForEval(h.app, String(res.body.EvalID));
    const job = await request(h.app).get('/v1/job/svc');
    expect(job.body).toMatchObject({ Version: 2 });
    expect(job.body.TaskGroups[0].Count).toBe(1);
    await waitFor('scaled back to one', async () => {
      const live = (await jobAllocs(h.app, 'svc')).filter((a) => a['DesiredStatus'] === 'run');
      return live.length === 1 ? true : undefined;
    });
    expect((await put('/v1/job/svc/revert', { JobVersion: 2 })).text).toBe("can't revert to current version");
    expect((await put('/v1/job/svc/revert', { JobVersion: 9 })).text).toBe('job "svc" in namespace "default" at version 9 not found');
    expect((await put('/v1/job/svc/revert', { JobVersion: 0, EnforcePriorVersion: 1 })).text).toBe('Current job has version 2; enforcing version 1');
    expect((await put('/v1/job/svc/revert', {})).status).toBe(400);
  });

  it('evaluates again, rescheduling failed allocations on ForceReschedule', async () => {
    const reg = await put('/v1/jobs', { Job: { ID: 'flaky', TaskGroups: [{ Name: 'g', ReschedulePolicy: { Attempts: 0, Unlimited: false }, Tasks: [task] }] } });
    await waitForEval(h.app, String(reg.body.EvalID));
    const [a] = await jobAllocs(h.app, 'flaky');
    const failed = await reportAllocs(h.app, node, [{ ID: (a as JsonObject)['ID'], ClientStatus: 'failed' }]);
    expect(failed.status).toBe(200);
    // No reschedule attempts left: the failure stays.
    await waitFor('alloc-failure evaluation done', async () => {
      const evs = (await request(h.app).get('/v1/job/flaky/evaluations')).body as JsonObject[];
      return evs.some((e) => e['TriggeredBy'] === 'alloc-failure' && e['Status'] === 'complete') ? true : undefined;
    });
    expect(await jobAllocs(h.app, 'flaky')).toHaveLength(1);
    const res = await put('/v1/job/flaky/evaluate', { EvalOptions: { ForceReschedule: true } });
    expect(res.status).toBe(200);
    await waitForEval(h.app, String(res.body.EvalID));
    const allocs = await jobAllocs(h.app, 'flaky');
    expect(allocs).toHaveLength(2);
    const next = allocs.find((x) => x['ID'] !== (a as JsonObject)['ID']) as JsonObject;
    expect(next['RescheduleTracker']).toMatchObject({ Events: [expect.objectContaining({ PrevAllocID: (a as JsonObject)['ID'] })] });
    expect((await put('/v1/job/nightly/evaluate', {})).text).toBe("can't evaluate periodic job");
  });
});

describe('validate and parse', () => {
  it('validates without registering', async () => {
    const ok = await put('/v1/validate/job', { Job: { ID: 'v', TaskGroups: [{ Name: 'g', Tasks: [task] }] } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ DriverConfigValidated: false, ValidationErrors: [], Error: '', Warnings: '' });
    const bad = await put('/v1/validate/job', { Job: { ID: 'v', Priority: 500, TaskGroups: [{ Name: 'g', Count: -2, Tasks: [task] }] } });
    expect(bad.status).toBe(200);
    expect(bad.body.ValidationErrors[0]).toBe('Job priority must be between [1, 100]');
    expect(bad.body.Error).toMatch(/^2 errors occurred:/);
    expect((await request(h.app).get('/v1/job/v')).status).toBe(404);
  });

  it('parses an HCL2 job file with variables into the API job', async () => {
    const hcl = `
variable "image" {
  default = "redis:7"
}
job "cache" {
  datacenters = ["dc1"]
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    canary           = 1
  }
  group "cache" {
    count = 2
    network {
      port "db" { to = 6379 }
    }
    task "redis" {
      driver = "docker"
      config {
        image = var.image
        ports = ["db"]
      }
      env { MODE = "primary" }
      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}`;
    const res = await request(h.app).post('/v1/jobs/parse').send({ JobHCL: hcl, Canonicalize: true, Variables: 'image = "redis:7.2"' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ID: 'cache',
      Name: 'cache',
      Type: 'service',
      Priority: 50,
      Datacenters: ['dc1'],
      Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
      Update: { MaxParallel: 1, MinHealthyTime: 10e9, Canary: 1 },
    });
    const g = res.body.TaskGroups[0];
    expect(g).toMatchObject({ Name: 'cache', Count: 2, Networks: [{ DynamicPorts: [{ Label: 'db', To: 6379 }] }] });
    expect(g.Tasks[0]).toMatchObject({ Name: 'redis', Driver: 'docker', Config: { image: 'redis:7.2', ports: ['db'] }, Env: { MODE: 'primary' }, Resources: { CPU: 500, MemoryMB: 256 } });
    // The parsed job registers as it is.
    expect((await put('/v1/jobs', { Job: res.body })).status).toBe(200);

    const bad = await request(h.app).post('/v1/jobs/parse').send({ JobHCL: 'job "x" {' });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/^Failed to parse job: /);
    expect((await request(h.app).post('/v1/jobs/parse').send({})).status).toBe(400);
    // 2,000 nested blocks (issue 29): HashiCorp's parser would overflow its stack; refused
    // first with a message that says why.
    const deep = `job "x" {\n group "g" {\n task "t" {\n driver = "mock"\n config ${'{ a '.repeat(2000)}{}${' }'.repeat(2000)}\n }\n }\n}\n`;
    const tooDeep = await request(h.app).post('/v1/jobs/parse').send({ JobHCL: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.text).toBe('Failed to parse job: input.hcl: blocks and values nested deeper than 128 levels');
  });
});
