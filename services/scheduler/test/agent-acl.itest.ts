// The client agent against a server with ACLs enabled (issue 26 items 1-3, 5): it
// registers with the cluster's node secret (no token), then acts only as its node: its
// SecretID reads its allocations (GET /v1/internal/node/:id/allocations), heartbeats and
// reports status; a stranger with no token can do none of that; the server's /v1/client
// routes forward to the agent for a management token and refuse an anonymous caller. The
// server and agent run in this process (the real agent code over real listeners).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '@selfstack/logger';
import { freePortBelowEphemeral, startTestListener, waitFor, type TestListener } from '@selfstack/testing';
import { createClientAgent, type ClientAgent } from '../src/agent/agent';
import type { AgentConfig } from '../src/agent/agent-config';
import { createAgentHttp } from '../src/agent/agent-http';
import { createAgentState } from '../src/agent/agent-state';
import type { Driver } from '../src/agent/drivers/driver.types';
import { createMockDriver } from '../src/agent/drivers/mock.driver';
import { createServerClient } from '../src/agent/server-client';
import { startHarness, type Harness } from './harness';

jest.setTimeout(60_000);
type Json = Record<string, unknown>;
const NODE_SECRET = 'cluster-node-secret';

let h: Harness;
let server: TestListener;
let agent: ClientAgent;
let agentHttp: ReturnType<typeof createAgentHttp>;
let dir = '';
let management = '';

beforeAll(async () => {
  h = await startHarness({ aclEnabled: true, nodeSecret: NODE_SECRET });
  await h.startEngine({ pollMs: 200 });
  server = await startTestListener(h.app);
  management = (await request(h.app).put('/v1/acl/bootstrap').expect(200)).body.SecretID as string;
  dir = mkdtempSync(path.join(tmpdir(), 'agent-acl-'));
  const logger = createLogger({ service: 'agent', silent: true });
  const drivers = new Map<string, Driver>([['mock_driver', createMockDriver()]]);
  const port = await freePortBelowEphemeral();
  const config: AgentConfig = {
    logLevel: 'error',
    servers: [server.url],
    datacenter: 'dc1',
    nodeName: 'acl-agent',
    nodeClass: '',
    nodePool: 'default',
    meta: {},
    stateDir: path.join(dir, 'client'),
    allocDir: path.join(dir, 'alloc'),
    drivers: ['mock_driver'],
    rawExecRoot: '',
    host: '127.0.0.1',
    port,
    advertise: `127.0.0.1:${port}`,
    registrationSecret: NODE_SECRET,
    token: '',
    watchWaitMs: 2_000,
  };
  agent = createClientAgent({ config, logger, state: createAgentState(config.stateDir), server: createServerClient(config.servers), drivers });
  agentHttp = createAgentHttp({ secret: () => agent.identity.secret, runners: agent.runners, allocRoot: config.allocDir, logger });
  await new Promise<void>((r) => agentHttp.listen(port, '127.0.0.1', () => r()));
  await agent.start();
});

afterAll(async () => {
  await agent?.stop();
  await new Promise((r) => agentHttp?.close(r));
  await server?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

const mgmt = () => ({ 'X-Scheduler-Token': management });

it('registers with the cluster secret, runs a job, and serves client endpoints to authorised callers only', async () => {
  const nodeId = agent.identity.id;
  await waitFor('node ready', async () => ((await request(h.app).get(`/v1/node/${nodeId}`).set(mgmt())).body?.Status === 'ready' ? true : undefined));

  // The node's own secret reads its allocations; nobody else without a token does.
  const own = await request(h.app).get(`/v1/internal/node/${nodeId}/allocations`).set('X-Nomad-Token', agent.identity.secret);
  expect(own.status).toBe(200);
  expect(own.headers['x-nomad-index']).toMatch(/^\d+$/);
  const stranger = await request(h.app).get(`/v1/internal/node/${nodeId}/allocations`);
  expect([stranger.status, stranger.text]).toEqual([403, 'Permission denied']);
  expect((await request(h.app).put(`/v1/internal/node/${nodeId}/heartbeat`).send({})).status).toBe(403);

  const job = { ID: 'acl-job', Type: 'service', Datacenters: ['dc1'], TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '0s', stdout_string: 'hello\n' }, Resources: { CPU: 50, MemoryMB: 32 } }] }] };
  expect((await request(h.app).put('/v1/jobs').set(mgmt()).send({ Job: job })).status).toBe(200);
  const alloc = await waitFor('running', async () => {
    const list = (await request(h.app).get('/v1/job/acl-job/allocations').set(mgmt())).body as Json[];
    return list.find((a) => a['ClientStatus'] === 'running');
  }, 20_000);
  const id = String(alloc['ID']);

  const logs = await request(h.app).get(`/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true`).set(mgmt());
  expect([logs.status, logs.text]).toEqual([200, 'hello\n']);
  expect(logs.headers['content-type']).toMatch(/^text\/plain/);
  const anon = await request(h.app).get(`/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true`);
  expect([anon.status, anon.text]).toEqual([403, 'Permission denied']);
  // The node's secret is not a user credential for the client endpoints either.
  const asNode = await request(h.app).get(`/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true`).set('X-Nomad-Token', agent.identity.secret);
  expect(asNode.status).toBe(403);
  const missingNode = await request(h.app).get('/v1/client/stats').set(mgmt());
  expect([missingNode.status, missingNode.text]).toEqual([400, 'missing node_id']);
});

it('streams a running task\'s output with follow=true, through the server', async () => {
  const job = {
    ID: 'ticker',
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '0s', stdout_string: 'tick\n', stdout_repeat: 50, stdout_repeat_duration: '100ms' }, Resources: { CPU: 50, MemoryMB: 32 } }] }],
  };
  expect((await request(h.app).put('/v1/jobs').set(mgmt()).send({ Job: job })).status).toBe(200);
  const alloc = await waitFor('running', async () => ((await request(h.app).get('/v1/job/ticker/allocations').set(mgmt())).body as Json[]).find((a) => a['ClientStatus'] === 'running'), 20_000);
  const abort = new AbortController();
  const res = await fetch(`${server.url}/v1/client/fs/logs/${String(alloc['ID'])}?task=t&type=stdout&follow=true&plain=true`, { headers: { 'X-Nomad-Token': management }, signal: abort.signal });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  // More output arrives while the request is open: the stream follows the task.
  while ((text.match(/tick/g) ?? []).length < 4) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString();
  }
  abort.abort();
  expect(text.startsWith('tick\ntick\ntick\ntick')).toBe(true);
  // Framed, from the end: the newest bytes only.
  const framed = await request(h.app).get(`/v1/client/fs/logs/${String(alloc['ID'])}?task=t&type=stdout&origin=end&offset=5`).set(mgmt());
  expect(framed.status).toBe(200);
  const frame = JSON.parse(framed.text) as { Data: string; File: string };
  expect(Buffer.from(frame.Data, 'base64').toString()).toBe('tick\n');
  expect(frame.File).toBe('alloc/logs/t.stdout.0');
});

it('registers again when the server no longer knows its node (purged, or a server with fresh data)', async () => {
  const nodeId = agent.identity.id;
  expect((await request(h.app).put(`/v1/node/${nodeId}/purge`).set(mgmt())).status).toBe(200);
  const purgedAt = Number((await request(h.app).get('/v1/nodes').set(mgmt())).headers['x-nomad-index']);
  // The next heartbeat is refused (with ACLs on: "ACL token not found", the forgotten
  // secret being no token) and the agent registers the same node again.
  const node = await waitFor('the node back', async () => {
    const r = await request(h.app).get(`/v1/node/${nodeId}`).set(mgmt());
    return r.status === 200 && r.body.Status === 'ready' && Number(r.body.CreateIndex) > purgedAt ? (r.body as Json) : undefined;
  }, 30_000);
  expect(node['Name']).toBe('acl-agent');
});

it('answers 502 "No path to node" when the agent cannot be reached', async () => {
  const nodeId = agent.identity.id;
  const list = (await request(h.app).get('/v1/job/acl-job/allocations').set(mgmt())).body as Json[];
  const id = String(list[0]?.['ID']);
  await new Promise((r) => agentHttp.close(r));
  agentHttp.closeAllConnections();
  const r = await request(h.app).get(`/v1/client/allocation/${id}/stats`).set(mgmt());
  expect(r.status).toBe(502);
  expect(r.text).toMatch(/^No path to node/);
  expect(r.headers['content-type']).toMatch(/^text\/plain/);
  const stats = await request(h.app).get(`/v1/client/stats?node_id=${nodeId}`).set(mgmt());
  expect(stats.status).toBe(502);
});
