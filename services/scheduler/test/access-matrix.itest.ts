// Who may call what (issue 33, item 2): every route x method of the table buildApp mounts
// under /v1 (sweepRoutes) has a row below giving the status each kind of caller gets; a
// route without a row fails the test. Rules: reference workload-scheduler-nomad-api.md §5
// (list-jobs / read-job / submit-job / purge-job (or submit-job) per namespace, node:read /
// node:write, the anonymous policy without a token, 403 for an unknown or expired one),
// the namespace rule (an exact namespace beats a glob; deny wins), and with ACLs off every
// request acts with management rights (as Nomad does). Item 3: a `filter` on /v1/jobs is
// evaluated on the full job for a list-jobs holder, as the anchor does (docs/scheduler.md).
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { forAllowed, groupRows, matrixProblems, runAccessMatrix, startTestListener, sweepRoutes, type AccessExpectations, type AccessMatrix, type AccessRow, type SweepResponse, type TestListener } from '@selfstack/testing';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@selfstack/logger';
import { createAgentHttp } from '../src/agent/agent-http';
import { AllocRunner } from '../src/agent/alloc-runner';
import { insertAllocation, insertDeployment, minimalJob, registerJob, registerNode, startHarness, type Harness } from './harness';

const NODE_SECRET = 'node-secret-for-the-matrix';
const NODE_SECRET_ID = randomUUID();

const CALLERS = [
  'anon-off', // no token, ACLs disabled: management rights
  'anon', // no token, ACLs on: the anonymous policy (list-jobs and read-job in `public`)
  'malformed', // `Authorization: Basic ...` is not a token: anonymous too
  'node-secret', // anonymous plus the X-Scheduler-Node-Secret header
  'unknown', // a SecretID that was never issued
  'expired', // ExpirationTTL ran out
  'management', // the bootstrap token
  'list-jobs', // namespace "default" capabilities, one each
  'read-job',
  'submit-job',
  'purge-job',
  'alloc-lifecycle',
  'deny', // namespace "*" write, namespace "default" deny
  'ns-star', // namespace "*" read
  'wrong-ns', // namespace "other" write only
  'node-read', // node { policy = "read" }
  'node-write',
  'agent', // agent { policy = "read" }
  'operator', // operator { policy = "read" }: no route of this server needs it
  'node', // a client agent: the SecretID of the node it registered, as its token
] as const;
type Caller = (typeof CALLERS)[number];

const RULES: Partial<Record<Caller, string>> = {
  'list-jobs': 'namespace "default" { capabilities = ["list-jobs"] }',
  'read-job': 'namespace "default" { capabilities = ["read-job"] }',
  'submit-job': 'namespace "default" { capabilities = ["submit-job"] }',
  'purge-job': 'namespace "default" { capabilities = ["purge-job"] }',
  'alloc-lifecycle': 'namespace "default" { capabilities = ["alloc-lifecycle"] }',
  deny: 'namespace "*" { policy = "write" }\nnamespace "default" { policy = "deny" }',
  'ns-star': 'namespace "*" { policy = "read" }',
  'wrong-ns': 'namespace "other" { policy = "write" }',
  'node-read': 'node { policy = "read" }',
  'node-write': 'node { policy = "write" }',
  agent: 'agent { policy = "read" }',
  operator: 'operator { policy = "read" }',
};

let h: Harness;
let on: TestListener;
let off: TestListener;
let management = '';
const secrets = {} as Record<Caller, string>;
const ids = { node: '', alloc: '', evaluation: '', deployment: '', accessor: '', agentNode: '', clientAlloc: '' };
// A client agent's listener (the real one, src/agent/agent-http.ts) for the /v1/client
// routes the server forwards: its node and one allocation on it.
const AGENT_SECRET = randomUUID();
let agentDir = '';
let agentServer: ReturnType<typeof createAgentHttp> | undefined;

const mgmt = () => ({ 'X-Scheduler-Token': management });
async function ok(res: request.Test, what: string): Promise<request.Response> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}
const newToken = async (body: object) => (await ok(request(h.app).put('/v1/acl/token').set(mgmt()).send(body), 'token')).body as { SecretID: string; AccessorID: string };

beforeAll(async () => {
  h = await startHarness({ aclEnabled: true, nodeSecret: NODE_SECRET });
  on = await startTestListener(h.app);
  off = await startTestListener(h.appWith({ aclEnabled: false }));
  management = (await ok(request(h.app).put('/v1/acl/bootstrap'), 'bootstrap')).body.SecretID as string;
  for (const [caller, rules] of Object.entries(RULES)) await ok(request(h.app).put(`/v1/acl/policy/${caller}`).set(mgmt()).send({ Rules: rules }), `policy ${caller}`);
  await ok(request(h.app).put('/v1/acl/policy/anonymous').set(mgmt()).send({ Rules: 'namespace "public" { capabilities = ["list-jobs", "read-job"] }' }), 'anonymous policy');
  secrets.expired = (await newToken({ Type: 'client', Policies: ['read-job'], ExpirationTTL: '1s' })).SecretID;
  for (const caller of Object.keys(RULES) as Caller[]) {
    const t = await newToken({ Name: caller, Type: 'client', Policies: [caller] });
    secrets[caller] = t.SecretID;
    if (caller === 'read-job') ids.accessor = t.AccessorID;
  }
  secrets.management = management;
  secrets.unknown = randomUUID();
  for (const ns of ['public', 'other']) await ok(request(h.app).put(`/v1/namespace/${ns}`).set(mgmt()).send({}), `namespace ${ns}`);
  await registerJob(
    h.app,
    minimalJob('web', { Meta: { owner: 'team-a' }, TaskGroups: [{ Name: 'web', Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx' }, Env: { DB_PASSWORD: 'hunter2' } }] }] }),
    mgmt(),
  );
  await registerJob(h.app, minimalJob('pub', { Namespace: 'public' }), mgmt());
  await registerJob(h.app, minimalJob('elsewhere', { Namespace: 'other' }), mgmt());
  ids.node = await registerNode(h.app, { SecretID: NODE_SECRET_ID }, mgmt());
  secrets.node = NODE_SECRET_ID;
  // A parameterized and a periodic job for dispatch and periodic/force.
  await registerJob(h.app, minimalJob('param', { Type: 'batch', ParameterizedJob: { Payload: 'optional' } }), mgmt());
  await registerJob(h.app, minimalJob('scaled'), mgmt());
  ids.alloc = (await insertAllocation(h, { JobID: 'web', NodeID: ids.node })).ID;
  ids.deployment = (await insertDeployment(h, 'web')).ID;
  agentDir = mkdtempSync(path.join(tmpdir(), 'matrix-agent-'));
  const runners = new Map<string, AllocRunner>();
  agentServer = createAgentHttp({ secret: () => AGENT_SECRET, runners, allocRoot: agentDir, logger: createLogger({ service: 'agent', silent: true }) });
  await new Promise<void>((r) => agentServer?.listen(0, '127.0.0.1', () => r()));
  const agentPort = (agentServer.address() as AddressInfo).port;
  ids.agentNode = await registerNode(h.app, { SecretID: AGENT_SECRET, HTTPAddr: `127.0.0.1:${agentPort}` }, mgmt());
  const clientAlloc = await insertAllocation(h, { JobID: 'web', NodeID: ids.agentNode });
  ids.clientAlloc = clientAlloc.ID;
  const runner = new AllocRunner({ drivers: new Map(), allocRoot: agentDir, persist: () => undefined, report: () => undefined, logger: createLogger({ service: 'agent', silent: true }), datacenter: 'dc1', region: 'global' }, clientAlloc);
  runners.set(clientAlloc.ID, runner);
  mkdirSync(runner.dirs.logDir, { recursive: true });
  writeFileSync(path.join(runner.dirs.logDir, 'server.stdout.0'), 'hello\n');
  ids.evaluation = ((await ok(request(h.app).get('/v1/job/web/evaluations').set(mgmt()), 'evals')).body as { ID: string }[])[0]?.ID ?? '';
  // The expired token is refused before the matrix starts.
  const deadline = Date.now() + 10_000;
  while ((await request(h.app).get('/v1/acl/token/self').set('X-Scheduler-Token', secrets.expired)).status !== 403) {
    if (Date.now() > deadline) throw new Error('expired token still accepted');
    await new Promise((r) => setTimeout(r, 100));
  }
});
afterAll(async () => {
  await new Promise((r) => (agentServer ? agentServer.close(r) : r(undefined)));
  if (agentDir) rmSync(agentDir, { recursive: true, force: true });
  await on?.close();
  await off?.close();
  await h?.close();
});

function headersOf(caller: Caller): Record<string, string> {
  switch (caller) {
    case 'anon-off':
    case 'anon':
      return {};
    case 'malformed':
      return { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` };
    case 'node-secret':
      return { 'X-Scheduler-Node-Secret': NODE_SECRET };
    default:
      return { 'X-Scheduler-Token': secrets[caller] };
  }
}

/** `status` for management (and ACLs off) plus `callers`; 403 for everyone else. */
const allow = (status: number, ...callers: Caller[]): AccessExpectations<Caller> => ({
  other: 403,
  'anon-off': status,
  management: status,
  ...Object.fromEntries(callers.map((c) => [c, status])),
});
/** Every caller whose token resolves (or who sent none) gets `status`; unknown/expired 403. */
const anyIdentity = (status: number): AccessExpectations<Caller> => ({ other: status, unknown: 403, expired: 403 });
const ANONYMOUS: Caller[] = ['anon', 'malformed', 'node-secret'];
// Who holds which capability in the `default` namespace.
const LIST = ['list-jobs', 'ns-star'] as const;
const READ = ['read-job', 'ns-star'] as const;
const ANY_NS_CAP = ['list-jobs', 'read-job', 'submit-job', 'purge-job', 'alloc-lifecycle', 'ns-star'] as const;

const disposableToken = async () => ({ path: `/v1/acl/token/${(await newToken({ Type: 'client', Policies: ['agent'] })).AccessorID}` });
const per = (prefix: string) => ({ caller, method }: { caller: Caller; method: string }) => `${prefix}-${caller}-${method.toLowerCase()}`;
const ID = () => ids;

const ROWS: AccessRow<Caller>[] = [
  // Jobs (reference §1, §5).
  { route: 'GET,HEAD /v1/jobs', expect: allow(200, ...LIST), note: 'list-jobs in the namespace asked for' },
  { route: 'GET,HEAD /v1/jobs', path: '/v1/jobs?namespace=public', expect: allow(200, ...ANONYMOUS, 'ns-star', 'deny') },
  { route: 'GET,HEAD /v1/jobs', path: '/v1/jobs?namespace=*', expect: anyIdentity(200), note: 'all namespaces: filtered to what the caller may list' },
  { route: 'PUT,POST /v1/jobs', body: (c) => ({ Job: minimalJob(per('reg')(c)) }), expect: allow(200, 'submit-job') },
  { route: 'PUT,POST /v1/jobs', body: (c) => ({ Job: minimalJob(per('reg')(c), { Namespace: 'other' }) }), expect: allow(200, 'deny', 'wrong-ns') },
  { route: 'GET,HEAD /v1/job/+id', path: '/v1/job/web', expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/job/+id', path: '/v1/job/elsewhere?namespace=other', expect: allow(200, 'ns-star', 'deny', 'wrong-ns') },
  { route: 'PUT,POST /v1/job/+id', path: (c) => `/v1/job/${per('upd')(c)}`, body: (c) => ({ Job: minimalJob(per('upd')(c)) }), expect: allow(200, 'submit-job') },
  {
    route: 'DELETE /v1/job/+id',
    path: (c) => `/v1/job/${per('stop')(c)}`,
    setup: forAllowed(async (c) => void (await registerJob(h.app, minimalJob(per('stop')(c)), mgmt()))),
    expect: allow(200, 'submit-job'),
    note: 'stop: submit-job',
  },
  {
    route: 'DELETE /v1/job/+id',
    path: (c) => `/v1/job/${per('purge')(c)}?purge=true`,
    setup: forAllowed(async (c) => void (await registerJob(h.app, minimalJob(per('purge')(c)), mgmt()))),
    expect: allow(200, 'submit-job', 'purge-job'),
    note: 'purge: purge-job or submit-job',
  },
  ...['versions', 'allocations', 'evaluations', 'deployments', 'deployment', 'summary'].map(
    (sub): AccessRow<Caller> => ({ route: `GET,HEAD /v1/job/+id/${sub}`, path: `/v1/job/web/${sub}`, expect: allow(200, ...READ) }),
  ),

  // Nodes (reference §2): node:read / node:write; registration: management, node:write or
  // the cluster node secret for a new node, the node's own SecretID for an existing one.
  { route: 'GET,HEAD /v1/nodes', expect: allow(200, 'node-read', 'node-write') },
  { route: 'GET,HEAD /v1/node/:id', path: () => `/v1/node/${ID().node}`, expect: allow(200, 'node-read', 'node-write') },
  { route: 'GET,HEAD /v1/node/:id/allocations', path: () => `/v1/node/${ID().node}/allocations`, expect: allow(200, 'node-read', 'node-write'), note: 'then filtered by read-job' },
  { route: 'PUT,POST /v1/node/:id/drain', path: () => `/v1/node/${ID().node}/drain`, body: { DrainSpec: null }, expect: allow(200, 'node-write') },
  { route: 'PUT,POST /v1/node/:id/eligibility', path: () => `/v1/node/${ID().node}/eligibility`, body: { Eligibility: 'eligible' }, expect: allow(200, 'node-write') },
  {
    route: 'PUT,POST /v1/node/:id/purge',
    // The ACL check comes first; each allowed caller purges a node of its own.
    path: () => `/v1/node/${ID().node}/purge`,
    setup: forAllowed(async () => ({ path: `/v1/node/${await registerNode(h.app, {}, mgmt())}/purge` })),
    expect: allow(200, 'node-write'),
  },
  {
    route: 'PUT,POST /v1/internal/node/register',
    body: () => ({ Node: { ID: randomUUID(), SecretID: randomUUID(), Name: 'n', Datacenter: 'dc1', HTTPAddr: '10.0.0.9:4646' } }),
    expect: { management: 200, 'node-write': 200, 'node-secret': 200, other: 403 },
    note: 'a new node: management or node:write, or the cluster node secret (with one configured, ACLs off still need it)',
  },
  {
    route: 'PUT,POST /v1/internal/node/register',
    body: () => ({ Node: { ID: ID().node, SecretID: randomUUID(), Name: 'n', Datacenter: 'dc1', HTTPAddr: '10.0.0.9:4646' } }),
    expect: { other: 403 },
    note: 'an existing node with another SecretID: refused to everyone, management included',
  },
  {
    route: 'PUT,POST /v1/internal/node/register',
    body: () => ({ Node: { ID: ID().node, SecretID: NODE_SECRET_ID, Name: 'n', Datacenter: 'dc1', HTTPAddr: '10.0.0.9:4646', Status: 'ready' } }),
    expect: { ...anyIdentity(200) },
    note: 'an existing node with its own SecretID: whoever holds the secret is the node',
  },
  {
    route: 'PUT,POST /v1/internal/node/:id/heartbeat',
    path: () => `/v1/internal/node/${ID().node}/heartbeat`,
    body: {},
    expect: { management: 200, node: 200, other: 403 },
    note: "the node's own SecretID as the token, or management with ACLs on",
  },

  // Allocations, evaluations, deployments (reference §3, §4): read-job to read; stopping
  // an allocation needs alloc-lifecycle; deployment actions need submit-job.
  { route: 'GET,HEAD /v1/allocations', expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/allocation/:id', path: () => `/v1/allocation/${ID().alloc}`, expect: allow(200, ...READ) },
  {
    route: 'PUT,POST /v1/allocation/:id/stop',
    // The allocation is looked up before the ACL check: denials go to the shared one.
    path: () => `/v1/allocation/${ID().alloc}/stop`,
    setup: forAllowed(async () => ({ path: `/v1/allocation/${(await insertAllocation(h, { JobID: 'web', NodeID: ids.node })).ID}/stop` })),
    expect: allow(200, 'alloc-lifecycle'),
  },
  { route: 'GET,HEAD /v1/evaluations', expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/evaluation/:id', path: () => `/v1/evaluation/${ID().evaluation}`, expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/evaluation/:id/allocations', path: () => `/v1/evaluation/${ID().evaluation}/allocations`, expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/deployments', expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/deployment/:id', path: () => `/v1/deployment/${ID().deployment}`, expect: allow(200, ...READ) },
  { route: 'GET,HEAD /v1/deployment/allocations/:id', path: () => `/v1/deployment/allocations/${ID().deployment}`, expect: allow(200, ...READ) },
  ...(
    [
      ['fail', {}],
      ['pause', { Pause: true }],
      ['promote', { All: true }],
      ['allocation-health', {}],
    ] as const
  ).map(
    ([action, body]): AccessRow<Caller> => ({
      route: `PUT,POST /v1/deployment/${action}/:id`,
      // The deployment is looked up before the ACL check: denials go to the shared one.
      path: () => `/v1/deployment/${action}/${ID().deployment}`,
      body: () => ({ DeploymentID: ID().deployment, ...body }),
      setup: forAllowed(async () => {
        const id = (await insertDeployment(h, 'web')).ID;
        const health = action === 'allocation-health' ? { HealthyAllocationIDs: [(await insertAllocation(h, { JobID: 'web', NodeID: ids.node, DeploymentID: id })).ID] } : {};
        return { path: `/v1/deployment/${action}/${id}`, body: { DeploymentID: id, ...body, ...health } };
      }),
      expect: allow(200, 'submit-job'),
    }),
  ),

  // Namespaces: any capability in a namespace shows it; writes need management.
  { route: 'GET,HEAD /v1/namespaces', expect: anyIdentity(200), note: 'filtered to the namespaces the caller has a capability in' },
  { route: 'GET,HEAD /v1/namespace/:name', path: '/v1/namespace/default', expect: allow(200, ...ANY_NS_CAP) },
  { route: 'GET,HEAD /v1/namespace/:name', path: '/v1/namespace/public', expect: allow(200, ...ANONYMOUS, 'ns-star', 'deny') },
  { route: 'PUT,POST /v1/namespace', body: (c) => ({ Name: per('ns')(c) }), expect: allow(200) },
  { route: 'PUT,POST /v1/namespace/:name', path: (c) => `/v1/namespace/${per('nsp')(c)}`, body: {}, expect: allow(200) },
  {
    route: 'DELETE /v1/namespace/:name',
    path: (c) => `/v1/namespace/${per('nsd')(c)}`,
    setup: forAllowed(async (c) => void (await ok(request(h.app).put(`/v1/namespace/${per('nsd')(c)}`).set(mgmt()).send({}), 'namespace to delete'))),
    expect: allow(200),
  },

  // ACL administration: management only; a client token may read its own token and the
  // policies attached to it.
  {
    route: 'PUT,POST /v1/acl/bootstrap',
    expect: { ...anyIdentity(400) },
    note: 'anyone may try; it is done already (ACLs off: "ACL support disabled")',
  },
  { route: 'GET,HEAD /v1/acl/policies', expect: allow(200) },
  { route: 'GET,HEAD /v1/acl/policy/:name', path: '/v1/acl/policy/read-job', expect: allow(200, 'read-job'), note: 'its own policy' },
  { route: 'PUT,POST /v1/acl/policy/:name', path: (c) => `/v1/acl/policy/${per('pol')(c)}`, body: { Rules: 'node { policy = "read" }' }, expect: allow(200) },
  {
    route: 'DELETE /v1/acl/policy/:name',
    path: (c) => `/v1/acl/policy/${per('pold')(c)}`,
    setup: forAllowed(async (c) => void (await ok(request(h.app).put(`/v1/acl/policy/${per('pold')(c)}`).set(mgmt()).send({ Rules: 'node { policy = "read" }' }), 'policy to delete'))),
    expect: allow(200),
  },
  { route: 'GET,HEAD /v1/acl/tokens', expect: allow(200) },
  { route: 'PUT,POST /v1/acl/token', body: { Type: 'client', Policies: ['read-job'] }, expect: allow(200) },
  {
    route: 'GET,HEAD /v1/acl/token/self',
    expect: { ...anyIdentity(200), 'anon-off': 404, anon: 404, malformed: 404, 'node-secret': 404, node: 404 },
    note: 'no token, no self: 404',
  },
  { route: 'GET,HEAD /v1/acl/token/:accessor', path: () => `/v1/acl/token/${ID().accessor}`, expect: allow(200, 'read-job'), note: 'its own token' },
  { route: 'PUT,POST /v1/acl/token/:accessor', path: () => `/v1/acl/token/${ID().accessor}`, setup: forAllowed(disposableToken), body: { Name: 'renamed' }, expect: allow(200) },
  { route: 'DELETE /v1/acl/token/:accessor', path: () => `/v1/acl/token/${ID().accessor}`, setup: forAllowed(disposableToken), expect: allow(200) },

  // Agent and status: members need node:read, self agent:read; status and regions anyone
  // whose token resolves (an unknown or expired token is refused everywhere).
  { route: 'GET,HEAD /v1/agent/members', expect: allow(200, 'node-read', 'node-write') },
  { route: 'GET,HEAD /v1/agent/self', expect: allow(200, 'agent') },
  { route: 'GET,HEAD /v1/status/leader', expect: anyIdentity(200) },
  { route: 'GET,HEAD /v1/status/peers', expect: anyIdentity(200) },
  { route: 'GET,HEAD /v1/regions', expect: anyIdentity(200) },

  // Job operations (issue 25; reference §1.2): read-job-scaling or read-job to read the
  // scale status; scale-job or submit-job to scale; dispatch-job to dispatch; submit-job to
  // force a periodic launch, plan, revert and evaluate; read-job (or submit-job) to
  // validate; parse-job (or read-job, submit-job) to parse.
  { route: 'GET,HEAD /v1/job/+id/scale', path: '/v1/job/scaled/scale', expect: allow(200, ...READ) },
  // (`web` has a deployment running, which blocks scaling.)
  { route: 'PUT,POST /v1/job/+id/scale', path: '/v1/job/scaled/scale', body: { Count: 1, Target: { Group: 'web' }, Message: 'matrix' }, expect: allow(200, 'submit-job') },
  { route: 'PUT,POST /v1/job/+id/dispatch', path: '/v1/job/param/dispatch', body: {}, expect: allow(200) },
  {
    route: 'PUT,POST /v1/job/+id/periodic/force',
    // One periodic job per cell: launches are named by the second.
    path: '/v1/job/cron/periodic/force',
    setup: forAllowed(async (c) => {
      await registerJob(h.app, minimalJob(per('cron')(c), { Type: 'batch', Periodic: { Enabled: true, Spec: '*/15 * * * *' } }), mgmt());
      return { path: `/v1/job/${per('cron')(c)}/periodic/force` };
    }),
    expect: allow(200, 'submit-job'),
  },
  { route: 'PUT,POST /v1/job/+id/plan', path: '/v1/job/web/plan', body: { Job: minimalJob('web') }, expect: allow(200, 'submit-job') },
  {
    route: 'PUT,POST /v1/job/+id/revert',
    path: (c) => `/v1/job/${per('rev')(c)}/revert`,
    setup: forAllowed(async (c) => {
      await registerJob(h.app, minimalJob(per('rev')(c)), mgmt());
      await registerJob(h.app, minimalJob(per('rev')(c), { Meta: { v: '2' } }), mgmt());
    }),
    body: { JobVersion: 0 },
    expect: allow(200, 'submit-job'),
  },
  { route: 'PUT,POST /v1/job/+id/evaluate', path: '/v1/job/web/evaluate', body: {}, expect: allow(200, 'submit-job') },
  { route: 'PUT,POST /v1/validate/job', body: { Job: minimalJob('validated') }, expect: allow(200, ...READ, 'submit-job') },
  { route: 'PUT,POST /v1/jobs/parse', body: { JobHCL: 'job "parsed" {\n  group "g" {\n    task "t" {\n      driver = "docker"\n    }\n  }\n}\n' }, expect: allow(200, ...READ, 'submit-job') },
  // Client agents report their allocations with the node's own SecretID (management with
  // ACLs on); with ACLs off only the node secret is accepted.
  // The agent's allocation watch: its own SecretID (a management token with ACLs on).
  {
    route: 'GET,HEAD /v1/internal/node/:id/allocations',
    path: () => `/v1/internal/node/${ID().node}/allocations`,
    expect: { management: 200, node: 200, other: 403 },
  },
  {
    route: 'PUT,POST /v1/internal/node/:id/allocations',
    path: () => `/v1/internal/node/${ID().node}/allocations`,
    body: () => ({ Allocs: [{ ID: ID().alloc, ClientStatus: 'running' }] }),
    expect: { management: 200, node: 200, other: 403 },
  },

  // Client endpoints (issue 26; reference §5): forwarded to the agent running the
  // allocation once the caller holds read-logs (logs), read-fs (ls, stat, cat), read-job
  // (allocation stats) or alloc-lifecycle (restart) in its namespace; host stats need
  // node:read. A node's own secret is no user credential.
  {
    route: 'GET,HEAD /v1/client/fs/logs/:alloc',
    path: () => `/v1/client/fs/logs/${ID().clientAlloc}?task=server&type=stdout&plain=true`,
    expect: allow(200),
    note: 'read-logs: in the write policy, not read',
  },
  ...(['ls', 'stat', 'cat'] as const).map(
    (op): AccessRow<Caller> => ({
      route: `GET,HEAD /v1/client/fs/${op}/:alloc`,
      path: () => `/v1/client/fs/${op}/${ID().clientAlloc}?path=${op === 'ls' ? '/' : 'alloc/logs/server.stdout.0'}`,
      expect: allow(200),
      note: 'read-fs',
    }),
  ),
  { route: 'GET,HEAD /v1/client/allocation/:alloc/stats', path: () => `/v1/client/allocation/${ID().clientAlloc}/stats`, expect: allow(200, ...READ) },
  { route: 'PUT,POST /v1/client/allocation/:alloc/restart', path: () => `/v1/client/allocation/${ID().clientAlloc}/restart`, body: {}, expect: allow(200, 'alloc-lifecycle') },
  { route: 'GET,HEAD /v1/client/stats', path: () => `/v1/client/stats?node_id=${ID().agentNode}`, expect: allow(200, 'node-read', 'node-write') },

  // Event stream (spec "Required ACL per topic"): management for all topics and the ACL
  // topics; read-job in the namespace for job-related topics (namespace=*: a policy for
  // all namespaces); node:read for Node. Decided before any data.
  { route: 'GET,HEAD /v1/event/stream', expect: allow(200), note: 'no topic: every topic, management only' },
  { route: 'GET,HEAD /v1/event/stream', path: '/v1/event/stream?topic=ACLToken', expect: allow(200) },
  { route: 'GET,HEAD /v1/event/stream', path: '/v1/event/stream?topic=Job&topic=Allocation&topic=Evaluation&topic=Deployment', expect: allow(200, ...READ) },
  // A policy for namespace "*" applies to all namespaces (events of a denied one are
  // filtered out one by one: test/event-stream.itest.ts).
  { route: 'GET,HEAD /v1/event/stream', path: '/v1/event/stream?topic=Job&namespace=*', expect: allow(200, 'ns-star', 'deny') },
  { route: 'GET,HEAD /v1/event/stream', path: '/v1/event/stream?topic=Job&namespace=other', expect: allow(200, 'ns-star', 'deny', 'wrong-ns') },
  { route: 'GET,HEAD /v1/event/stream', path: '/v1/event/stream?topic=Job&namespace=public', expect: allow(200, ...ANONYMOUS, 'ns-star', 'deny') },
  { route: 'GET,HEAD /v1/event/stream', path: '/v1/event/stream?topic=Node&topic=NodeDrain', expect: allow(200, 'node-read', 'node-write') },
];

/** Nomad's plain-text errors (reference §0); a 404 for an unknown route has no body. */
function nomadShape(res: SweepResponse): string | undefined {
  const ct = String(res.headers['content-type'] ?? '');
  if (!ct.startsWith('text/plain')) return `content-type ${ct || '(none)'}`;
  if (res.text.trimStart().startsWith('{')) return 'JSON body';
  return undefined;
}

/** An unknown or expired token says so; a policy denial says `Permission denied`. */
function refusalMessage(cell: { caller: Caller; method: string }, res: SweepResponse): string | undefined {
  if (res.status !== 403 || cell.method === 'HEAD') return undefined;
  const want = cell.caller === 'unknown' ? 'ACL token not found' : cell.caller === 'expired' ? 'ACL token expired' : 'Permission denied';
  return res.text === want ? undefined : `refusal ${JSON.stringify(res.text)}, want ${JSON.stringify(want)}`;
}

/** Jobs; nodes, agent and status; allocations, evaluations, deployments; namespaces and ACLs. */
function groupOf(pattern: string): string {
  const first = pattern.split('/')[2] ?? '';
  if (first === 'jobs' || first === 'job') return 'job';
  if (['allocations', 'allocation', 'evaluations', 'evaluation', 'deployments', 'deployment'].includes(first)) return 'allocation, evaluation, deployment';
  if (first === 'namespaces' || first === 'namespace' || first === 'acl') return 'namespace and ACL';
  if (first === 'event') return 'event stream';
  return 'node, agent, status';
}

const matrix = (): AccessMatrix<Caller> => ({ routes: sweepRoutes(h.app), callers: CALLERS, rows: ROWS });

describe('scheduler access matrix', () => {
  it('has a row for every declared route and method, and an expectation for every caller', () => {
    expect(matrixProblems(matrix())).toEqual([]);
  });

  it.each(groupRows(ROWS, groupOf))('answers every caller as the table says: %s routes', async (group, rows) => {
    const result = await runAccessMatrix(
      { ...matrix(), rows },
      { baseUrl: (caller) => (caller === 'anon-off' ? off.url : on.url), auth: headersOf, denialShape: nomadShape, check: refusalMessage },
    );
    console.log(`scheduler access matrix, ${group} routes: ${result.cells} cells, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
  });
});

describe('item 3: what list-jobs exposes through `filter`', () => {
  // The anchor evaluates a list filter on the full job, not on the stub it returns
  // (reference §7; nomad/job_endpoint.go List), so a list-jobs token can test any field
  // of a job it may list (docs/scheduler.md "Who may call what").
  const list = (filter: string, secret: string) => request(h.app).get(`/v1/jobs?filter=${encodeURIComponent(filter)}`).set('X-Scheduler-Token', secret);

  it('matches on fields the stub does not carry, for a token with list-jobs alone', async () => {
    const hit = await list('Meta.owner == "team-a"', secrets['list-jobs']);
    expect(hit.status).toBe(200);
    expect((hit.body as { ID: string; Meta?: unknown }[]).map((j) => j.ID)).toEqual(['web']);
    expect((hit.body as { Meta?: unknown }[])[0]?.Meta).toBeUndefined();
    const miss = await list('Meta.owner == "team-b"', secrets['list-jobs']);
    expect(miss.status).toBe(200);
    expect(miss.body).toEqual([]);
    // A task's environment, one guess at a time.
    const env = (guess: string) => list(`"/TaskGroups/0/Tasks/0/Env/DB_PASSWORD" == "${guess}"`, secrets['list-jobs']);
    expect(((await env('hunter2')).body as { ID: string }[]).map((j) => j.ID)).toEqual(['web']);
    expect((await env('swordfish')).body).toEqual([]);
    // The same token may not read the job itself.
    expect((await request(h.app).get('/v1/job/web').set('X-Scheduler-Token', secrets['list-jobs'])).status).toBe(403);
  });

  it('never lists (or matches) jobs of namespaces the caller may not list', async () => {
    const all = await request(h.app).get('/v1/jobs?namespace=*&filter=' + encodeURIComponent('ID != ""')).set('X-Scheduler-Token', secrets['list-jobs']);
    expect(all.status).toBe(200);
    expect(new Set((all.body as { Namespace: string }[]).map((j) => j.Namespace))).toEqual(new Set(['default']));
  });
});
