// Real processes: a controller and a worker talking gRPC over the cluster listener, the
// ops /health endpoint, sessions handed to the worker, restarts and graceful shutdown.
import { createTestDatabase, type TestDatabase } from '@selfstack/testing';
import { freePort, request, startProcess, waitFor, workerInfo, writeConfig, type ServerProcess } from './process-harness';

jest.setTimeout(120_000);

let db: TestDatabase;
const running: ServerProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null) {
      p.signal('SIGKILL');
      await p.exited;
    }
  }
});

afterAll(async () => {
  await db.drop();
});

function start(configFile: string): ServerProcess {
  const p = startProcess(configFile, { DATABASE_URL: db.url });
  running.push(p);
  return p;
}

interface ControllerPorts {
  api: number;
  cluster: number;
  ops: number;
}

async function controllerPorts(): Promise<ControllerPorts> {
  return { api: await freePort(), cluster: await freePort(), ops: await freePort() };
}

function controllerConfig(ports: ControllerPorts, extra = '', listeners: Array<keyof ControllerPorts> = ['api', 'cluster', 'ops']): string {
  const blocks = listeners.map((purpose) => `listener "tcp" {\n  purpose = "${purpose}"\n  address = "127.0.0.1:${ports[purpose]}"\n}`);
  return `controller {\n  name = "c1"\n  database { url = "env://DATABASE_URL" }\n${extra}\n}\n${blocks.join('\n')}\n`;
}

function workerConfig(clusterPort: number, opsPort: number, extra = ''): string {
  return `worker {\n  name = "w1"\n  initial_upstreams = ["127.0.0.1:${clusterPort}"]\n${extra}\n}\nlistener "tcp" {\n  purpose = "ops"\n  address = "127.0.0.1:${opsPort}"\n}\n`;
}

async function healthy(port: number): Promise<true | undefined> {
  const res = await request(port, '/health');
  return res.status === 200 ? true : undefined;
}

async function createSession(apiPort: number, body: Record<string, unknown>): Promise<{ id: string; status: string; worker_name: string }> {
  const res = await request(apiPort, '/v1/sessions', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return JSON.parse(res.body) as { id: string; status: string; worker_name: string };
}

describe('controller and worker processes', () => {
  it('serves /health, hands sessions to the worker, and survives a controller restart', async () => {
    const ports = await controllerPorts();
    const workerOps = await freePort();
    const controllerFile = writeConfig(controllerConfig(ports));
    let controller = start(controllerFile);
    await waitFor('controller health', () => healthy(ports.ops));

    const health = await request(ports.ops, '/health');
    expect(health.status).toBe(200);
    expect(health.body).toBe('');
    expect(health.headers['content-length']).toBe('0');
    // Only GET/HEAD: other methods are rejected as the anchor's gateway does.
    expect((await request(ports.ops, '/health', { method: 'POST' })).status).toBe(501);
    // A controller-only process has no worker info to give.
    const noWorker = await request(ports.ops, '/health?worker_info=1');
    expect(noWorker.status).toBe(200);
    expect(noWorker.body).toBe('');
    // No worker connected yet: a session cannot be placed.
    const unplaced = await request(ports.api, '/v1/sessions', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(unplaced.status).toBe(503);
    expect(JSON.parse(unplaced.body)).toEqual({ errors: ['no workers are connected to take the session'] });

    const worker = start(writeConfig(workerConfig(ports.cluster, workerOps)));
    const ready = await waitFor('worker READY', async () => {
      const info = await workerInfo(workerOps);
      return info.upstream_connection_state === 'READY' ? info : undefined;
    });
    expect(ready).toEqual({ state: 'active', active_session_count: 0, upstream_connection_state: 'READY' });
    const workerHealth = await request(workerOps, '/health?worker_info=1');
    expect(workerHealth.status).toBe(200);
    expect(workerHealth.headers['content-type']).toBe('application/json');

    // The worker must be registered as connected before the controller picks it.
    await waitFor('worker registered', async () => {
      const res = await request(ports.api, '/v1/workers');
      const items = (JSON.parse(res.body) as { items: Array<{ name: string; connected: boolean }> }).items;
      return items.some((w) => w.name === 'w1' && w.connected) ? true : undefined;
    });
    const s1 = await createSession(ports.api, { worker_name: 'w1', target_id: 'ttcp_1' });
    const s2 = await createSession(ports.api, {});
    expect(s1).toMatchObject({ worker_name: 'w1', status: 'pending' });
    expect(s2.worker_name).toBe('w1');
    await waitFor('two sessions on the worker', async () => ((await workerInfo(workerOps)).active_session_count === 2 ? true : undefined));
    await waitFor('session acknowledged', async () => {
      const res = await request(ports.api, `/v1/sessions/${s1.id}`);
      return (JSON.parse(res.body) as { status: string }).status === 'active' ? true : undefined;
    });

    const cancel = await request(ports.api, `/v1/sessions/${s1.id}:cancel`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(cancel.status).toBe(200);
    expect(JSON.parse(cancel.body)).toMatchObject({ id: s1.id, status: 'canceling' });
    await waitFor('one session left', async () => ((await workerInfo(workerOps)).active_session_count === 1 ? true : undefined));
    await waitFor('session terminated', async () => {
      const res = await request(ports.api, `/v1/sessions/${s1.id}`);
      return (JSON.parse(res.body) as { status: string }).status === 'terminated' ? true : undefined;
    });

    // Kill the controller outright: the worker's channel leaves READY.
    controller.signal('SIGKILL');
    await controller.exited;
    const seen = new Set<string>();
    await waitFor('worker notices the controller is gone', async () => {
      const info = await workerInfo(workerOps);
      seen.add(info.upstream_connection_state);
      return ['TRANSIENT_FAILURE', 'CONNECTING'].includes(info.upstream_connection_state) ? true : undefined;
    });
    expect([...seen].every((s) => ['READY', 'IDLE', 'CONNECTING', 'TRANSIENT_FAILURE'].includes(s))).toBe(true);
    expect((await workerInfo(workerOps)).state).toBe('active');

    // Restart on the same ports: READY again, and the surviving session comes back from the database.
    controller = start(controllerFile);
    await waitFor('worker READY again', async () => ((await workerInfo(workerOps)).upstream_connection_state === 'READY' ? true : undefined));
    await waitFor('session restored', async () => ((await workerInfo(workerOps)).active_session_count === 1 ? true : undefined));

    controller.signal('SIGTERM');
    worker.signal('SIGTERM');
    expect(await controller.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  });

  it('answers 503 for the whole graceful wait while still serving requests, then shuts down', async () => {
    const ports = await controllerPorts();
    const controller = start(writeConfig(controllerConfig(ports, '  graceful_shutdown_wait_duration = "3s"')));
    await waitFor('controller health', () => healthy(ports.ops));
    // Warm the API (first database round trip) so the in-window request measures the window.
    expect((await request(ports.api, '/v1/sessions')).status).toBe(200);

    const t0 = Date.now();
    controller.signal('SIGTERM');
    const first = await waitFor('503', async () => ((await request(ports.ops, '/health')).status === 503 ? Date.now() : undefined), 2000, 20);
    expect(first - t0).toBeLessThan(1500);
    // Requests are still processed during the wait.
    const during = await request(ports.api, '/v1/sessions');
    expect(during.status).toBe(200);
    expect(JSON.parse(during.body)).toEqual({ items: expect.any(Array) });

    let last503 = first;
    let exitedAt = 0;
    void controller.exited.then(() => (exitedAt = Date.now()));
    while (exitedAt === 0) {
      try {
        const res = await request(ports.ops, '/health');
        if (res.status === 503) last503 = Date.now();
        else expect(res.status).toBe(503);
      } catch {
        break; // listener closed: shutdown has begun
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await controller.exited).toBe(0);
    const window = last503 - t0;
    // 503 lasted (nearly) the whole configured wait, and shutdown began right after it.
    expect(window).toBeGreaterThanOrEqual(2500);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3000);
    expect(Date.now() - t0).toBeLessThan(3000 + 5000);
    expect(controller.output()).toContain('Health is enabled, waiting 3s before shutdown');
  });

  it('without a wait, shutdown starts at once', async () => {
    const ports = await controllerPorts();
    const controller = start(writeConfig(controllerConfig(ports)));
    await waitFor('controller health', () => healthy(ports.ops));
    const t0 = Date.now();
    controller.signal('SIGTERM');
    expect(await controller.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2500);
    await expect(request(ports.ops, '/health')).rejects.toThrow();
  });

  it('hides /health unless the process runs a controller with api and ops listeners', async () => {
    const ports = await controllerPorts();
    const controller = start(writeConfig(controllerConfig(ports, '', ['cluster', 'ops'])));
    const metrics = await waitFor('ops listener', async () => {
      const res = await request(ports.ops, '/metrics');
      return res.status === 200 ? res : undefined;
    });
    expect(metrics.body).toContain('process_cpu_user_seconds_total');
    const health = await request(ports.ops, '/health');
    expect(health.status).toBe(404);
    expect(health.body).toBe('');
    controller.signal('SIGTERM');
    expect(await controller.exited).toBe(0);
  });

  it('a worker-only process reports its own state and an unreachable upstream', async () => {
    const deadCluster = await freePort();
    const ops = await freePort();
    const worker = start(writeConfig(workerConfig(deadCluster, ops, '  graceful_shutdown_wait_duration = "1s"')));
    const info = await waitFor('worker info', async () => {
      const i = await workerInfo(ops);
      return ['TRANSIENT_FAILURE', 'CONNECTING'].includes(i.upstream_connection_state) ? i : undefined;
    });
    expect(info.state).toBe('active');
    expect(info.active_session_count).toBe(0);
    const plain = await request(ops, '/health');
    expect(plain.status).toBe(200);
    expect(plain.body).toBe('');

    worker.signal('SIGTERM');
    const during = await waitFor('shutdown state', async () => ((await workerInfo(ops)).state === 'shutdown' ? true : undefined), 900, 20);
    expect(during).toBe(true);
    expect(await worker.exited).toBe(0);
  });

  it('refuses an invalid configuration with a clear message and exit code 2', async () => {
    const file = writeConfig('controller {\n  name = "c"\n  graceful_shutdown_wait_duration = "forever"\n}\nlistener "tcp" { purpose = "cluster" }\n');
    const p = startProcess(file, { DATABASE_URL: db.url });
    running.push(p);
    expect(await p.exited).toBe(2);
    expect(p.output()).toContain(file);
    expect(p.output()).toContain('invalid duration "forever"');
  });
});
