// Deployments through every status (issue 25 item 4): a rolling update driven by
// allocation health reported through the API, canaries with manual and automatic
// promotion, pause/resume, cancelled by a newer version, failed by unhealthy allocations
// (with auto_revert rolling back), by the progress deadline and by the operator; the
// reference's exact StatusDescription strings.
import request from 'supertest';
import { waitFor } from '@selfstack/testing';
import type { JsonObject } from '../src/shared/common.types';
import { jobAllocs, registerReadyNode, reportAllocs, startHarness, waitForEval, type Harness, type TestNode } from './harness';

let h: Harness;
const nodes = new Map<string, TestNode>();

beforeAll(async () => {
  h = await startHarness();
  await h.startEngine({ pollMs: 500 });
  for (let i = 0; i < 3; i++) {
    const n = await registerReadyNode(h.app);
    nodes.set(n.id, n);
  }
});

afterAll(async () => {
  await h.close();
});

const SEC = 1e9;

function spec(id: string, image: string, update: JsonObject, count = 2): JsonObject {
  return {
    ID: id,
    Update: { MaxParallel: 1, MinHealthyTime: 1 * SEC, HealthyDeadline: 5 * SEC, ProgressDeadline: 60 * SEC, ...update },
    TaskGroups: [{ Name: 'g', Count: count, Tasks: [{ Name: 't', Driver: 'docker', Config: { image }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  };
}

async function register(job: JsonObject): Promise<JsonObject> {
  const res = await request(h.app).put('/v1/jobs').send({ Job: job });
  expect(res.status).toBe(200);
  await waitForEval(h.app, String(res.body.EvalID), ['complete', 'blocked', 'failed']);
  return res.body as JsonObject;
}

async function latestDeployment(jobId: string): Promise<JsonObject> {
  const res = await request(h.app).get(`/v1/job/${jobId}/deployment`);
  expect(res.status).toBe(200);
  return res.body as JsonObject;
}

/** Reports allocations running and (un)healthy from their nodes. */
async function health(allocs: JsonObject[], healthy: boolean): Promise<void> {
  for (const a of allocs) {
    const node = nodes.get(String(a['NodeID'])) as TestNode;
    const res = await reportAllocs(h.app, node, [{ ID: a['ID'], ClientStatus: 'running', DeploymentStatus: { Healthy: healthy } }]);
    expect(res.status).toBe(200);
  }
}

const live = (allocs: JsonObject[], version?: number) =>
  allocs.filter((a) => a['DesiredStatus'] === 'run' && !['complete', 'failed', 'lost'].includes(String(a['ClientStatus'])) && (version === undefined || a['JobVersion'] === version));

async function deploymentIs(jobId: string, status: string, description?: string): Promise<JsonObject> {
  return waitFor(`deployment ${status}`, async () => {
    const d = await latestDeployment(jobId);
    return d['Status'] === status && (description === undefined || d['StatusDescription'] === description) ? d : undefined;
  });
}

describe('rolling update', () => {
  it('runs the first version to success, then replaces allocations one at a time as they turn healthy', async () => {
    await register(spec('roll', 'v1', {}));
    const d0 = await latestDeployment('roll');
    expect(d0).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running', JobVersion: 0 });
    expect((d0['TaskGroups'] as JsonObject)['g']).toMatchObject({ DesiredTotal: 2, PlacedAllocs: 2, HealthyAllocs: 0, AutoRevert: false, Promoted: false });
    expect((await request(h.app).get('/v1/job/roll')).body.Status).toBe('running');
    await health(await jobAllocs(h.app, 'roll'), true);
    const done = await deploymentIs('roll', 'successful', 'Deployment completed successfully');
    expect((done['TaskGroups'] as JsonObject)['g']).toMatchObject({ HealthyAllocs: 2 });
    const versions = await request(h.app).get('/v1/job/roll/versions');
    expect(versions.body.Versions[0]).toMatchObject({ Version: 0, Stable: true });

    await register(spec('roll', 'v2', {}));
    const d1 = await latestDeployment('roll');
    expect(d1).toMatchObject({ Status: 'running', JobVersion: 1 });
    let allocs = await jobAllocs(h.app, 'roll');
    expect(live(allocs, 1)).toHaveLength(1);
    expect(live(allocs, 0)).toHaveLength(1);
    expect(allocs.filter((a) => a['DesiredDescription'] === 'alloc is being updated due to job update')).toHaveLength(1);
    await health(live(allocs, 1), true);
    allocs = await waitFor('second replacement', async () => {
      const a = await jobAllocs(h.app, 'roll');
      return live(a, 1).length === 2 ? a : undefined;
    });
    expect(live(allocs, 0)).toHaveLength(0);
    await health(live(allocs, 1).filter((a) => (a['DeploymentStatus'] as JsonObject | null)?.['Healthy'] !== true), true);
    await deploymentIs('roll', 'successful', 'Deployment completed successfully');
  });

  it('cancels a running deployment when a newer version is registered', async () => {
    await register(spec('roll', 'v3', {}));
    const running = await latestDeployment('roll');
    expect(running['Status']).toBe('running');
    await register(spec('roll', 'v4', {}));
    const old = await request(h.app).get(`/v1/deployment/${String(running['ID'])}`);
    expect(old.body).toMatchObject({ Status: 'cancelled', StatusDescription: 'Cancelled due to newer version of job' });
  });

  it('pauses and resumes through the API, and an operator can fail it', async () => {
    const d = await latestDeployment('roll');
    const pause = await request(h.app).put(`/v1/deployment/pause/${String(d['ID'])}`).send({ DeploymentID: d['ID'], Pause: true });
    expect(pause.status).toBe(200);
    expect((await latestDeployment('roll'))).toMatchObject({ Status: 'paused', StatusDescription: 'Deployment is paused' });
    const resume = await request(h.app).put(`/v1/deployment/pause/${String(d['ID'])}`).send({ DeploymentID: d['ID'], Pause: false });
    expect(resume.status).toBe(200);
    expect(resume.body.EvalID).not.toBe('');
    expect((await latestDeployment('roll'))).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running' });
    const fail = await request(h.app).put(`/v1/deployment/fail/${String(d['ID'])}`).send({});
    expect(fail.status).toBe(200);
    expect((await latestDeployment('roll'))).toMatchObject({ Status: 'failed', StatusDescription: 'Deployment marked as failed' });
    const again = await request(h.app).put(`/v1/deployment/fail/${String(d['ID'])}`).send({});
    expect(again.status).toBe(400);
    expect(again.text).toBe("can't fail terminal deployment");
  });
});

describe('failures', () => {
  it('fails on an unhealthy allocation and auto_revert rolls back to the stable version', async () => {
    await register(spec('revert', 'good', { AutoRevert: true }));
    await health(await jobAllocs(h.app, 'revert'), true);
    await deploymentIs('revert', 'successful');
    await register(spec('revert', 'bad', { AutoRevert: true }));
    const bad = await latestDeployment('revert');
    const placed = live(await jobAllocs(h.app, 'revert'), 1);
    expect(placed).toHaveLength(1);
    await health(placed, false);
    const failed = await request(h.app).get(`/v1/deployment/${String(bad['ID'])}`);
    expect(failed.body).toMatchObject({ Status: 'failed', StatusDescription: 'Failed due to unhealthy allocations - rolling back to job version 0' });
    const job = await request(h.app).get('/v1/job/revert');
    expect(job.body).toMatchObject({ Version: 2 });
    expect(job.body.TaskGroups[0].Tasks[0].Config.image).toBe('good');
  });

  it('fails when no allocation turns healthy before the progress deadline', async () => {
    await register(spec('slow', 'v1', { MinHealthyTime: 0.1 * SEC, HealthyDeadline: 0.5 * SEC, ProgressDeadline: 1 * SEC }, 1));
    const d = await deploymentIs('slow', 'failed', 'Failed due to progress deadline');
    expect(d['JobVersion']).toBe(0);
  });
});

describe('canaries', () => {
  it('places canaries, waits for manual promotion, then rolls the rest', async () => {
    await register(spec('canary', 'v1', { Canary: 1 }));
    await health(await jobAllocs(h.app, 'canary'), true);
    await deploymentIs('canary', 'successful');
    await register(spec('canary', 'v2', { Canary: 1 }));
    const d = await latestDeployment('canary');
    expect(d).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running but requires manual promotion' });
    expect((d['TaskGroups'] as JsonObject)['g']).toMatchObject({ DesiredCanaries: 1 });
    const canaries = live(await jobAllocs(h.app, 'canary'), 1);
    expect(canaries).toHaveLength(1);
    expect((canaries[0]?.['DeploymentStatus'] as JsonObject)['Canary']).toBe(true);
    expect(live(await jobAllocs(h.app, 'canary'), 0)).toHaveLength(2);
    await health(canaries, true);
    const promote = await request(h.app).put(`/v1/deployment/promote/${String(d['ID'])}`).send({ DeploymentID: d['ID'], All: true });
    expect(promote.status).toBe(200);
    await waitForEval(h.app, String(promote.body.EvalID));
    const rolled = await waitFor('old version replaced', async () => {
      const a = await jobAllocs(h.app, 'canary');
      return live(a, 1).length === 2 ? a : undefined;
    });
    await health(live(rolled, 1).filter((a) => (a['DeploymentStatus'] as JsonObject | null)?.['Healthy'] !== true), true);
    const done = await deploymentIs('canary', 'successful');
    expect((done['TaskGroups'] as JsonObject)['g']).toMatchObject({ Promoted: true });
  });

  it('promotes automatically with auto_promote once the canaries are healthy', async () => {
    await register(spec('auto', 'v1', { Canary: 1, AutoPromote: true }));
    await health(await jobAllocs(h.app, 'auto'), true);
    await deploymentIs('auto', 'successful');
    await register(spec('auto', 'v2', { Canary: 1, AutoPromote: true }));
    expect(await latestDeployment('auto')).toMatchObject({ StatusDescription: 'Deployment is running pending automatic promotion' });
    await health(live(await jobAllocs(h.app, 'auto'), 1), true);
    const promoted = await waitFor('auto-promoted', async () => {
      const d = await latestDeployment('auto');
      return ((d['TaskGroups'] as JsonObject)['g'] as JsonObject)['Promoted'] === true ? d : undefined;
    });
    expect(promoted['StatusDescription']).toBe('Deployment is running');
  });
});
