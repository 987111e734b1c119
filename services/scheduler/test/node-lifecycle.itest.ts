// Node lifecycle (issue 26 item 2; docs/scheduler.md "Nodes and heartbeats"): heartbeats
// with a server-chosen TTL, the sweeper that marks silent nodes down (their allocations
// lost and replaced by the engine on another node), a node coming back by heartbeat, who
// may heartbeat, re-register or report for a node, drains (deadline parsing, migration,
// the deadline, completion), purge and the node events. Real PostgreSQL and Redis, the
// engine running; the node service and the sweeper run on a controlled clock and the sweeper
// is driven by hand (sweepNow), except in the test of its own timer.
import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { createLogger } from '@selfstack/logger';
import { waitFor } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { composeScheduler, type SchedulerAppDeps } from '../src/compose';
import { createAllocationStore } from '../src/features/allocations/allocations.store';
import { createJobStore } from '../src/features/jobs/jobs.store';
import { createNodeLifecycle, type NodeLifecycle } from '../src/features/nodes/node-lifecycle';
import { createNodeStore } from '../src/features/nodes/nodes.store';
import type { HeartbeatSettings } from '../src/features/nodes/nodes.service';
import type { JsonObject } from '../src/shared/common.types';
import { BASE_CONFIG, expectPlain, registerReadyNode, reportAllocs, startHarness, type Harness, type TestNode } from './harness';

const HB: HeartbeatSettings = { minTtlMs: 10_000, maxPerSecond: 50, graceMs: 5_000 };
const logger = createLogger({ service: 'scheduler-test', silent: true });

let h: Harness;
let now = Date.now();
const clock = { nowMs: () => now };
let deps: SchedulerAppDeps;
let app: Express;
let sweeper: NodeLifecycle;

function lifecycle(d: SchedulerAppDeps, options: { failoverMs?: number; intervalMs?: number; start?: boolean } = {}): NodeLifecycle {
  return createNodeLifecycle(
    {
      db: h.prisma,
      nodes: d.services.nodes,
      nodeStore: createNodeStore(),
      allocStore: createAllocationStore(),
      jobStore: createJobStore(),
      clock,
      logger,
      intervalMs: options.intervalMs ?? 60_000,
      failoverMs: options.failoverMs ?? 0,
    },
    { start: options.start ?? false },
  );
}

beforeAll(async () => {
  h = await startHarness();
  deps = composeScheduler({ prisma: h.prisma, state: h.state, logger, readPool: h.readPool }, { ...BASE_CONFIG, heartbeat: HB }, { clock });
  app = buildApp(deps);
  sweeper = lifecycle(deps);
  await h.startEngine();
});

afterAll(async () => {
  await sweeper.stop();
  await h.close();
});

const advance = (ms: number) => {
  now += ms;
};

function heartbeat(node: TestNode, body: JsonObject = {}, token = node.secret) {
  return request(app).put(`/v1/internal/node/${node.id}/heartbeat`).set('X-Nomad-Token', token).send(body);
}

async function node(id: string): Promise<JsonObject> {
  const r = await request(app).get(`/v1/node/${id}`);
  expect(r.status).toBe(200);
  return r.body as JsonObject;
}

const messages = (n: JsonObject) => (n['Events'] as JsonObject[]).map((e) => e['Message']);
const lastEvent = (n: JsonObject) => (n['Events'] as JsonObject[]).at(-1) as JsonObject;

async function allocsOf(jobId: string): Promise<JsonObject[]> {
  const r = await request(app).get(`/v1/job/${jobId}/allocations`);
  expect(r.status).toBe(200);
  return r.body as JsonObject[];
}

/** Registers a service job and waits until `count` allocations are placed. */
async function runJob(jobId: string, count: number, extra: JsonObject = {}): Promise<JsonObject[]> {
  const reg = await request(app)
    .put('/v1/jobs')
    .send({
      Job: {
        ID: jobId,
        Datacenters: ['dc1'],
        TaskGroups: [{ Name: 'web', Count: count, Tasks: [{ Name: 'srv', Driver: 'docker', Config: { image: 'nginx' }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
        ...extra,
      },
    });
  expect(reg.status).toBe(200);
  return waitFor(`${jobId} placed`, async () => {
    const allocs = await allocsOf(jobId);
    return allocs.filter((a) => a['DesiredStatus'] === 'run').length === count ? allocs : undefined;
  });
}

async function markRunning(n: TestNode, allocs: JsonObject[]): Promise<void> {
  const mine = allocs.filter((a) => a['NodeID'] === n.id);
  if (mine.length === 0) return;
  const r = await reportAllocs(app, n, mine.map((a) => ({ ID: a['ID'], ClientStatus: 'running' })));
  expect(r.status).toBe(200);
}

async function eligibility(id: string, value: 'eligible' | 'ineligible') {
  const r = await request(app).put(`/v1/node/${id}/eligibility`).send({ Eligibility: value });
  expect(r.status).toBe(200);
}

describe('heartbeats', () => {
  it('registration and heartbeats answer the TTL (ns), and a heartbeating node stays ready', async () => {
    const id = randomUUID();
    const reg = await request(app)
      .put('/v1/internal/node/register')
      .send({ Node: { ID: id, SecretID: randomUUID(), Name: 'hb', Datacenter: 'dc1', Status: 'ready' } });
    expect(reg.status).toBe(200);
    expect(reg.body).toMatchObject({ HeartbeatTTL: 10_000_000_000, NodeModifyIndex: reg.body.Index, EvalIDs: expect.any(Array) });
    expect(reg.headers['x-nomad-index']).toBe(String(reg.body.Index));
    const secret = (await h.prisma.schedulerNode.findUnique({ where: { id } }))?.secretHash;
    expect(secret).toBeDefined();

    const n = await registerReadyNode(app);
    const before = await node(n.id);
    for (let i = 0; i < 4; i++) {
      advance(12_000); // past the TTL, within TTL + grace
      const hb = await heartbeat(n);
      expect(hb.status).toBe(200);
      expect(hb.headers['content-type']).toMatch(/^application\/json/);
      expect(hb.body).toMatchObject({ HeartbeatTTL: 10_000_000_000, EvalIDs: [], EvalCreateIndex: 0, NodeModifyIndex: before['ModifyIndex'] });
      expect(hb.headers['x-nomad-index']).toBe(String(hb.body.Index));
      const swept = await sweeper.sweepNow();
      expect(swept.down).not.toContain(n.id);
    }
    // A heartbeat that changes nothing is no state change: same node, same index.
    const after = await node(n.id);
    expect(after).toMatchObject({ Status: 'ready', ModifyIndex: before['ModifyIndex'] });
    // The silent first node went down long ago.
    expect((await node(id))['Status']).toBe('down');
  });

  it('a missed heartbeat takes the node down; a heartbeat brings it back ready', async () => {
    const n = await registerReadyNode(app);
    advance(14_000);
    expect((await sweeper.sweepNow()).down).not.toContain(n.id);
    advance(2_000); // 16 s: TTL 10 s + grace 5 s passed
    const swept = await sweeper.sweepNow();
    expect(swept.down).toContain(n.id);
    const down = await node(n.id);
    expect(down['Status']).toBe('down');
    expect(lastEvent(down)).toMatchObject({ Message: 'Node heartbeat missed', Subsystem: 'Cluster', Details: null, CreateIndex: down['ModifyIndex'] });
    expect(down['StatusUpdatedAt']).toBe(Math.floor(now / 1000));
    // A second sweep (another replica) finds nothing more to do.
    expect((await sweeper.sweepNow()).down).not.toContain(n.id);

    const events = await h.state.eventsAfter(0);
    expect(events.find((e) => e.key === n.id && e.type === 'NodeEvent')).toMatchObject({ topic: 'Node', namespace: '', filterKeys: null });

    const back = await heartbeat(n);
    expect(back.status).toBe(200);
    expect(back.body.NodeModifyIndex).toBeGreaterThan(Number(down['ModifyIndex']));
    const ready = await node(n.id);
    expect(ready).toMatchObject({ Status: 'ready', ModifyIndex: back.body.NodeModifyIndex });
    expect(lastEvent(ready)).toMatchObject({ Message: 'Node reregistered by heartbeat', Subsystem: 'Cluster' });
  });

  it('an initializing node heartbeats itself ready; a bad status is a 400', async () => {
    const n = await registerReadyNode(app, { Status: 'initializing' });
    const init = await heartbeat(n, { Status: 'initializing' });
    expect(init.status).toBe(200);
    expect((await node(n.id))['Status']).toBe('initializing');
    const ready = await heartbeat(n, { Status: 'ready' });
    expect(ready.status).toBe(200);
    expect((await node(n.id))['Status']).toBe('ready');
    expectPlain(await heartbeat(n, { Status: 'down' }), 400, 'invalid status for node heartbeat: "down" (expected "ready" or "initializing")');
    const notString = await heartbeat(n, { Status: 7 });
    expect(notString.status).toBe(400);
    expect(notString.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('keeps heartbeat state in the database: a restarted server waits out the failover window, then sweeps', async () => {
    const n = await registerReadyNode(app);
    advance(20_000);
    // A "restarted" server: new services over the same database, its sweeper just started.
    const restarted = composeScheduler({ prisma: h.prisma, state: h.state, logger, readPool: h.readPool }, { ...BASE_CONFIG, heartbeat: HB }, { clock });
    const fresh = lifecycle(restarted, { failoverMs: 30_000 });
    expect((await fresh.sweepNow()).down).not.toContain(n.id);
    expect((await node(n.id))['Status']).toBe('ready');
    // The agent reaches the new server in time: its heartbeat counts.
    expect((await request(buildApp(restarted)).put(`/v1/internal/node/${n.id}/heartbeat`).set('X-Nomad-Token', n.secret).send({})).status).toBe(200);
    advance(31_000);
    // Past the window and past the TTL of that heartbeat: down.
    expect((await fresh.sweepNow()).down).toContain(n.id);
    await fresh.stop();
  });

  it('the sweeper runs on its own timer', async () => {
    const quick = composeScheduler({ prisma: h.prisma, state: h.state, logger, readPool: h.readPool }, { ...BASE_CONFIG, heartbeat: { minTtlMs: 100, maxPerSecond: 50, graceMs: 100 } });
    const quickApp = buildApp(quick);
    const timed = createNodeLifecycle(
      { db: h.prisma, nodes: quick.services.nodes, nodeStore: createNodeStore(), allocStore: createAllocationStore(), jobStore: createJobStore(), clock: { nowMs: () => Date.now() }, logger, intervalMs: 50, failoverMs: 0 },
      { start: true },
    );
    try {
      const n = await registerReadyNode(quickApp);
      await waitFor('the silent node down', async () => ((await request(quickApp).get(`/v1/node/${n.id}`)).body.Status === 'down' ? true : undefined));
    } finally {
      await timed.stop();
    }
  });
});

describe('a node that goes down loses its allocations, and the engine replaces them elsewhere', () => {
  it('marks them lost, evaluates the job and places replacements on another ready node', async () => {
    // The job fits only nodes of the lost-* classes: a first, then b.
    const a = await registerReadyNode(app, { NodeClass: 'lost-a' });
    const allocs = await runJob('lost-job', 2, { Constraints: [{ LTarget: '${node.class}', RTarget: '^lost-', Operand: 'regexp' }] });
    expect(allocs.every((x) => x['NodeID'] === a.id)).toBe(true);
    await markRunning(a, allocs);
    const b = await registerReadyNode(app, { NodeClass: 'lost-b' });
    const live = allocs;

    advance(16_000);
    expect((await heartbeat(b)).status).toBe(200);
    const swept = await sweeper.sweepNow();
    expect(swept.down).toContain(a.id);
    expect(swept.down).not.toContain(b.id);

    const lost = (await allocsOf('lost-job')).filter((x) => live.some((l) => l['ID'] === x['ID']));
    for (const x of lost) {
      expect(x).toMatchObject({ ClientStatus: 'lost', DesiredStatus: 'stop', DesiredDescription: 'alloc is lost since its node is down' });
    }
    const evals = (await request(app).get('/v1/job/lost-job/evaluations')).body as JsonObject[];
    expect(evals.find((e) => e['TriggeredBy'] === 'node-update' && e['NodeID'] === a.id)).toBeDefined();

    const replaced = await waitFor('replacements placed on b', async () => {
      const all = await allocsOf('lost-job');
      const fresh = all.filter((x) => x['DesiredStatus'] === 'run' && x['NodeID'] === b.id);
      return fresh.length === 2 ? all : undefined;
    });
    const fresh = replaced.filter((x) => x['DesiredStatus'] === 'run');
    const full = await Promise.all(fresh.map(async (x) => (await request(app).get(`/v1/allocation/${String(x['ID'])}`)).body as JsonObject));
    expect(full.map((x) => x['PreviousAllocation']).sort()).toEqual(live.map((x) => x['ID']).sort());
    expect(fresh.map((x) => x['Name']).sort()).toEqual(['lost-job.web[0]', 'lost-job.web[1]']);
    for (const old of replaced.filter((x) => live.some((l) => l['ID'] === x['ID']))) {
      expect(fresh.map((x) => x['ID'])).toContain(old['NextAllocation']);
      expect(old['ClientStatus']).toBe('lost');
    }
    const summary = await request(app).get('/v1/job/lost-job/summary');
    expect(summary.body.Summary.web).toMatchObject({ Lost: 2 });

    // The node comes back: its old allocations stay lost (stopped), nothing is placed twice.
    expect((await heartbeat(a)).status).toBe(200);
    expect((await node(a.id))['Status']).toBe('ready');
    await waitFor('node-update evaluations settled', async () => {
      const evs = (await request(app).get('/v1/job/lost-job/evaluations')).body as JsonObject[];
      return evs.every((e) => e['Status'] !== 'pending') ? true : undefined;
    });
    expect((await allocsOf('lost-job')).filter((x) => x['DesiredStatus'] === 'run')).toHaveLength(2);
    await request(app).delete('/v1/job/lost-job').expect(200);
  });
});

describe('blocking readers see a node go down', () => {
  it("a blocking read of the node's allocations is released by the sweep that loses them", async () => {
    const n = await registerReadyNode(app, { NodeClass: 'block-a' });
    const allocs = await runJob('blocked-read', 1, { Constraints: [{ LTarget: '${node.class}', RTarget: '^block-', Operand: 'regexp' }] });
    await markRunning(n, allocs);
    // Other silent nodes of this file go down first, so the sweep below writes only n's loss.
    advance(16_000);
    expect((await heartbeat(n)).status).toBe(200);
    expect((await sweeper.sweepNow()).down).not.toContain(n.id);
    const first = await request(app).get(`/v1/node/${n.id}/allocations`);
    expect(first.status).toBe(200);
    const index = Number(first.headers['x-nomad-index']);
    const held = request(app).get(`/v1/node/${n.id}/allocations?index=${index}&wait=30s`).then((r) => r);
    // Give the read time to be held (it returns at the write, or at its 30 s wait).
    await new Promise((r) => setTimeout(r, 200));
    advance(16_000);
    expect((await sweeper.sweepNow()).down).toEqual([n.id]);
    const released = await held;
    expect(released.status).toBe(200);
    expect(Number(released.headers['x-nomad-index'])).toBeGreaterThan(index);
    expect((released.body as JsonObject[]).map((a) => a['ClientStatus'])).toEqual(['lost']);
    await request(app).delete('/v1/job/blocked-read').expect(200);
  });
});

describe('who may write for a node', () => {
  let a: TestNode;
  let b: TestNode;
  beforeAll(async () => {
    a = await registerReadyNode(app);
    b = await registerReadyNode(app);
  });

  it('a heartbeat needs the node own secret', async () => {
    expectPlain(await request(app).put(`/v1/internal/node/${a.id}/heartbeat`).send({}), 403, 'Permission denied');
    expectPlain(await heartbeat(a, {}, b.secret), 403, 'Permission denied');
    expectPlain(await heartbeat(a, {}, 'not-a-secret'), 403, 'Permission denied');
    expectPlain(await heartbeat({ id: randomUUID(), secret: a.secret }), 404, 'node not found');
  });

  it('re-registering an existing node needs its SecretID; the node is left as it was', async () => {
    const before = await node(a.id);
    const res = await request(app).put('/v1/internal/node/register').send({ Node: { ID: a.id, SecretID: randomUUID(), Name: 'hijacked', Datacenter: 'dc1', Status: 'ready' } });
    expectPlain(res, 403, 'Permission denied');
    const after = await node(a.id);
    expect(after).toEqual(before);
    // The node itself may: its own SecretID re-registers it (an agent after a restart).
    const own = await request(app).put('/v1/internal/node/register').send({ Node: { ID: a.id, SecretID: a.secret, Name: 'renamed', Datacenter: 'dc1', Status: 'ready' } });
    expect(own.status).toBe(200);
    expect(own.body.HeartbeatTTL).toBe(10_000_000_000);
    const renamed = await node(a.id);
    expect(renamed).toMatchObject({ Name: 'renamed', Status: 'ready', CreateIndex: before['CreateIndex'] });
    expect(lastEvent(renamed)).toMatchObject({ Message: 'Node re-registered', Subsystem: 'Cluster' });
    // With ACLs on, the node (no token, its SecretID in the body) hears what is wrong with its
    // body; a stranger only that it may not.
    const aclApp = buildApp(composeScheduler({ prisma: h.prisma, state: h.state, logger, readPool: h.readPool }, { ...BASE_CONFIG, aclEnabled: true, heartbeat: HB }, { clock }));
    const send = (secret: string, extra: JsonObject) => request(aclApp).put('/v1/internal/node/register').send({ Node: { ID: a.id, SecretID: secret, ...extra } });
    expectPlain(await send(a.secret, { Status: 'asleep' }), 400, 'invalid status for node: "asleep"');
    expectPlain(await send(randomUUID(), { Status: 'asleep' }), 403, 'Permission denied');
    expectPlain(await send(randomUUID(), { Status: 'ready' }), 403, 'Permission denied');
    expect((await send(a.secret, { Name: 'renamed', Status: 'ready' })).status).toBe(200);
  });

  it('allocation reports need the node own secret', async () => {
    const allocs = await runJob('owned', 1, { Constraints: [{ LTarget: '${node.unique.id}', RTarget: a.id, Operand: '=' }] });
    expect(allocs[0]?.['NodeID']).toBe(a.id);
    const report = [{ ID: allocs[0]?.['ID'], ClientStatus: 'running' }];
    expectPlain(await reportAllocs(app, { id: a.id, secret: b.secret }, report), 403, 'Permission denied');
    expectPlain(await request(app).post(`/v1/internal/node/${a.id}/allocations`).send({ Allocs: report }), 403, 'Permission denied');
    expect((await reportAllocs(app, a, report)).status).toBe(200);
    await request(app).delete('/v1/job/owned').expect(200);
  });
});

describe('drain', () => {
  it('refuses a deadline that is not an integer duration in nanoseconds', async () => {
    const n = await registerReadyNode(app);
    const msg = (v: string) => `invalid DrainSpec.Deadline ${v}: expected a duration in integer nanoseconds (-1 forces the drain, 0 sets no deadline)`;
    expectPlain(await request(app).put(`/v1/node/${n.id}/drain`).send({ DrainSpec: { Deadline: '1h' } }), 400, msg('"1h"'));
    expectPlain(await request(app).post(`/v1/node/${n.id}/drain`).send({ DrainSpec: { Deadline: 1.5 } }), 400, msg('1.5'));
    expectPlain(await request(app).post(`/v1/node/${n.id}/drain`).send({ DrainSpec: { Deadline: true } }), 400, msg('true'));
    // Nothing was written.
    expect(await node(n.id)).toMatchObject({ Drain: false, DrainStrategy: null, SchedulingEligibility: 'eligible' });
    // -1 forces; 0 is no deadline.
    const forced = await request(app).put(`/v1/node/${n.id}/drain`).send({ DrainSpec: { Deadline: -1 } });
    expect(forced.status).toBe(200);
    expect((await node(n.id))['DrainStrategy']).toMatchObject({ DrainSpec: { Deadline: -1, IgnoreSystemJobs: false }, ForceDeadline: '0001-01-01T00:00:00Z' });
    await request(app).put(`/v1/node/${n.id}/drain`).send({ DrainSpec: null, MarkEligible: true }).expect(200);
    await eligibility(n.id, 'ineligible');
  });

  it('moves service allocations off one at a time (migrate max_parallel 1) and completes when none is left', async () => {
    const src = await registerReadyNode(app, { NodeClass: 'drain-src' });
    const allocs = await runJob('drained', 2, { Constraints: [{ LTarget: '${node.class}', RTarget: '^drain-', Operand: 'regexp' }] });
    expect(allocs.every((x) => x['NodeID'] === src.id)).toBe(true);
    await markRunning(src, allocs);
    const dst = await registerReadyNode(app, { NodeClass: 'drain-dst' });
    const onSrc = (all: JsonObject[]) => all.filter((x) => allocs.some((o) => o['ID'] === x['ID']));
    const res = await request(app).put(`/v1/node/${src.id}/drain`).send({ DrainSpec: { Deadline: 3_600_000_000_000 }, Meta: { message: 'maintenance' } });
    expect(res.status).toBe(200);
    expect(res.body.EvalIDs.length).toBeGreaterThan(0);
    expect(res.body.EvalCreateIndex).toBe(res.body.Index);
    const draining = await node(src.id);
    expect(draining).toMatchObject({ Drain: true, SchedulingEligibility: 'ineligible', LastDrain: { Status: 'draining', Meta: { message: 'maintenance' } } });
    expect(lastEvent(draining)).toMatchObject({ Message: 'Node drain strategy set', Subsystem: 'Drain' });
    for (const ev of res.body.EvalIDs as string[]) {
      const e = (await request(app).get(`/v1/evaluation/${ev}`)).body as JsonObject;
      expect(e).toMatchObject({ TriggeredBy: 'node-drain', NodeID: src.id });
    }
    // The group keeps Count - max_parallel = 1 running: one is marked, the other waits.
    const first = onSrc(await allocsOf('drained')).filter((x) => asMigrate(x) === true);
    expect(first).toHaveLength(1);
    const firstReplacement = await waitFor('the first moved', async () => {
      const all = await allocsOf('drained');
      const moved = all.find((x) => x['ID'] === first[0]?.['ID']);
      const placed = all.filter((x) => x['DesiredStatus'] === 'run' && x['NodeID'] === dst.id);
      return moved?.['DesiredStatus'] === 'stop' && moved['DesiredDescription'] === 'alloc is being migrated' && placed.length === 1 ? placed : undefined;
    });
    // Its replacement is not running yet: the drainer's sweep moves nothing more.
    const waiting = await sweeper.sweepNow();
    expect(waiting.advanced).not.toContain(src.id);
    expect(waiting.drained).not.toContain(src.id);
    expect(onSrc(await allocsOf('drained')).filter((x) => asMigrate(x) === true)).toHaveLength(1);
    // It runs: the next sweep moves the second, with a node-drain evaluation of the job.
    await markRunning(dst, firstReplacement);
    const step = await sweeper.sweepNow();
    expect(step.advanced).toEqual([src.id]);
    expect(onSrc(await allocsOf('drained')).every((x) => asMigrate(x) === true)).toBe(true);
    const evals = (await request(app).get('/v1/job/drained/evaluations')).body as JsonObject[];
    expect(evals.filter((e) => e['TriggeredBy'] === 'node-drain' && e['NodeID'] === src.id).length).toBeGreaterThanOrEqual(2);
    // Not complete while the allocations are still wanted there.
    await waitFor('migrated', async () => {
      const all = await allocsOf('drained');
      const live = all.filter((x) => x['DesiredStatus'] === 'run');
      return onSrc(all).every((x) => x['DesiredStatus'] === 'stop' && x['DesiredDescription'] === 'alloc is being migrated') && live.length === 2 && live.every((x) => x['NodeID'] === dst.id) ? true : undefined;
    });
    const swept = await sweeper.sweepNow();
    expect(swept.drained).toContain(src.id);
    const done = await node(src.id);
    expect(done).toMatchObject({ Drain: false, DrainStrategy: null, SchedulingEligibility: 'ineligible', LastDrain: { Status: 'complete' } });
    expect(lastEvent(done)).toMatchObject({ Message: 'Node drain complete', Subsystem: 'Drain', Details: null });
    const events = await h.state.eventsAfter(0);
    expect(events.filter((e) => e.key === src.id && e.type === 'NodeDrain').length).toBeGreaterThanOrEqual(2);
    await request(app).delete('/v1/job/drained').expect(200);
    await eligibility(src.id, 'ineligible');
    await eligibility(dst.id, 'ineligible');
  });

  it("moves as many at once as the group's migrate block allows", async () => {
    const src = await registerReadyNode(app, { NodeClass: 'wide-src' });
    const allocs = await runJob('wide', 3, { Constraints: [{ LTarget: '${node.class}', RTarget: '^wide-', Operand: 'regexp' }], TaskGroups: [{ Name: 'web', Count: 3, Migrate: { MaxParallel: 2 }, Tasks: [{ Name: 'srv', Driver: 'docker', Config: { image: 'nginx' }, Resources: { CPU: 100, MemoryMB: 64 } }] }] });
    await markRunning(src, allocs);
    const dst = await registerReadyNode(app, { NodeClass: 'wide-dst' });
    await request(app).put(`/v1/node/${src.id}/drain`).send({ DrainSpec: { Deadline: 0 } }).expect(200);
    expect((await allocsOf('wide')).filter((x) => asMigrate(x) === true)).toHaveLength(2);
    // A forced drain moves the rest at once.
    await request(app).put(`/v1/node/${src.id}/drain`).send({ DrainSpec: { Deadline: -1 } }).expect(200);
    expect((await allocsOf('wide')).filter((x) => x['NodeID'] === src.id && asMigrate(x) === true)).toHaveLength(3);
    await request(app).delete('/v1/job/wide').expect(200);
    await request(app).put(`/v1/node/${src.id}/drain`).send({ DrainSpec: null }).expect(200);
    await eligibility(src.id, 'ineligible');
    await eligibility(dst.id, 'ineligible');
  });

  it('leaves batch work until the deadline, then moves it', async () => {
    const src = await registerReadyNode(app, { NodeClass: 'batch-src' });
    const reg = await request(app)
      .put('/v1/jobs')
      .send({
        Job: {
          ID: 'batchy',
          Type: 'batch',
          Datacenters: ['dc1'],
          TaskGroups: [{ Name: 'work', Count: 1, Tasks: [{ Name: 't', Driver: 'docker', Config: { image: 'busybox' }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
          Constraints: [{ LTarget: '${node.class}', RTarget: 'batch', Operand: 'regexp' }],
        },
      });
    expect(reg.status).toBe(200);
    const [alloc] = await waitFor('batch placed', async () => {
      const all = await allocsOf('batchy');
      return all.length === 1 ? all : undefined;
    });
    expect(alloc?.['NodeID']).toBe(src.id);
    await markRunning(src, [alloc as JsonObject]);
    const dst = await registerReadyNode(app, { NodeClass: 'batch-dst' });
    await request(app).put(`/v1/node/${src.id}/drain`).send({ DrainSpec: { Deadline: 60_000_000_000 } }).expect(200);
    const still = (await allocsOf('batchy'))[0] as JsonObject;
    expect(still).toMatchObject({ DesiredStatus: 'run' });
    expect(asMigrate(still)).not.toBe(true);
    advance(12_000);
    expect((await heartbeat(src)).status).toBe(200);
    expect((await heartbeat(dst)).status).toBe(200);
    const early = await sweeper.sweepNow();
    expect(early.enforced).not.toContain(src.id);
    expect(early.drained).not.toContain(src.id);
    advance(49_000); // 61 s: past the 60 s deadline
    expect((await heartbeat(src)).status).toBe(200);
    expect((await heartbeat(dst)).status).toBe(200);
    const late = await sweeper.sweepNow();
    expect(late.enforced).toContain(src.id);
    await waitFor('batch moved to dst', async () => {
      const all = await allocsOf('batchy');
      const live = all.filter((x) => x['DesiredStatus'] === 'run');
      return live.length === 1 && live[0]?.['NodeID'] === dst.id ? true : undefined;
    });
    const moved = (await allocsOf('batchy')).find((x) => x['ID'] === alloc?.['ID']) as JsonObject;
    expect(moved).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc is being migrated' });
    expect(asMigrate(moved)).toBe(true);
    expect((await sweeper.sweepNow()).drained).toContain(src.id);
    expect(lastEvent(await node(src.id))).toMatchObject({ Message: 'Node drain complete', Details: { deadline_reached: 'true' } });
    await request(app).delete('/v1/job/batchy').expect(200);
    await eligibility(src.id, 'ineligible');
    await eligibility(dst.id, 'ineligible');
  });
});

function asMigrate(a: JsonObject): unknown {
  return (a['DesiredTransition'] as JsonObject | null)?.['Migrate'];
}

describe('purge', () => {
  it('deregisters the node, answers the evaluations, and its allocations are replaced', async () => {
    const victim = await registerReadyNode(app, { NodeClass: 'purge-src' });
    const allocs = await runJob('purged', 1, { Constraints: [{ LTarget: '${node.class}', RTarget: 'purge', Operand: 'regexp' }] });
    expect(allocs[0]?.['NodeID']).toBe(victim.id);
    await markRunning(victim, allocs);
    const other = await registerReadyNode(app, { NodeClass: 'purge-dst' });
    const res = await request(app).post(`/v1/node/${victim.id}/purge`);
    expect(res.status).toBe(200);
    expect(res.headers['x-nomad-index']).toBe(String(res.body.Index));
    expect(res.body).toMatchObject({ NodeModifyIndex: res.body.Index, EvalCreateIndex: res.body.Index });
    expect(res.body.EvalIDs.length).toBeGreaterThan(0);
    expectPlain(await request(app).get(`/v1/node/${victim.id}`), 404, 'node not found');
    expectPlain(await request(app).post(`/v1/node/${victim.id}/purge`), 404, 'node not found');
    const events = await h.state.eventsAfter(0);
    expect(events.find((e) => e.key === victim.id && e.type === 'NodeDeregistration')).toMatchObject({ topic: 'Node', payload: { Node: { ID: victim.id } } });
    await waitFor('replacement on the other node', async () => {
      const all = await allocsOf('purged');
      const live = all.filter((x) => x['DesiredStatus'] === 'run');
      return live.length === 1 && live[0]?.['NodeID'] === other.id ? true : undefined;
    });
    const old = (await allocsOf('purged')).find((x) => x['ID'] === allocs[0]?.['ID']);
    expect(old).toMatchObject({ ClientStatus: 'lost', DesiredStatus: 'stop' });
    // The purged node's secret no longer works.
    expectPlain(await heartbeat(victim), 404, 'node not found');
    await request(app).delete('/v1/job/purged').expect(200);
  });
});

describe('node events', () => {
  it('keeps the newest 10, as the anchor does', async () => {
    const n = await registerReadyNode(app);
    for (let i = 0; i < 12; i++) await eligibility(n.id, i % 2 === 0 ? 'ineligible' : 'eligible');
    const got = await node(n.id);
    const events = got['Events'] as JsonObject[];
    expect(events).toHaveLength(10);
    expect(messages(got).at(-1)).toBe('Node marked as eligible for scheduling');
    expect(messages(got)).not.toContain('Node registered');
    for (const e of events) expect(Object.keys(e).sort()).toEqual(['CreateIndex', 'Details', 'Message', 'Subsystem', 'Timestamp']);
    const indexes = events.map((e) => Number(e['CreateIndex']));
    expect(indexes).toEqual([...indexes].sort((x, y) => x - y));
  });
});
