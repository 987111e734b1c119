// The reconciler's decisions as data (issue 25 items 3-4): placements, stops, rolling
// updates with max_parallel and canaries, lost and draining nodes, rescheduling, batch.
import type { Allocation } from '../features/allocations/allocations.types';
import type { JsonObject } from '../shared/common.types';
import type { Deployment } from '../features/deployments/deployments.types';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { Job } from '../features/jobs/jobs.types';
import type { Node } from '../features/nodes/nodes.types';
import { reconcile } from './reconcile';
import { nextRescheduleDelay, rescheduleDecision, tasksUpdated } from './job-rules';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const ev = { ID: 'ev1', Priority: 50 } as Evaluation;

function job(over: JsonObject = {}, group: JsonObject = {}): Job {
  return {
    ID: 'web',
    Name: 'web',
    Namespace: 'default',
    Type: 'service',
    Priority: 50,
    Datacenters: ['dc1'],
    TaskGroups: [{ Name: 'g', Count: 3, Tasks: [{ Name: 't', Driver: 'docker', Config: { image: 'v1' } }], ...group }],
    Stop: false,
    Version: 0,
    CreateIndex: 10,
    JobModifyIndex: 10,
    ...over,
  } as unknown as Job;
}

let seq = 0;
function alloc(j: Job, i: number, over: JsonObject = {}): Allocation {
  return {
    ID: `a${++seq}`,
    Name: `web.g[${i}]`,
    NodeID: 'n1',
    JobID: j.ID,
    Namespace: 'default',
    TaskGroup: 'g',
    Job: j,
    DesiredStatus: 'run',
    ClientStatus: 'running',
    DeploymentID: '',
    DeploymentStatus: null,
    DesiredTransition: {},
    ModifyTime: (NOW - 60_000) * 1e6,
    ...over,
  } as unknown as Allocation;
}

const nodes = new Map<string, Node>([
  ['n1', { ID: 'n1', Status: 'ready', DrainStrategy: null } as unknown as Node],
  ['down', { ID: 'down', Status: 'down', DrainStrategy: null } as unknown as Node],
  ['drain', { ID: 'drain', Status: 'ready', DrainStrategy: { Deadline: 0 } } as unknown as Node],
]);

const run = (j: Job | null, allocs: Allocation[], deployment: Deployment | null = null) =>
  reconcile({ job: j, eval: ev, allocs, deployment, nodes, nowMs: NOW });

describe('reconcile: counts', () => {
  it('places missing names and ignores healthy ones', () => {
    const j = job();
    const r = run(j, [alloc(j, 1)]);
    expect(r.place.map((p) => p.name)).toEqual(['web.g[0]', 'web.g[2]']);
    expect(r.desired['g']).toMatchObject({ Place: 2, Ignore: 1, Stop: 0 });
  });

  it('scales down by stopping the highest indexes', () => {
    const j = job({}, { Count: 1 });
    const allocs = [alloc(j, 0), alloc(j, 1), alloc(j, 2)];
    const r = run(j, allocs);
    expect(r.stop.map((s) => [s.alloc.Name, s.description])).toEqual([
      ['web.g[2]', 'alloc not needed due to job update'],
      ['web.g[1]', 'alloc not needed due to job update'],
    ]);
    expect(r.place).toEqual([]);
  });

  it('stops everything of a stopped or purged job', () => {
    const j = job({ Stop: true });
    expect(run(j, [alloc(j, 0), alloc(j, 1)]).stop).toHaveLength(2);
    expect(run(null, [alloc(j, 0)]).stop.map((s) => s.description)).toEqual(['alloc not needed due to job update']);
  });

  it('replaces allocations of down nodes (lost) and draining nodes (migrate) under their names', () => {
    const j = job({}, { Count: 2 });
    const r = run(j, [alloc(j, 0, { NodeID: 'down' }), alloc(j, 1, { NodeID: 'drain', DesiredTransition: { Migrate: true } })]);
    expect(r.stop.map((s) => [s.alloc.Name, s.description, s.clientStatus])).toEqual([
      ['web.g[0]', 'alloc is lost since its node is down', 'lost'],
      ['web.g[1]', 'alloc is being migrated', undefined],
    ]);
    expect(r.place.map((p) => [p.name, p.previous?.NodeID])).toEqual([
      ['web.g[0]', 'down'],
      ['web.g[1]', 'drain'],
    ]);
  });

  it('migrates what is marked Migrate, and leaves unmarked allocations on a draining node alone', () => {
    const j = job({}, { Count: 1 });
    const r = run(j, [alloc(j, 0, { NodeID: 'drain' })]);
    expect(r.stop).toEqual([]);
    expect(r.place).toEqual([]);
    expect(r.desired['g']).toMatchObject({ Ignore: 1, Migrate: 0 });
    // Marked (a drain, or an allocation stop on any node): moved.
    const stopped = run(j, [alloc(j, 0, { DesiredTransition: { Migrate: true } })]);
    expect(stopped.stop.map((s) => s.description)).toEqual(['alloc is being migrated']);
    expect(stopped.place.map((p) => p.name)).toEqual(['web.g[0]']);
  });

  it('replaces an allocation already stopped as lost with its node once, pointing it at the replacement', () => {
    const j = job({}, { Count: 1 });
    const lost = alloc(j, 0, { NodeID: 'down', DesiredStatus: 'stop', ClientStatus: 'lost', DesiredDescription: 'alloc is lost since its node is down' });
    const r = run(j, [lost]);
    expect(r.place.map((p) => [p.name, p.previous?.ID])).toEqual([['web.g[0]', lost.ID]]);
    expect(r.stop.map((s) => [s.alloc.ID, s.description, s.clientStatus])).toEqual([[lost.ID, 'alloc is lost since its node is down', 'lost']]);
    expect(r.desired['g']).toMatchObject({ Place: 1, Stop: 0 });
    // Once replaced (NextAllocation set), it is history: nothing more to do.
    const again = run(j, [{ ...lost, NextAllocation: 'next' }, alloc(j, 0, { ID: 'next' })]);
    expect(again.place).toEqual([]);
    expect(again.stop).toEqual([]);
  });

  it('keeps finished batch work and replaces an exited service allocation', () => {
    const b = job({ Type: 'batch' }, { Count: 1 });
    expect(run(b, [alloc(b, 0, { ClientStatus: 'complete' })]).place).toEqual([]);
    const s = job({}, { Count: 1 });
    expect(run(s, [alloc(s, 0, { ClientStatus: 'complete' })]).place.map((p) => p.name)).toEqual(['web.g[0]']);
  });
});

describe('reconcile: rescheduling', () => {
  it('reschedules a failed allocation now, later (follow-up evaluation) or never', () => {
    const s = job({}, { Count: 1, ReschedulePolicy: { Delay: 30e9, DelayFunction: 'constant', Unlimited: true } });
    const now = run(s, [alloc(s, 0, { ClientStatus: 'failed', ModifyTime: (NOW - 60_000) * 1e6 })]);
    expect(now.stop.map((x) => x.description)).toEqual(['alloc was rescheduled because it failed']);
    expect(now.place[0]).toMatchObject({ name: 'web.g[0]', reschedule: true });

    const later = run(s, [alloc(s, 0, { ClientStatus: 'failed', ModifyTime: (NOW - 10_000) * 1e6 })]);
    expect(later.place).toEqual([]);
    expect(later.followups).toHaveLength(1);
    expect(later.followups[0]).toMatchObject({ TriggeredBy: 'alloc-failure', Status: 'pending', StatusDescription: 'created for delayed rescheduling', WaitUntil: new Date(NOW + 20_000).toISOString() });
    expect(later.annotate[0]?.['FollowupEvalID']).toBe(later.followups[0]?.ID);

    const b = job({ Type: 'batch' }, { Count: 1, ReschedulePolicy: { Attempts: 1, Interval: 3600e9, Delay: 1e9 } });
    const tracked = { Events: [{ RescheduleTime: (NOW - 60_000) * 1e6, PrevAllocID: 'x', PrevNodeID: 'n1', Delay: 1e9 }] };
    const never = run(b, [alloc(b, 0, { ClientStatus: 'failed', RescheduleTracker: tracked })]);
    expect(never.place).toEqual([]);
    expect(never.followups).toEqual([]);
  });

  it('grows delays exponentially up to the maximum', () => {
    const policy = { Attempts: 0, Interval: 0, Delay: 10, DelayFunction: 'exponential', MaxDelay: 35, Unlimited: true };
    const ev1 = { RescheduleTime: 0, PrevAllocID: '', PrevNodeID: '', Delay: 10 };
    expect(nextRescheduleDelay(policy, [])).toBe(10);
    expect(nextRescheduleDelay(policy, [ev1])).toBe(20);
    expect(nextRescheduleDelay(policy, [ev1, { ...ev1, Delay: 20 }])).toBe(35);
    expect(rescheduleDecision({} as Allocation, null, 0, 0)).toEqual({ kind: 'never' });
  });
});

describe('reconcile: updates and deployments', () => {
  const v0 = job({ Update: { MaxParallel: 1 } });
  const v1 = job({ Update: { MaxParallel: 1 }, Version: 1, JobModifyIndex: 20 }, { Tasks: [{ Name: 't', Driver: 'docker', Config: { image: 'v2' } }] });

  it('tells in-place from destructive changes', () => {
    expect(tasksUpdated(v0, v1, 'g')).toBe(true);
    expect(tasksUpdated(v0, job({ Version: 1 }, { Count: 7 }), 'g')).toBe(false);
  });

  it('creates a deployment for the first version and places everything', () => {
    const r = run(v0, []);
    expect(r.deploymentCreated).toBe(true);
    expect(r.deployment).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running', JobVersion: 0 });
    expect(r.deployment?.TaskGroups['g']).toMatchObject({ DesiredTotal: 3, DesiredCanaries: 0, Promoted: false });
    expect(r.place).toHaveLength(3);
  });

  it('replaces max_parallel old allocations at a time, then waits for health', () => {
    const old = [alloc(v0, 0), alloc(v0, 1), alloc(v0, 2)];
    const first = run(v1, old);
    expect(first.stop.map((s) => [s.alloc.Name, s.description])).toEqual([['web.g[0]', 'alloc is being updated due to job update']]);
    expect(first.place.map((p) => [p.name, p.previous?.ID])).toEqual([['web.g[0]', old[0]?.ID]]);
    expect(first.desired['g']).toMatchObject({ DestructiveUpdate: 1, Ignore: 2 });
    const d = { ...(first.deployment as Deployment), ID: 'd1' };
    // The replacement is placed but not healthy yet: nothing more moves.
    const placed = alloc(v1, 0, { DeploymentID: 'd1' });
    const second = run(v1, [placed, old[1] as Allocation, old[2] as Allocation], d);
    expect(second.stop).toEqual([]);
    expect(second.place).toEqual([]);
    // Healthy: the next one goes.
    const third = run(v1, [{ ...placed, DeploymentStatus: { Healthy: true } } as Allocation, old[1] as Allocation, old[2] as Allocation], d);
    expect(third.stop.map((s) => s.alloc.Name)).toEqual(['web.g[1]']);
  });

  it('marks the deployment successful once every allocation is healthy', () => {
    const healthy = [0, 1, 2].map((i) => alloc(v0, i, { DeploymentID: 'd0', DeploymentStatus: { Healthy: true } }));
    const d = {
      ID: 'd0',
      JobVersion: 0,
      JobCreateIndex: 10,
      Status: 'running',
      TaskGroups: { g: { DesiredTotal: 3, HealthyAllocs: 3, UnhealthyAllocs: 0, PlacedAllocs: 3, DesiredCanaries: 0, Promoted: false } },
    } as unknown as Deployment;
    const r = run(v0, healthy, d);
    expect(r.deploymentUpdates).toEqual([expect.objectContaining({ status: 'successful', description: 'Deployment completed successfully' })]);
  });

  it('places canaries beside the old set and waits for promotion', () => {
    const c0 = job({ Update: { MaxParallel: 1, Canary: 1 } });
    const c1 = job({ Update: { MaxParallel: 1, Canary: 1 }, Version: 1, JobModifyIndex: 20 }, { Tasks: [{ Name: 't', Driver: 'docker', Config: { image: 'v2' } }] });
    const old = [alloc(c0, 0), alloc(c0, 1), alloc(c0, 2)];
    const r = run(c1, old);
    expect(r.stop).toEqual([]);
    expect(r.place).toEqual([expect.objectContaining({ canary: true })]);
    expect(r.deployment).toMatchObject({ StatusDescription: 'Deployment is running but requires manual promotion' });
    expect(r.deployment?.TaskGroups['g']).toMatchObject({ DesiredCanaries: 1 });
    const d = { ...(r.deployment as Deployment), ID: 'd1' };
    const canary = alloc(c1, 0, { DeploymentID: 'd1', DeploymentStatus: { Canary: true, Healthy: true } });
    const waiting = run(c1, [...old, canary], d);
    expect(waiting.stop).toEqual([]);
    expect(waiting.place).toEqual([]);
    const promoted = { ...d, TaskGroups: { g: { ...(d.TaskGroups['g'] as Deployment['TaskGroups'][string]), Promoted: true, HealthyAllocs: 1 } } };
    const rolling = run(c1, [...old, canary], promoted);
    expect(rolling.stop.map((s) => s.description)).toContain('alloc is being updated due to job update');
  });

  it('cancels the deployment of a stopped job', () => {
    const d = { ID: 'd0', JobVersion: 0, JobCreateIndex: 10, Status: 'running', TaskGroups: {} } as unknown as Deployment;
    expect(run(job({ Stop: true }), [], d).deploymentUpdates).toEqual([expect.objectContaining({ status: 'cancelled', description: 'Cancelled because job is stopped' })]);
  });
});
