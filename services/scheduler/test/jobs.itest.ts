// Jobs endpoints and the shared query conventions (spec "Query parameters common to
// endpoints"; reference §0-§1), against real Postgres and Redis.
import request from 'supertest';
import { startTestListener, type TestListener } from '@selfstack/testing';
import { expectPlain, insertAllocation, insertDeployment, minimalJob, registerJob, registerNode, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('response headers', () => {
  it("carries the API security profile (helmet's API_HELMET), not the document-oriented headers", async () => {
    const res = await request(h.app).get('/v1/jobs');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    for (const h of ['cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'referrer-policy', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection']) {
      expect(res.headers[h]).toBeUndefined();
    }
    expect(res.headers['x-scheduler-index']).toMatch(/^\d+$/);
    expect(res.headers['x-nomad-knownleader']).toBe('true');
    expect(res.headers['x-nomad-lastcontact']).toBe('0');
  });
});

describe('job registration', () => {
  it('registers a job with Nomad defaults, a pending evaluation and index headers', async () => {
    const res = await request(h.app).put('/v1/jobs').send({ Job: minimalJob('api') });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      EvalID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      EvalCreateIndex: expect.any(Number),
      JobModifyIndex: expect.any(Number),
      Warnings: '',
      Index: expect.any(Number),
      LastContact: 0,
      KnownLeader: false,
      NextToken: '',
    });
    expect(res.body.EvalCreateIndex).toBe(res.body.Index);
    expect(res.body.JobModifyIndex).toBe(res.body.Index);
    expect(res.headers['x-scheduler-index']).toBe(String(res.body.Index));
    expect(res.headers['x-nomad-index']).toBe(String(res.body.Index));

    const job = await request(h.app).get('/v1/job/api');
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      ID: 'api',
      Name: 'api',
      Namespace: 'default',
      Region: 'global',
      Type: 'service',
      Priority: 50,
      Datacenters: ['*'],
      NodePool: 'default',
      Status: 'pending',
      Version: 0,
      Stop: false,
      CreateIndex: res.body.Index,
      JobModifyIndex: res.body.Index,
    });
    expect(job.body.TaskGroups[0]).toMatchObject({ Name: 'web', Count: 1 });
    expect(job.body.TaskGroups[0].Tasks[0].Resources).toMatchObject({ CPU: 100, MemoryMB: 300 });
    expect(Number(job.headers['x-scheduler-index'])).toBeGreaterThanOrEqual(res.body.Index);
    expect(job.headers['x-scheduler-knownleader']).toBe('true');
    expect(job.headers['x-scheduler-lastcontact']).toBe('0');

    const evals = await request(h.app).get('/v1/job/api/evaluations');
    expect(evals.status).toBe(200);
    expect(evals.body).toHaveLength(1);
    expect(evals.body[0]).toMatchObject({ ID: res.body.EvalID, Status: 'pending', TriggeredBy: 'job-register', JobID: 'api', Type: 'service', Priority: 50 });
  });

  it('logs JobRegistered with the Job and the Evaluation at the write index', async () => {
    const r = await registerJob(h.app, minimalJob('evt'));
    const events = (await h.state.eventsAfter(Number(r['Index']) - 1)).filter((e) => e.index === r['Index']);
    expect(events.map((e) => `${e.topic}:${e.type}:${e.key}`)).toEqual([`Job:JobRegistered:evt`, `Evaluation:JobRegistered:${String(r['EvalID'])}`]);
    expect(events[0]).toMatchObject({ namespace: 'default', filterKeys: null });
    expect((events[0]?.payload as { Job: { ID: string; Version: number } }).Job).toMatchObject({ ID: 'evt', Version: 0 });
    expect(events[1]).toMatchObject({ filterKeys: ['evt', ''] });
    expect((events[1]?.payload as { Evaluation: { Status: string } }).Evaluation.Status).toBe('pending');
    const again = await registerJob(h.app, minimalJob('evt'));
    const second = (await h.state.eventsAfter(Number(again['Index']) - 1)).filter((e) => e.index === again['Index']);
    expect(second.map((e) => `${e.topic}:${e.type}`)).toEqual(['Evaluation:EvaluationUpdated']);
  });

  it('bumps the version only when the spec changes, but records an evaluation every time', async () => {
    const first = await registerJob(h.app, minimalJob('ver'));
    const same = await request(h.app).post('/v1/jobs').send({ Job: minimalJob('ver') });
    expect(same.status).toBe(200);
    expect(same.body.JobModifyIndex).toBe(first['JobModifyIndex']);
    expect(same.body.EvalID).not.toBe(first['EvalID']);
    const changed = await request(h.app).put('/v1/job/ver').send({ Job: minimalJob('ver', { Priority: 70 }) });
    expect(changed.status).toBe(200);
    expect(changed.body.JobModifyIndex).toBe(changed.body.Index);

    const versions = await request(h.app).get('/v1/job/ver/versions');
    expect(versions.status).toBe(200);
    expect(versions.body.Versions.map((j: { Version: number }) => j.Version)).toEqual([1, 0]);
    expect(versions.body.Versions[0].Priority).toBe(70);
    expect(versions.body.Diffs).toBeNull();
    const evals = await request(h.app).get('/v1/job/ver/evaluations');
    expect(evals.body).toHaveLength(3);
  });

  it('rejects bad bodies with the anchor wording', async () => {
    expectPlain(await request(h.app).put('/v1/jobs').send({}), 400, 'Job must be specified');
    expectPlain(await request(h.app).put('/v1/jobs').send({ Job: { Name: 'x' } }), 400, "Job ID hasn't been provided");
    expectPlain(await request(h.app).put('/v1/job/other').send({ Job: minimalJob('ver') }), 400, 'Job ID does not match name');
    expectPlain(
      await request(h.app).put('/v1/jobs').send({ Job: { ID: 'bad', Type: 'weird', TaskGroups: [] } }),
      400,
      '2 errors occurred:\n\t* Invalid job type: "weird"\n\t* Missing job task groups\n\n',
    );
    expectPlain(
      await request(h.app).put('/v1/jobs').send({ Job: { ID: 'bad', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] } }),
      400,
      '1 error occurred:\n\t* Task group g validation failed: 1 error occurred:\n\t* Task t validation failed: 1 error occurred:\n\t* Missing task driver\n\n\n\n\n\n',
    );
    expectPlain(
      await request(h.app).put('/v1/jobs?namespace=nope').send({ Job: minimalJob('x') }),
      400,
      'job "x" is in nonexistent namespace "nope"',
    );
    const notJson = await request(h.app).put('/v1/jobs').set('Content-Type', 'application/json').send('{"Job":');
    expect(notJson.status).toBe(400);
    expect(notJson.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('enforces the job modify index when asked', async () => {
    const r = await registerJob(h.app, minimalJob('enf'));
    const bad = await request(h.app).put('/v1/jobs').send({ Job: minimalJob('enf', { Priority: 60 }), EnforceIndex: true, JobModifyIndex: 1 });
    expectPlain(bad, 400, `Enforcing job modify index 1: job exists with conflicting job modify index: ${String(r['JobModifyIndex'])}`);
    const ok = await request(h.app).put('/v1/jobs').send({ Job: minimalJob('enf', { Priority: 60 }), EnforceIndex: true, JobModifyIndex: r['JobModifyIndex'] });
    expect(ok.status).toBe(200);
  });

  it('does not create evaluations for periodic jobs', async () => {
    const res = await request(h.app).put('/v1/jobs').send({ Job: minimalJob('cron', { Type: 'batch', Periodic: { Enabled: true, Spec: '*/5 * * * *' } }) });
    expect(res.status).toBe(200);
    expect(res.body.EvalID).toBe('');
    expect(res.body.EvalCreateIndex).toBe(0);
    const job = await request(h.app).get('/v1/job/cron');
    expect(job.body.Status).toBe('running');
  });
});

describe('job reads', () => {
  it('answers 404 job not found as plain text', async () => {
    expectPlain(await request(h.app).get('/v1/job/missing'), 404, 'job not found');
    expectPlain(await request(h.app).get('/v1/job/missing/summary'), 404, 'job not found');
    expectPlain(await request(h.app).get('/v1/job/missing/versions'), 404, 'job versions not found');
  });

  it('serves summary, allocations, deployments and the latest deployment', async () => {
    await registerJob(h.app, minimalJob('sub'));
    const summary = await request(h.app).get('/v1/job/sub/summary');
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({
      JobID: 'sub',
      Namespace: 'default',
      Summary: { web: { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 } },
      Children: { Pending: 0, Running: 0, Dead: 0 },
    });
    const none = await request(h.app).get('/v1/job/sub/deployment');
    expect(none.status).toBe(200);
    expect(none.text).toBe('null');
    expect((await request(h.app).get('/v1/job/sub/allocations')).body).toEqual([]);

    const nodeId = await registerNode(h.app);
    const alloc = await insertAllocation(h, { JobID: 'sub', NodeID: nodeId });
    const d = await insertDeployment(h, 'sub');
    const allocs = await request(h.app).get('/v1/job/sub/allocations');
    expect(allocs.body).toHaveLength(1);
    expect(allocs.body[0]).toMatchObject({ ID: alloc.ID, JobID: 'sub', NodeID: nodeId, ClientStatus: 'running', JobType: 'service' });
    expect(allocs.body[0].Job).toBeUndefined();
    const latest = await request(h.app).get('/v1/job/sub/deployment');
    expect(latest.body).toMatchObject({ ID: d.ID, Status: 'running' });
    expect((await request(h.app).get('/v1/job/sub/deployments')).body.map((x: { ID: string }) => x.ID)).toEqual([d.ID]);
  });

  it('cancels a running deployment when a newer version is registered', async () => {
    await registerJob(h.app, minimalJob('canc'));
    const d = await insertDeployment(h, 'canc');
    await registerJob(h.app, minimalJob('canc', { Priority: 55 }));
    const res = await request(h.app).get(`/v1/deployment/${d.ID}`);
    expect(res.body).toMatchObject({ Status: 'cancelled', StatusDescription: 'Cancelled due to newer version of job' });
  });
});

describe('job deregistration', () => {
  it('stops a job (new version, Stop=true) and purges it', async () => {
    await registerJob(h.app, minimalJob('gone'));
    const stop = await request(h.app).delete('/v1/job/gone');
    expect(stop.status).toBe(200);
    expect(stop.body).toMatchObject({ EvalID: expect.any(String), JobModifyIndex: stop.body.Index, VolumeEvalID: '', VolumeEvalIndex: 0 });
    expect(stop.headers['x-scheduler-index']).toBe(String(stop.body.Index));
    const job = await request(h.app).get('/v1/job/gone');
    expect(job.body).toMatchObject({ Stop: true, Version: 1 });
    const evals = await request(h.app).get('/v1/job/gone/evaluations');
    expect(evals.body.map((e: { TriggeredBy: string }) => e.TriggeredBy).sort()).toEqual(['job-deregister', 'job-register']);

    const purge = await request(h.app).delete('/v1/job/gone?purge=true');
    expect(purge.status).toBe(200);
    expect((await request(h.app).get('/v1/job/gone')).status).toBe(404);
  });

  it('answers 200 with zeros for a missing job and 500 for a bad purge flag', async () => {
    const res = await request(h.app).delete('/v1/job/never-was');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ EvalID: '', EvalCreateIndex: 0, JobModifyIndex: 0, VolumeEvalID: '', VolumeEvalIndex: 0, Index: 0, LastContact: 0, KnownLeader: false, NextToken: '' });
    expectPlain(
      await request(h.app).delete('/v1/job/never-was?purge=maybe'),
      500,
      'Failed to parse value of "purge" (maybe) as a bool: strconv.ParseBool: parsing "maybe": invalid syntax',
    );
  });
});

describe('query conventions', () => {
  it('rejects bad parameters with the anchor messages', async () => {
    expectPlain(await request(h.app).get('/v1/jobs?index=abc'), 400, 'Invalid index');
    expectPlain(await request(h.app).get('/v1/jobs?index=1&wait=10'), 400, 'Invalid wait time');
    expectPlain(await request(h.app).get('/v1/jobs?stale=maybe'), 400, 'Expect `true` or `false` for `stale` query string parameter');
    expectPlain(await request(h.app).get('/v1/jobs?per_page=x'), 400, 'Expect a number for `per_page` query string parameter');
  });

  it('accepts stale reads and reports staleness headers', async () => {
    for (const q of ['stale', 'stale=true', 'stale=false']) {
      const res = await request(h.app).get(`/v1/jobs?${q}`);
      expect(res.status).toBe(200);
      expect(res.headers['x-scheduler-lastcontact']).toBe('0');
      expect(res.headers['x-scheduler-knownleader']).toBe('true');
    }
  });

  it('pretty-prints on ?pretty and gzips when accepted', async () => {
    await registerJob(h.app, minimalJob('pp'));
    const pretty = await request(h.app).get('/v1/job/pp?pretty');
    expect(pretty.text.endsWith('}\n')).toBe(true);
    expect(pretty.text).toContain('\n    "ID": "pp"');
    const compact = await request(h.app).get('/v1/job/pp?pretty=0');
    expect(compact.text).not.toContain('\n');
    // superagent inflates the body itself; the headers show what went over the wire.
    const zipped = await request(h.app).get('/v1/job/pp').set('Accept-Encoding', 'gzip, deflate');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['vary']).toBe('Accept-Encoding');
    expect(zipped.body.ID).toBe('pp');
    const plain = await request(h.app).get('/v1/job/pp').set('Accept-Encoding', 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('answers 405 Invalid method and 404 with an empty body for unknown paths', async () => {
    expectPlain(await request(h.app).patch('/v1/jobs').send({}), 405, 'Invalid method');
    expectPlain(await request(h.app).delete('/v1/jobs'), 405, 'Invalid method');
    const missing = await request(h.app).get('/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('');
  });

  it('lists with prefix, namespace * and reverse', async () => {
    const ns = await request(h.app).put('/v1/namespace/team').send({ Name: 'team', Description: 'a team' });
    expect(ns.status).toBe(200);
    await registerJob(h.app, minimalJob('pfx-a'));
    await registerJob(h.app, minimalJob('pfx-b', { Namespace: 'team' }));
    const def = await request(h.app).get('/v1/jobs?prefix=pfx-');
    expect(def.body.map((j: { ID: string }) => j.ID)).toEqual(['pfx-a']);
    const team = await request(h.app).get('/v1/jobs?prefix=pfx-&namespace=team');
    expect(team.body.map((j: { ID: string }) => j.ID)).toEqual(['pfx-b']);
    const all = await request(h.app).get('/v1/jobs?prefix=pfx-&namespace=*');
    expect(all.body.map((j: { Namespace: string; ID: string }) => `${j.Namespace}/${j.ID}`)).toEqual(['default/pfx-a', 'team/pfx-b']);
    const rev = await request(h.app).get('/v1/jobs?prefix=pfx-&namespace=*&reverse=true');
    expect(rev.body.map((j: { ID: string }) => j.ID)).toEqual(['pfx-b', 'pfx-a']);
    const meta = await request(h.app).get('/v1/jobs?prefix=pfx-a&meta=true');
    expect(meta.body[0].Meta).toEqual({});
    expect(def.body[0].Meta).toBeUndefined();
  });

  it('paginates with per_page and next_token; the header is absent on the last page', async () => {
    for (const id of ['pg-1', 'pg-2', 'pg-3', 'pg-4', 'pg-5']) await registerJob(h.app, minimalJob(id));
    const p1 = await request(h.app).get('/v1/jobs?prefix=pg-&per_page=2');
    expect(p1.body.map((j: { ID: string }) => j.ID)).toEqual(['pg-1', 'pg-2']);
    expect(p1.headers['x-scheduler-nexttoken']).toBe('default.pg-3');
    expect(p1.headers['x-nomad-nexttoken']).toBe('default.pg-3');
    const p2 = await request(h.app).get(`/v1/jobs?prefix=pg-&per_page=2&next_token=${p1.headers['x-scheduler-nexttoken']}`);
    expect(p2.body.map((j: { ID: string }) => j.ID)).toEqual(['pg-3', 'pg-4']);
    const p3 = await request(h.app).get(`/v1/jobs?prefix=pg-&per_page=2&next_token=${p2.headers['x-scheduler-nexttoken']}`);
    expect(p3.body.map((j: { ID: string }) => j.ID)).toEqual(['pg-5']);
    expect(p3.headers['x-scheduler-nexttoken']).toBeUndefined();
    const r1 = await request(h.app).get('/v1/jobs?prefix=pg-&per_page=2&reverse=true');
    expect(r1.body.map((j: { ID: string }) => j.ID)).toEqual(['pg-5', 'pg-4']);
    expect(r1.headers['x-scheduler-nexttoken']).toBe('default.pg-3');
  });
});

describe('regions', () => {
  let peer: Harness;
  let peerListener: TestListener;
  beforeAll(async () => {
    peer = await startHarness({ region: 'eu' });
    peerListener = await startTestListener(peer.app);
    await registerJob(peer.app, minimalJob('eu-only'));
  });
  afterAll(async () => {
    await peerListener.close();
    await peer.close();
  });

  it('serves its own region, forwards to a configured peer and refuses unknown regions', async () => {
    expect((await request(h.app).get('/v1/jobs?region=global')).status).toBe(200);
    expectPlain(await request(h.app).get('/v1/jobs?region=mars'), 400, 'No path to region');
    const app = h.appWith({ peers: { eu: peerListener.url } });
    const fwd = await request(app).get('/v1/job/eu-only?region=eu');
    expect(fwd.status).toBe(200);
    expect(fwd.body.ID).toBe('eu-only');
    expect(fwd.body.Region).toBe('eu');
    expect(fwd.headers['x-scheduler-index']).toBeDefined();
    const regions = await request(app).get('/v1/regions');
    expect(regions.body).toEqual(['eu', 'global']);
  });
});
