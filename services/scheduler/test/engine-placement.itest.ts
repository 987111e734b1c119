// Placement through the API (issue 25 item 2): constraints, bin packing over capacity
// minus running allocations, a blocked evaluation with the anchor's FailedTGAllocs and
// metrics that places as soon as capacity appears, system jobs on every eligible node,
// and 400s for specs the scheduler could never honour.
import request from 'supertest';
import { waitFor } from '@selfstack/testing';
import type { JsonObject } from '../src/shared/common.types';
import { jobAllocs, registerReadyNode, reportAllocs, startHarness, waitForEval, type Harness, type TestNode } from './harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  await h.startEngine();
});

afterAll(async () => {
  await h.close();
});

const task = (cpu: number, mem: number) => ({ Name: 't', Driver: 'docker', Config: { image: 'x' }, Resources: { CPU: cpu, MemoryMB: mem } });

async function register(job: JsonObject) {
  const res = await request(h.app).put('/v1/jobs').send({ Job: job });
  return res;
}

describe('constraints and bin packing', () => {
  let big: TestNode;
  let small: TestNode;
  let windows: TestNode;
  beforeAll(async () => {
    big = await registerReadyNode(h.app, { Datacenter: 'east', Meta: { tier: 'gold' }, NodeResources: { Cpu: { CpuShares: 2000 }, Memory: { MemoryMB: 2048 }, Disk: { DiskMB: 10_000 } } });
    small = await registerReadyNode(h.app, { Datacenter: 'east', Meta: { tier: 'silver' }, NodeResources: { Cpu: { CpuShares: 1000 }, Memory: { MemoryMB: 1024 }, Disk: { DiskMB: 10_000 } } });
    windows = await registerReadyNode(h.app, { Datacenter: 'east', Attributes: { 'kernel.name': 'windows' }, NodeResources: { Cpu: { CpuShares: 8000 }, Memory: { MemoryMB: 8192 }, Disk: { DiskMB: 10_000 } } });
  });

  it('places only where constraints hold and the resources fit', async () => {
    const reg = await register({
      ID: 'packed',
      Datacenters: ['east'],
      Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
      TaskGroups: [{ Name: 'g', Count: 3, EphemeralDisk: { SizeMB: 100 }, Tasks: [task(600, 600)] }],
    });
    expect(reg.status).toBe(200);
    const ev = await waitForEval(h.app, String(reg.body.EvalID));
    expect(ev['FailedTGAllocs']).toBeNull();
    const allocs = await jobAllocs(h.app, 'packed');
    expect(allocs).toHaveLength(3);
    const on = allocs.map((a) => a['NodeID']);
    expect(on).not.toContain(windows.id);
    // big fits 3 x 600 MHz, small 1: two on big at least.
    expect(on.filter((n) => n === big.id).length).toBeGreaterThanOrEqual(2);
  });

  it('blocks what does not fit with the anchor metrics, then places when capacity appears', async () => {
    const reg = await register({
      ID: 'overflow',
      Datacenters: ['east'],
      Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
      TaskGroups: [{ Name: 'g', Count: 2, EphemeralDisk: { SizeMB: 100 }, Tasks: [task(900, 100)] }],
    });
    const ev = await waitForEval(h.app, String(reg.body.EvalID));
    // 'packed' holds 1200 of big's 2000 MHz and 600 of small's 1000: 900 fits on neither.
    const failed = (ev['FailedTGAllocs'] as Record<string, JsonObject>)['g'] as JsonObject;
    expect(failed).toMatchObject({ NodesEvaluated: 3, NodesFiltered: 1, ConstraintFiltered: { '${attr.kernel.name} = linux': 1 }, NodesExhausted: 2, NodesAvailable: { east: 3 }, CoalescedFailures: 1 });
    expect((failed['DimensionExhausted'] as Record<string, number>)['cpu']).toBe(2);
    expect(ev['QueuedAllocations']).toEqual({ g: 2 });
    expect(ev['BlockedEval']).not.toBe('');
    const blocked = await request(h.app).get(`/v1/evaluation/${String(ev['BlockedEval'])}`);
    expect(blocked.body).toMatchObject({ Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: 'created to place remaining allocations', PreviousEval: ev['ID'] });
    const summary = await request(h.app).get('/v1/job/overflow/summary');
    expect(summary.body.Summary.g).toMatchObject({ Queued: 2, Starting: 0 });
    expect(await jobAllocs(h.app, 'overflow')).toHaveLength(0);
    expect((await request(h.app).get('/v1/job/overflow')).body.Status).toBe('pending');

    // Capacity appears: a new node. The blocked evaluation places the rest.
    const extra = await registerReadyNode(h.app, { Datacenter: 'east', NodeResources: { Cpu: { CpuShares: 2000 }, Memory: { MemoryMB: 1024 }, Disk: { DiskMB: 10_000 } } });
    const done = await waitForEval(h.app, String(ev['BlockedEval']));
    expect(done).toMatchObject({ Status: 'complete', FailedTGAllocs: null, QueuedAllocations: { g: 0 } });
    const allocs = await jobAllocs(h.app, 'overflow');
    expect(allocs.map((a) => a['NodeID'])).toEqual([extra.id, extra.id]);
    expect((await request(h.app).get('/v1/job/overflow')).body.Status).toBe('running');
    const after = await request(h.app).get('/v1/job/overflow/summary');
    expect(after.body.Summary.g).toMatchObject({ Queued: 0, Starting: 2 });
  });

  it('unblocks when a running allocation stops and frees its resources', async () => {
    const reg = await register({ ID: 'greedy', Datacenters: ['east'], Constraints: [{ LTarget: '${meta.tier}', RTarget: 'silver', Operand: '=' }], TaskGroups: [{ Name: 'g', Count: 1, Tasks: [task(1000, 100)] }] });
    const ev = await waitForEval(h.app, String(reg.body.EvalID));
    expect(ev['BlockedEval']).not.toBe('');
    // Free the silver node: report its allocations complete.
    const onSmall = (await jobAllocs(h.app, 'packed')).filter((a) => a['NodeID'] === small.id);
    expect(onSmall.length).toBeGreaterThan(0);
    const stop = await request(h.app).delete('/v1/job/packed');
    await waitForEval(h.app, String(stop.body.EvalID));
    expect((await reportAllocs(h.app, small, onSmall.map((a) => ({ ID: a['ID'], ClientStatus: 'complete' })))).status).toBe(200);
    await waitForEval(h.app, String(ev['BlockedEval']));
    const placed = await jobAllocs(h.app, 'greedy');
    expect(placed.map((a) => a['NodeID'])).toEqual([small.id]);
  });
});

describe('system jobs', () => {
  it('place on every eligible node, and on a node that joins later', async () => {
    const reg = await register({ ID: 'agent', Type: 'system', Datacenters: ['sys'], TaskGroups: [{ Name: 'a', Tasks: [task(100, 64)] }] });
    expect(reg.status).toBe(200);
    const n1 = await registerReadyNode(h.app, { Datacenter: 'sys' });
    const n2 = await registerReadyNode(h.app, { Datacenter: 'sys' });
    await registerReadyNode(h.app, { Datacenter: 'sys', SchedulingEligibility: 'ineligible' });
    const allocs = await waitFor('one allocation per eligible node', async () => {
      const a = await jobAllocs(h.app, 'agent');
      return a.length === 2 ? a : undefined;
    });
    expect(allocs.map((a) => a['NodeID']).sort()).toEqual([n1.id, n2.id].sort());
    expect(allocs.every((a) => a['Name'] === 'agent.a[0]')).toBe(true);
    const job = await request(h.app).get('/v1/job/agent');
    expect(job.body.Status).toBe('running');
  });
});

describe('specs the scheduler could never honour are 400s', () => {
  it.each<[string, JsonObject, RegExp]>([
    ['unknown constraint operand', { Constraints: [{ LTarget: '${attr.a}', RTarget: 'x', Operand: 'resembles' }] }, /Constraint 1 validation failed: 1 error occurred:\n\t\* Unknown constraint type "resembles"/],
    ['bad regexp', { Constraints: [{ LTarget: '${attr.a}', RTarget: '(', Operand: 'regexp' }] }, /Regular expression failed to compile/],
    ['negative count', { TaskGroups: [{ Name: 'g', Count: -1, Tasks: [task(100, 64)] }] }, /Task group count can't be negative/],
    ['unknown driver', { TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'dockr' }] }] }, /Unknown driver "dockr"/],
    ['invalid cron', { Type: 'batch', Periodic: { Enabled: true, Spec: '61 * * * *', SpecType: 'cron' } }, /Invalid cron spec "61 \* \* \* \*"/],
    ['invalid time zone', { Type: 'batch', Periodic: { Enabled: true, Spec: '* * * * *', TimeZone: 'Mars/Olympus' } }, /Invalid time zone "Mars\/Olympus"/],
    ['periodic service', { Periodic: { Enabled: true, Spec: '* * * * *' } }, /Periodic can only be used with "batch" or "sysbatch" scheduler/],
    ['bad update', { TaskGroups: [{ Name: 'g', Update: { MinHealthyTime: 60e9, HealthyDeadline: 30e9 }, Tasks: [task(100, 64)] }] }, /Minimum healthy time must be less than healthy deadline/],
  ])('%s', async (_name, over, text) => {
    const res = await register({ ID: 'bad', TaskGroups: [{ Name: 'g', Tasks: [task(100, 64)] }], ...over });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(text);
    expect((await request(h.app).get('/v1/job/bad')).status).toBe(404);
  });
});
