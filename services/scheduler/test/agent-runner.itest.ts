// The client agent's parts on a real filesystem and real processes (issue 26 items 1, 3,
// 4): configuration from env and an HCL file, log rotation, path confinement of the fs
// endpoints, and the allocation runner with the real mock and raw_exec drivers (restart
// policy, kill signal then SIGKILL after kill_timeout, deployment health, re-attaching
// after a restart without starting a task again).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '@selfstack/config';
import { createLogger } from '@selfstack/logger';
import { waitFor } from '@selfstack/testing';
import { loadAgentConfig } from '../src/agent/agent-config';
import { resolveAllocPath } from '../src/agent/agent-http';
import { AllocRunner, type AllocRecord, type AllocUpdate } from '../src/agent/alloc-runner';
import type { Driver } from '../src/agent/drivers/driver.types';
import { LogRotator } from '../src/agent/drivers/log-rotator';
import { createMockDriver } from '../src/agent/drivers/mock.driver';
import { createRawExecDriver } from '../src/agent/drivers/raw-exec.driver';

jest.setTimeout(60_000);
type Json = Record<string, unknown>;

// Made at load: the drivers below are built when the describe blocks are.
const dir = mkdtempSync(path.join(tmpdir(), 'agent-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agent configuration', () => {
  it('reads the anchor-shaped HCL file, with the environment winning', async () => {
    const file = path.join(dir, 'agent.hcl');
    writeFileSync(
      file,
      `datacenter = "dc2"
name = "worker-1"
data_dir = "${dir}/data"
ports { http = 5999 }
client {
  servers = ["10.0.0.1:4646", "https://s2:4646"]
  node_class = "batch"
  node_pool = "pool-a"
  meta { rack = "r1" }
  options = { "driver.allowlist" = "raw_exec" }
}
`,
    );
    const c = await loadAgentConfig({ SCHEDULER_AGENT_CONFIG: file, SCHEDULER_AGENT_NODE_NAME: 'from-env', SCHEDULER_AGENT_META: 'zone=z1' }, dir);
    expect(c).toMatchObject({
      datacenter: 'dc2',
      nodeName: 'from-env',
      nodeClass: 'batch',
      nodePool: 'pool-a',
      servers: ['http://10.0.0.1:4646', 'https://s2:4646'],
      drivers: ['raw_exec'],
      meta: { rack: 'r1', zone: 'z1' },
      port: 5999,
      stateDir: `${dir}/data/client`,
      allocDir: `${dir}/data/alloc`,
      advertise: '127.0.0.1:5999',
    });
  });

  it('names every problem at once', async () => {
    const err = await loadAgentConfig({ SCHEDULER_AGENT_DRIVERS: 'mock,docker', SCHEDULER_AGENT_PORT: '99999', SCHEDULER_AGENT_SERVERS: 'http://', SCHEDULER_AGENT_WAIT: 'soon' }, dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as Error).message + JSON.stringify((err as ConfigError & { problems?: unknown }).problems ?? '');
    for (const m of ['unknown driver "docker"', 'must be a port number', 'not a server address', 'not a duration']) expect(text).toContain(m);
  });

  it('refuses raw_exec outside its confinement root', async () => {
    const err = await loadAgentConfig({ SCHEDULER_AGENT_DATA_DIR: path.join(dir, 'elsewhere'), SCHEDULER_AGENT_RAW_EXEC_ROOT: path.join(dir, 'scratch') }, dir).catch((e: unknown) => e);
    expect(JSON.stringify((err as ConfigError & { problems?: unknown }).problems)).toContain('raw_exec is confined to');
    const ok = await loadAgentConfig({ SCHEDULER_AGENT_DATA_DIR: path.join(dir, 'scratch', 'agent'), SCHEDULER_AGENT_RAW_EXEC_ROOT: path.join(dir, 'scratch') }, dir);
    expect(ok.rawExecRoot).toBe(path.join(dir, 'scratch'));
  });
});

describe('log rotation', () => {
  it('starts a new file at the size limit and keeps only MaxFiles', () => {
    const logs = path.join(dir, 'logs');
    mkdirSync(logs);
    const r = new LogRotator(logs, 't.stdout', { maxFiles: 2, maxFileBytes: 4 });
    r.write(Buffer.from('abcdefghij'));
    r.close();
    expect(readdirSync(logs).sort()).toEqual(['t.stdout.1', 't.stdout.2']);
    expect(readFileSync(path.join(logs, 't.stdout.1'), 'utf8')).toBe('efgh');
    expect(readFileSync(path.join(logs, 't.stdout.2'), 'utf8')).toBe('ij');
    // A new writer (a restarted task) appends to the newest file.
    const again = new LogRotator(logs, 't.stdout', { maxFiles: 2, maxFileBytes: 4 });
    again.write(Buffer.from('k'));
    again.close();
    expect(readFileSync(path.join(logs, 't.stdout.2'), 'utf8')).toBe('ijk');
  });
});

describe('fs paths', () => {
  it('stay inside the allocation directory', () => {
    const alloc = path.join(dir, 'alloc-x');
    mkdirSync(path.join(alloc, 't', 'local'), { recursive: true });
    writeFileSync(path.join(alloc, 't', 'local', 'f'), 'x');
    symlinkSync('/etc', path.join(alloc, 't', 'out'));
    expect(resolveAllocPath(alloc, 't/local/f')).toBe(path.join(alloc, 't', 'local', 'f'));
    expect(resolveAllocPath(alloc, '/')).toBe(alloc);
    for (const p of ['..', '../x', 't/../../x', '/../etc', 't/local/../../..']) expect(() => resolveAllocPath(alloc, p)).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => resolveAllocPath(alloc, 't/out/passwd')).toThrow(expect.objectContaining({ status: 403 }));
    expect(() => resolveAllocPath(alloc, 'nope')).toThrow(expect.objectContaining({ status: 404 }));
  });
});

describe('allocation runner', () => {
  const logger = createLogger({ service: 'agent-test', silent: true });
  const drivers = new Map<string, Driver>([
    ['mock_driver', createMockDriver()],
    ['raw_exec', createRawExecDriver({ path: process.env['PATH'] ?? '/usr/bin:/bin', stateDir: path.join(dir, 'executors'), executorCommand: [process.execPath, '--import', 'tsx', path.resolve(__dirname, '../src/agent/main.ts'), 'executor'] })],
  ]);

  function runner(alloc: Json, saved?: AllocRecord) {
    const updates: AllocUpdate[] = [];
    let record: AllocRecord | undefined;
    const r = new AllocRunner(
      { drivers, allocRoot: path.join(dir, 'allocs'), persist: (x) => (record = structuredClone(x)), report: (u) => updates.push(structuredClone(u)), logger, datacenter: 'dc1', region: 'global' },
      alloc,
      saved,
    );
    return { r, updates, record: () => record as AllocRecord, last: () => updates.at(-1) as AllocUpdate };
  }

  const alloc = (id: string, task: Json, group: Json = {}, job: Json = {}): Json => ({
    ID: id,
    Name: `j.g[0]`,
    Namespace: 'default',
    TaskGroup: 'g',
    DesiredStatus: 'run',
    CreateTime: Date.now() * 1e6,
    Job: { ID: 'j', Type: 'batch', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', ...task }], ...group }], ...job },
  });
  const types = (u: AllocUpdate) => u.TaskStates['t']?.Events.map((e) => e.Type);

  it('fails a task after its restart attempts (mode fail), with the anchor events', async () => {
    const { r, last } = runner(alloc('a1', { Driver: 'mock_driver', Config: { run_for: '10ms', exit_code: 2 } }, { RestartPolicy: { Attempts: 1, Interval: 60e9, Delay: 10e6, Mode: 'fail' } }));
    r.start(false);
    await waitFor('failed', async () => (last().ClientStatus === 'failed' ? true : undefined));
    expect(types(last())).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Restarting', 'Started', 'Terminated', 'Not Restarting']);
    const state = last().TaskStates['t'];
    expect(state).toMatchObject({ State: 'dead', Failed: true, Restarts: 1 });
    expect(state?.Events.at(-1)).toMatchObject({ RestartReason: 'Exceeded allowed attempts 1 in interval 1m0s and mode is "fail"', FailsTask: true });
    expect(state?.Events[3]).toMatchObject({ ExitCode: 2 });
  });

  it('fails at once on an unrecoverable start error, restarts a recoverable one', async () => {
    const bad = runner(alloc('a2', { Driver: 'mock_driver', Config: { start_error: 'no such thing' } }));
    bad.r.start(false);
    await waitFor('failed', async () => (bad.last().ClientStatus === 'failed' ? true : undefined));
    expect(types(bad.last())).toEqual(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
    const flaky = runner(alloc('a3', { Driver: 'mock_driver', Config: { start_error: 'try again', start_error_recoverable: true } }, { RestartPolicy: { Attempts: 1, Interval: 60e9, Delay: 1e6, Mode: 'fail' } }));
    flaky.r.start(false);
    await waitFor('failed', async () => (flaky.last().ClientStatus === 'failed' ? true : undefined));
    expect(types(flaky.last())).toEqual(['Received', 'Task Setup', 'Driver Failure', 'Restarting', 'Driver Failure', 'Not Restarting']);
  });

  it('fails a task whose driver is not enabled on the node', async () => {
    const { r, last } = runner(alloc('a4', { Driver: 'docker' }));
    r.start(false);
    await waitFor('failed', async () => (last().ClientStatus === 'failed' ? true : undefined));
    expect(last().TaskStates['t']?.Events.at(-1)).toMatchObject({ Type: 'Driver Failure', FailsTask: true });
  });

  it('stops a raw_exec task that ignores SIGTERM with SIGKILL after kill_timeout', async () => {
    const { r, last } = runner(
      alloc('a5', { Driver: 'raw_exec', KillTimeout: 300e6, Config: { command: '/bin/sh', args: ['-c', "trap '' TERM; echo up; while true; do sleep 0.05; done"] } }, {}, { Type: 'service' }),
    );
    r.start(false);
    await waitFor('running', async () => (last().ClientStatus === 'running' ? true : undefined), 30_000);
    await waitFor('output', async () => (readFileSync(path.join(r.dirs.logDir, 't.stdout.0'), 'utf8') === 'up\n' ? true : undefined));
    r.serverUpdate({ ID: 'a5', DesiredStatus: 'stop' });
    await waitFor('complete', async () => (last().ClientStatus === 'complete' ? true : undefined), 30_000);
    expect(types(last())?.slice(-2)).toEqual(['Killing', 'Killed']);
    expect(last().TaskStates['t']?.Events.at(-2)).toMatchObject({ KillTimeout: 300e6, DisplayMessage: 'Sent interrupt. Waiting 300ms before force killing' });
  });

  it('reports deployment health after min_healthy_time, and unhealthy when a task fails first', async () => {
    const update = { MaxParallel: 1, MinHealthyTime: 200e6, HealthyDeadline: 30e9, HealthCheck: 'task_states' };
    const ok = runner({ ...alloc('a6', { Driver: 'mock_driver', Config: {} }, {}, { Type: 'service', Update: update }), DeploymentID: 'd1' });
    ok.r.start(false);
    await waitFor('healthy', async () => (ok.last().DeploymentStatus?.Healthy === true ? true : undefined));
    const bad = runner({ ...alloc('a7', { Driver: 'mock_driver', Config: { run_for: '10ms', exit_code: 1 } }, { RestartPolicy: { Attempts: 0, Interval: 60e9, Delay: 0, Mode: 'fail' } }, { Type: 'service', Update: update }), DeploymentID: 'd1' });
    bad.r.start(false);
    await waitFor('unhealthy', async () => (bad.last().DeploymentStatus?.Healthy === false ? true : undefined));
    ok.r.detach();
  });

  it('re-attaches after a restart: a finished task is never started again, a running one is waited for', async () => {
    const marker = path.join(dir, 'once.txt');
    const a = alloc('a8', { Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', `echo run >> ${marker}; sleep 1`] } });
    const first = runner(a);
    first.r.start(false);
    await waitFor('running', async () => (first.last().ClientStatus === 'running' ? true : undefined), 30_000);
    // The agent goes away: a new runner from the saved record, as after a restart.
    first.r.detach();
    const second = runner(a, first.record());
    second.r.start(true);
    await waitFor('complete', async () => (second.last().ClientStatus === 'complete' ? true : undefined), 30_000);
    expect(readFileSync(marker, 'utf8')).toBe('run\n');
    expect(types(second.last())).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    // And once more: a complete allocation restored does nothing at all.
    const third = runner(a, second.record());
    third.r.start(true);
    expect(third.r.terminal).toBe(true);
    await new Promise((res) => setTimeout(res, 300));
    expect(readFileSync(marker, 'utf8')).toBe('run\n');
  });
});
