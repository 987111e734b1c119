// Issue 26 item 7: the client agent end to end, with real processes: one scheduler server
// (src/main.ts) and two client agents (src/agent/main.ts) spawned through tsx. Service
// jobs run on the mock driver, batch jobs on raw_exec (real child processes); logs and
// files are read back through the server's /v1/client endpoints, which forward to the
// agent that runs the allocation.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, freePortBelowEphemeral, waitFor, type TestDatabase } from '@selfstack/testing';

const SERVER_MAIN = path.resolve(__dirname, '../src/main.ts');
const AGENT_MAIN = path.resolve(__dirname, '../src/agent/main.ts');
jest.setTimeout(180_000);

type Json = Record<string, unknown>;

interface Proc {
  child: ChildProcess;
  out: string;
  port: number;
}

function startProcess(main: string, env: Record<string, string>, port: number): Proc {
  const p: Proc = { port, out: '', child: undefined as unknown as ChildProcess };
  p.child = spawn(process.execPath, ['--import', 'tsx', main], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  p.child.stdout?.on('data', (d: Buffer) => (p.out += d.toString()));
  p.child.stderr?.on('data', (d: Buffer) => (p.out += d.toString()));
  return p;
}

async function stopProcess(p: Proc | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  await exited;
}

describe('client agents running real work', () => {
  let db: TestDatabase;
  let server: Proc;
  const agents: Record<string, Proc> = {};
  const nodeIds: Record<string, string> = {};
  let scratch = '';
  let base = '';

  const api = async (method: string, p: string, body?: unknown): Promise<{ status: number; json: any; text: string; headers: Headers }> => {
    const res = await fetch(`${base}${p}`, { method, ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } } : {}) });
    const text = await res.text();
    let json: unknown = undefined;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, json, text, headers: res.headers };
  };
  const output = () => [`server:\n${server.out}`, ...Object.entries(agents).map(([n, a]) => `${n}:\n${a.out}`)].join('\n');

  async function startAgent(name: string, extra: Record<string, string> = {}): Promise<string> {
    const port = await freePortBelowEphemeral();
    agents[name] = startProcess(
      AGENT_MAIN,
      {
        SCHEDULER_AGENT_SERVERS: `127.0.0.1:${server.port}`,
        SCHEDULER_AGENT_DATA_DIR: path.join(scratch, name),
        SCHEDULER_AGENT_NODE_NAME: name,
        SCHEDULER_AGENT_PORT: String(port),
        SCHEDULER_AGENT_DRIVERS: 'mock,raw_exec',
        SCHEDULER_AGENT_RAW_EXEC_ROOT: scratch,
        SCHEDULER_AGENT_WAIT: '5s',
        ...extra,
      },
      port,
    );
    const id = await waitFor(
      `agent ${name} ready`,
      async () => {
        const r = await api('GET', '/v1/nodes');
        const n = (r.json as Json[] | undefined)?.find((x) => x['Name'] === name && x['Status'] === 'ready');
        return n ? String(n['ID']) : undefined;
      },
      60_000,
      200,
      output,
    );
    nodeIds[name] = id;
    return id;
  }

  async function allocsOf(jobId: string): Promise<Json[]> {
    return (await api('GET', `/v1/job/${jobId}/allocations`)).json as Json[];
  }

  async function waitJob(jobId: string, what: string, ok: (job: Json, allocs: Json[]) => boolean, timeoutMs = 60_000): Promise<Json[]> {
    return waitFor(
      `${jobId}: ${what}`,
      async () => {
        const job = (await api('GET', `/v1/job/${jobId}`)).json as Json;
        const allocs = await allocsOf(jobId);
        return ok(job, allocs) ? allocs : undefined;
      },
      timeoutMs,
      200,
      output,
    );
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    scratch = mkdtempSync(path.join(tmpdir(), 'agent-e2e-'));
    const port = await freePortBelowEphemeral();
    // Short heartbeats: a stopped agent's node goes down within seconds; the grace leaves
    // a SIGKILLed agent time to come back before that.
    server = startProcess(
      SERVER_MAIN,
      { DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', SCHEDULER_HEARTBEAT_TTL_MIN: '1s', SCHEDULER_HEARTBEAT_GRACE: '10s', SCHEDULER_HEARTBEAT_FAILOVER: '0s' },
      port,
    );
    base = `http://127.0.0.1:${port}`;
    await waitFor('scheduler', async () => ((await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) ? true : undefined), 60_000, 100, () => server.out);
    await Promise.all([startAgent('agent-a'), startAgent('agent-b')]);
  });

  afterAll(async () => {
    for (const a of Object.values(agents)) await stopProcess(a);
    await stopProcess(server);
    await db?.drop();
    // raw_exec executors are detached: anything still running under scratch is ours.
    rmSync(scratch, { recursive: true, force: true });
  });

  it('registers fingerprinted, ready nodes with their drivers', async () => {
    const r = await api('GET', `/v1/node/${nodeIds['agent-a']}`);
    expect(r.status).toBe(200);
    const node = r.json as Json;
    expect(node['Status']).toBe('ready');
    const attrs = node['Attributes'] as Record<string, string>;
    for (const k of ['cpu.numcores', 'cpu.frequency', 'memory.totalbytes', 'kernel.name', 'os.name', 'unique.hostname']) expect(attrs[k]).toBeTruthy();
    expect(attrs['driver.raw_exec']).toBe('1');
    expect(attrs['driver.mock_driver']).toBe('1');
    expect((node['Drivers'] as Record<string, Json>)['raw_exec']).toMatchObject({ Detected: true, Healthy: true });
    expect(Number((node['NodeResources'] as { Cpu: { CpuShares: number } }).Cpu.CpuShares)).toBeGreaterThan(0);
    expect(node['HTTPAddr']).toBe(`127.0.0.1:${agents['agent-a']?.port}`);
    expect((node['Events'] as Json[]).map((e) => e['Message'])).toContain('Node registered');
  });

  const serviceJob = (version: string, minHealthyNs = 300e6) => ({
    ID: 'web',
    Type: 'service',
    Datacenters: ['dc1'],
    Update: { MaxParallel: 3, MinHealthyTime: minHealthyNs, HealthyDeadline: 90e9, ProgressDeadline: 120e9, HealthCheck: 'task_states' },
    TaskGroups: [
      {
        Name: 'web',
        Count: 3,
        Tasks: [{ Name: 'server', Driver: 'mock_driver', Config: { run_for: '0s' }, Env: { VERSION: version }, Resources: { CPU: 50, MemoryMB: 32 } }],
      },
    ],
  });

  it('runs a service job of count 3 to running, and an update to a successful deployment', async () => {
    expect((await api('PUT', '/v1/jobs', { Job: serviceJob('1') })).status).toBe(200);
    const allocs = await waitJob('web', 'three allocations running', (job, a) => job['Status'] === 'running' && a.filter((x) => x['ClientStatus'] === 'running').length === 3);
    const states = (allocs[0]?.['TaskStates'] as Record<string, { State: string; Events: Json[] }>)['server'];
    expect(states?.State).toBe('running');
    expect(states?.Events.map((e) => e['Type'])).toEqual(['Received', 'Task Setup', 'Started']);
    for (const a of allocs) expect([nodeIds['agent-a'], nodeIds['agent-b']]).toContain(a['NodeID']);

    expect((await api('PUT', '/v1/jobs', { Job: serviceJob('2') })).status).toBe(200);
    const dep = await waitFor(
      'the update deployment succeeds',
      async () => {
        const d = (await api('GET', '/v1/job/web/deployment')).json as Json | null;
        return d && d['JobVersion'] === 1 && d['Status'] === 'successful' ? d : undefined;
      },
      60_000,
      200,
      output,
    );
    expect(dep['StatusDescription']).toBe('Deployment completed successfully');
    const after = await waitJob('web', 'three new allocations running, the old ones stopped', (_j, a) => a.filter((x) => x['DesiredStatus'] === 'run' && x['ClientStatus'] === 'running').length === 3 && a.filter((x) => x['DesiredStatus'] === 'stop').every((x) => x['ClientStatus'] === 'complete'));
    const stopped = after.filter((a) => a['DesiredStatus'] === 'stop');
    expect(stopped.length).toBe(3);
    const killed = (stopped[0]?.['TaskStates'] as Record<string, { State: string; Events: Json[] }>)['server'];
    expect(killed?.State).toBe('dead');
    expect(killed?.Events.map((e) => e['Type']).slice(-2)).toEqual(['Killing', 'Killed']);
  });

  it('cancels a deployment when a newer version is registered mid-deployment', async () => {
    // Version 2 waits a long min_healthy_time, so its deployment is still running ...
    expect((await api('PUT', '/v1/jobs', { Job: serviceJob('3', 60e9) })).status).toBe(200);
    const old = await waitFor(
      'the version 2 deployment running',
      async () => {
        const d = (await api('GET', '/v1/job/web/deployment')).json as Json | null;
        return d && d['JobVersion'] === 2 && d['Status'] === 'running' ? d : undefined;
      },
      30_000,
      200,
      output,
    );
    // ... when version 3 arrives.
    expect((await api('PUT', '/v1/jobs', { Job: serviceJob('4') })).status).toBe(200);
    const cancelled = await waitFor(
      'the old deployment cancelled',
      async () => {
        const d = (await api('GET', `/v1/deployment/${String(old['ID'])}`)).json as Json;
        return d['Status'] === 'cancelled' ? d : undefined;
      },
      30_000,
      200,
      output,
    );
    expect(cancelled['StatusDescription']).toBe('Cancelled due to newer version of job');
    await waitFor(
      'the version 3 deployment successful',
      async () => {
        const d = (await api('GET', '/v1/job/web/deployment')).json as Json | null;
        return d && d['JobVersion'] === 3 && d['Status'] === 'successful' ? true : undefined;
      },
      60_000,
      200,
      output,
    );
  });

  it('restarts a task on request through /v1/client/allocation/:id/restart', async () => {
    const allocs = await waitJob('web', 'running', (_j, a) => a.filter((x) => x['DesiredStatus'] === 'run' && x['ClientStatus'] === 'running').length === 3);
    const id = String(allocs.find((a) => a['DesiredStatus'] === 'run')?.['ID']);
    const bad = await api('POST', `/v1/client/allocation/${id}/restart`, { TaskName: 'nope' });
    expect(bad.status).toBe(400);
    const r = await api('POST', `/v1/client/allocation/${id}/restart`, { TaskName: 'server' });
    expect([r.status, r.json]).toEqual([200, {}]);
    const state = await waitFor(
      'the task restarted',
      async () => {
        const a = (await api('GET', `/v1/allocation/${id}`)).json as Json;
        const t = (a['TaskStates'] as Record<string, { State: string; Restarts: number; Events: Json[] }>)['server'];
        return t && t.Restarts === 1 && t.State === 'running' ? t : undefined;
      },
      30_000,
      200,
      output,
    );
    expect(state.Events.map((e) => e['Type']).slice(-5)).toEqual(['Restart Signaled', 'Killing', 'Terminated', 'Restarting', 'Started']);
    const stats = await api('GET', `/v1/client/allocation/${id}/stats`);
    expect(stats.status).toBe(200);
    expect(Object.keys((stats.json as { Tasks: Json }).Tasks)).toEqual(['server']);
    const host = await api('GET', `/v1/client/stats?node_id=${nodeIds['agent-a']}`);
    expect(host.status).toBe(200);
    expect((host.json as { Memory: { Total: number } }).Memory.Total).toBeGreaterThan(0);
    // The agent serves only signed requests from a server.
    const direct = await fetch(`http://127.0.0.1:${agents['agent-a']?.port}/v1/client/stats`);
    expect([direct.status, await direct.text()]).toEqual([403, 'Permission denied']);
  });

  it('runs a raw_exec batch job whose output /v1/client/fs/logs returns, and the job goes dead', async () => {
    const job = {
      ID: 'hello',
      Type: 'batch',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'g',
          Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'echo "hello from $NOMAD_TASK_NAME"; echo oops >&2; echo data > local/out.txt'] }, Resources: { CPU: 50, MemoryMB: 32 } }],
        },
      ],
    };
    expect((await api('PUT', '/v1/jobs', { Job: job })).status).toBe(200);
    const allocs = await waitJob('hello', 'dead', (j, a) => j['Status'] === 'dead' && a.length === 1);
    const alloc = allocs[0] as Json;
    expect(alloc['ClientStatus']).toBe('complete');
    const events = (alloc['TaskStates'] as Record<string, { Events: Json[] }>)['t']?.Events ?? [];
    expect(events.map((e) => e['Type'])).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    expect(events[3]?.['ExitCode']).toBe(0);
    const id = String(alloc['ID']);

    const plain = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(plain.text).toBe('hello from t\n');
    const stderr = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stderr&plain=true`);
    expect(stderr.text).toBe('oops\n');
    const tail = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true&origin=end&offset=2`);
    expect(tail.text).toBe('t\n');
    // Framed: JSON frames with base64 data, as the anchor streams them.
    const framed = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stdout`);
    expect(framed.status).toBe(200);
    expect(framed.headers.get('content-type')).toMatch(/^application\/json/);
    const frame = JSON.parse(framed.text.split('}{')[0]?.replace(/}?$/, '}') ?? '{}') as { Data: string; File: string; Offset: number };
    expect(Buffer.from(frame.Data, 'base64').toString()).toBe('hello from t\n');
    expect(frame.File).toBe('alloc/logs/t.stdout.0');
    // follow on a finished task ends after the last byte.
    const followed = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true&follow=true`);
    expect(followed.text).toBe('hello from t\n');

    // Files of the allocation directory.
    const ls = await api('GET', `/v1/client/fs/ls/${id}?path=/`);
    expect(ls.status).toBe(200);
    expect((ls.json as Json[]).map((f) => f['Name']).sort()).toEqual(['alloc', 't']);
    const cat = await api('GET', `/v1/client/fs/cat/${id}?path=t/local/out.txt`);
    expect(cat.status).toBe(200);
    expect(cat.text).toBe('data\n');
    const stat = await api('GET', `/v1/client/fs/stat/${id}?path=t/local/out.txt`);
    expect(stat.json).toMatchObject({ Name: 'out.txt', IsDir: false, Size: 5 });
    // Never outside the allocation directory.
    for (const p of ['../', 't/../../', '/../../etc/passwd']) {
      const r = await api('GET', `/v1/client/fs/cat/${id}?path=${encodeURIComponent(p)}`);
      expect(r.status).toBe(400);
      expect(r.text).toMatch(/escapes the allocation directory/);
    }
    // Bad parameters are the anchor's 400s.
    expect((await api('GET', `/v1/client/fs/logs/${id}?type=stdout`)).text).toBe('must provide task name');
    const badType = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stdnone`);
    expect(badType.status).toBe(400);
    const badOrigin = await api('GET', `/v1/client/fs/logs/${id}?task=t&type=stdout&origin=middle`);
    expect([badOrigin.status, badOrigin.text]).toEqual([400, 'origin must be start or end']);
    const unknown = await api('GET', `/v1/client/fs/logs/00000000-0000-0000-0000-000000000000?task=t&type=stdout`);
    expect(unknown.status).toBe(404);
  });

  it('keeps a job that fits nowhere blocked, and places it when a fitting node joins', async () => {
    const job = {
      ID: 'picky',
      Type: 'service',
      Datacenters: ['dc1'],
      Constraints: [{ LTarget: '${meta.rack}', RTarget: 'r9', Operand: '=' }],
      TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '0s' }, Resources: { CPU: 50, MemoryMB: 32 } }] }],
    };
    expect((await api('PUT', '/v1/jobs', { Job: job })).status).toBe(200);
    await waitFor('a blocked evaluation', async () => (((await api('GET', '/v1/job/picky/evaluations')).json as Json[]).some((e) => e['Status'] === 'blocked') ? true : undefined), 30_000, 200, output);
    expect(await allocsOf('picky')).toEqual([]);
    const id = await startAgent('agent-c', { SCHEDULER_AGENT_META: 'rack=r9' });
    const allocs = await waitJob('picky', 'placed on the new node and running', (_j, a) => a.some((x) => x['ClientStatus'] === 'running'));
    expect(allocs.map((a) => a['NodeID'])).toEqual([id]);
    await stopProcess(agents['agent-c']);
    // Its node would stay ready until its heartbeat TTL ran out, and later tests' jobs could
    // be placed there meanwhile: gone at once.
    expect((await api('PUT', `/v1/node/${id}/purge`)).status).toBe(200);
  });

  it('does not run a task twice when the agent is killed with SIGKILL and restarted', async () => {
    const marker = path.join(scratch, 'runs.txt');
    const job = {
      ID: 'once',
      Type: 'batch',
      Datacenters: ['dc1'],
      Constraints: [{ LTarget: '${node.unique.id}', RTarget: nodeIds['agent-a'], Operand: '=' }],
      TaskGroups: [
        {
          Name: 'g',
          RestartPolicy: { Attempts: 3, Interval: 3600e9, Delay: 100e6, Mode: 'fail' },
          Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', `echo run >> ${marker}; sleep 3; echo done`] }, Resources: { CPU: 50, MemoryMB: 32 } }],
        },
      ],
    };
    expect((await api('PUT', '/v1/jobs', { Job: job })).status).toBe(200);
    await waitJob('once', 'the task running', (_j, a) => a.some((x) => x['ClientStatus'] === 'running'));
    await stopProcess(agents['agent-a'], 'SIGKILL');
    await startAgent('agent-a');
    const allocs = await waitJob('once', 'dead', (j) => j['Status'] === 'dead');
    expect(allocs.map((a) => a['ClientStatus'])).toEqual(['complete']);
    expect(readFileSync(marker, 'utf8')).toBe('run\n');
    const events = (allocs[0]?.['TaskStates'] as Record<string, { Events: Json[]; Restarts: number }>)['t'];
    expect(events?.Restarts).toBe(0);
    expect(events?.Events.filter((e) => e['Type'] === 'Started').length).toBe(1);
    const logs = await api('GET', `/v1/client/fs/logs/${String(allocs[0]?.['ID'])}?task=t&type=stdout&plain=true`);
    expect(logs.text).toBe('done\n');
  });

  it('marks the node of a stopped agent down and reschedules its allocations onto the other', async () => {
    const [a, b] = [nodeIds['agent-a'] as string, nodeIds['agent-b'] as string];
    // Placed on agent-b: agent-a is ineligible while the job registers.
    expect((await api('PUT', `/v1/node/${a}/eligibility`, { Eligibility: 'ineligible' })).status).toBe(200);
    const job = { ID: 'moving', Type: 'service', Datacenters: ['dc1'], TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '0s' }, Resources: { CPU: 50, MemoryMB: 32 } }] }] };
    expect((await api('PUT', '/v1/jobs', { Job: job })).status).toBe(200);
    const first = await waitJob('moving', 'running on agent-b', (_j, x) => x.some((y) => y['ClientStatus'] === 'running'));
    expect(first.map((x) => x['NodeID'])).toEqual([b]);
    expect((await api('PUT', `/v1/node/${a}/eligibility`, { Eligibility: 'eligible' })).status).toBe(200);

    await stopProcess(agents['agent-b'], 'SIGTERM');
    await waitFor('agent-b down', async () => (((await api('GET', `/v1/node/${b}`)).json as Json)['Status'] === 'down' ? true : undefined), 30_000, 200, output);
    const after = await waitJob('moving', 'lost on agent-b, running on agent-a', (_j, x) => x.some((y) => y['NodeID'] === b && y['ClientStatus'] === 'lost') && x.some((y) => y['NodeID'] === a && y['ClientStatus'] === 'running'));
    expect(after.length).toBe(2);
  });
});
