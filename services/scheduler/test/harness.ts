// Integration harness: a fresh database cloned from the migrated template, a Redis bus
// with a per-file prefix, the state store and the app (docs/architecture.md "Tests").
import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { createRedisBus, type Bus } from '@selfstack/bus';
import type { PrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import { createTestDatabase, deleteRedisKeys, testRedisPrefix, testRedisUrl, type TestDatabase } from '@selfstack/testing';
import { buildApp } from '../src/app';
import { openSchedulerDb } from '../src/clients';
import { composeScheduler, type SchedulerConfig } from '../src/compose';
import type { Db, JsonObject } from '../src/shared/common.types';
import type { Pool } from 'pg';
import { createAllocationStore } from '../src/features/allocations/allocations.store';
import type { Allocation } from '../src/features/allocations/allocations.types';
import { createDeploymentStore } from '../src/features/deployments/deployments.store';
import { createEngine, type Engine, type EngineOptions } from '../src/engine/engine';
import type { Deployment } from '../src/features/deployments/deployments.types';

export interface Harness {
  app: Express;
  /** Starts a scheduling engine (broker + timers) over this harness's database and bus. */
  startEngine(options?: Partial<Omit<EngineOptions, 'prisma' | 'state' | 'sql' | 'bus' | 'logger' | 'databaseUrl'>>): Promise<Engine>;
  prisma: PrismaClient;
  /** The node-postgres pool of the point reads (composeScheduler's readPool). */
  readPool: Pool;
  state: StateStore<Db>;
  bus: Bus;
  db: TestDatabase;
  close(): Promise<void>;
  /** Builds another app over the same database and bus (e.g. with ACLs on). */
  appWith(config: Partial<SchedulerConfig>): Express;
  /** A second "process": its own Prisma pool, Redis connections and state store, same database and prefix. */
  sibling(): Promise<{ app: Express; close(): Promise<void> }>;
}

export const BASE_CONFIG: SchedulerConfig = {
  region: 'global',
  datacenter: 'dc1',
  nodeName: 'test-server',
  advertiseAddr: '127.0.0.1:4646',
  aclEnabled: false,
  nodeSecret: '',
  peers: {},
  version: '2.0.6',
};

export async function startHarness(config: Partial<SchedulerConfig> = {}): Promise<Harness> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const logger = createLogger({ service: 'scheduler-test', silent: process.env['SCHEDULER_TEST_LOG'] !== '1' });
  const bus = createRedisBus({ url: testRedisUrl(), prefix, logger });
  const clients = await openSchedulerDb({ databaseUrl: db.url, bus, logger, prismaPoolSize: 20, readPoolSize: 4, engineWorkers: 2 });
  const { prisma, sql, state, readPool } = clients;
  const appWith = (c: Partial<SchedulerConfig>) => buildApp(composeScheduler({ prisma, state, logger, readPool }, { ...BASE_CONFIG, ...config, ...c }));
  const engines: Engine[] = [];
  return {
    app: appWith({}),
    async startEngine(options = {}) {
      const engine = createEngine({ prisma, state, sql, bus, logger, databaseUrl: db.url, pollMs: 1000, ...options });
      await engine.start();
      engines.push(engine);
      return engine;
    },
    prisma,
    readPool,
    state,
    bus,
    db,
    appWith,
    async sibling() {
      const bus2 = createRedisBus({ url: testRedisUrl(), prefix, logger });
      const second = await openSchedulerDb({ databaseUrl: db.url, bus: bus2, logger, prismaPoolSize: 10, readPoolSize: 4 });
      return {
        app: buildApp(composeScheduler({ prisma: second.prisma, state: second.state, logger, readPool: second.readPool }, { ...BASE_CONFIG, ...config })),
        async close() {
          await second.close();
          await bus2.close();
        },
      };
    },
    async close() {
      await Promise.all(engines.map((e) => e.stop()));
      await clients.close();
      await bus.close();
      await deleteRedisKeys(prefix).catch(() => 0);
      await db.drop();
    },
  };
}

export function minimalJob(id: string, extra: JsonObject = {}): JsonObject {
  return {
    ID: id,
    TaskGroups: [{ Name: 'web', Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx' } }] }],
    ...extra,
  };
}

export async function registerJob(app: Express, job: JsonObject, headers: Record<string, string> = {}) {
  const res = await request(app).put('/v1/jobs').set(headers).send({ Job: job });
  if (res.status !== 200) throw new Error(`register ${String(job['ID'])}: ${res.status} ${res.text}`);
  return res.body as JsonObject;
}

export async function registerNode(app: Express, fields: JsonObject = {}, headers: Record<string, string> = {}) {
  const id = randomUUID();
  const res = await request(app)
    .put('/v1/internal/node/register')
    .set(headers)
    .send({
      Node: {
        ID: id,
        SecretID: randomUUID(),
        Name: `node-${id.slice(0, 8)}`,
        Datacenter: 'dc1',
        HTTPAddr: '10.0.0.5:4646',
        Attributes: { 'os.name': 'ubuntu', 'nomad.version': '2.0.6', 'kernel.name': 'linux' },
        Meta: { rack: 'r1' },
        Drivers: { docker: { Attributes: {}, Detected: true, Healthy: true, HealthDescription: 'Healthy', UpdateTime: '2026-11-22T00:00:00Z' } },
        ...fields,
      },
    });
  if (res.status !== 200) throw new Error(`register node: ${res.status} ${res.text}`);
  return id;
}

/** Store-level fixture: an allocation (placement is the next issue's scheduler). */
export async function insertAllocation(h: Harness, a: Partial<Allocation> & { JobID: string; NodeID: string }): Promise<Allocation> {
  const store = createAllocationStore();
  const { result } = await h.state.withWrite(['allocs'], async ({ tx, index, emit }) => {
    const jobRow = await tx.schedulerJob.findUnique({ where: { namespace_id: { namespace: a.Namespace ?? 'default', id: a.JobID } } });
    const job = (jobRow?.data ?? null) as JsonObject | null;
    const alloc: Allocation = {
      ID: randomUUID(),
      EvalID: '',
      Name: `${a.JobID}.web[0]`,
      Namespace: 'default',
      NodeName: 'node',
      Job: job,
      TaskGroup: 'web',
      DesiredStatus: 'run',
      DesiredDescription: '',
      ClientStatus: 'running',
      ClientDescription: '',
      DeploymentID: '',
      DeploymentStatus: null,
      DesiredTransition: { Migrate: null, Reschedule: null, ForceReschedule: null },
      TaskStates: null,
      CreateTime: Date.now() * 1e6,
      ModifyTime: Date.now() * 1e6,
      ...a,
      CreateIndex: index,
      ModifyIndex: index,
    };
    await store.put(tx, alloc);
    emit({ topic: 'Allocation', type: 'PlanResult', key: alloc.ID, namespace: alloc.Namespace, filterKeys: [alloc.JobID, alloc.DeploymentID], payload: { Allocation: { ...alloc, Job: null } } });
    return alloc;
  });
  return result;
}

/** Store-level fixture: a running deployment of a job. */
export async function insertDeployment(h: Harness, jobId: string, over: Partial<Deployment> = {}): Promise<Deployment> {
  const store = createDeploymentStore();
  const { result } = await h.state.withWrite(['deployment'], async ({ tx, index, emit }) => {
    const d: Deployment = {
      ID: randomUUID(),
      Namespace: 'default',
      JobID: jobId,
      JobVersion: 0,
      JobModifyIndex: 0,
      JobSpecModifyIndex: 0,
      JobCreateIndex: 0,
      IsMultiregion: false,
      TaskGroups: {
        web: {
          AutoRevert: false,
          AutoPromote: false,
          ProgressDeadline: 600_000_000_000,
          RequireProgressBy: null,
          Promoted: false,
          PlacedCanaries: null,
          DesiredCanaries: 1,
          DesiredTotal: 2,
          PlacedAllocs: 0,
          HealthyAllocs: 0,
          UnhealthyAllocs: 0,
        },
      },
      Status: 'running',
      StatusDescription: 'Deployment is running',
      EvalPriority: 50,
      CreateTime: Date.now() * 1e6,
      ModifyTime: Date.now() * 1e6,
      ...over,
      CreateIndex: index,
      ModifyIndex: index,
    };
    await store.put(tx, d);
    emit({ topic: 'Deployment', type: 'DeploymentStatusUpdate', key: d.ID, namespace: d.Namespace, filterKeys: [d.JobID], payload: { Deployment: d } });
    return d;
  });
  return result;
}

/** A Nomad-style error (or plain) answer: status, text/plain, exact body. */
export function expectPlain(res: request.Response, status: number, text: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.text).toBe(text);
}

export interface TestNode {
  id: string;
  secret: string;
}

/** A client node registered `ready` with resources and the docker and exec drivers. */
export async function registerReadyNode(app: Express, fields: JsonObject = {}): Promise<TestNode> {
  const id = (typeof fields['ID'] === 'string' ? fields['ID'] : undefined) ?? randomUUID();
  const secret = randomUUID();
  const res = await request(app)
    .put('/v1/internal/node/register')
    .send({
      Node: {
        ID: id,
        SecretID: secret,
        Name: `node-${id.slice(0, 8)}`,
        Datacenter: 'dc1',
        Status: 'ready',
        Attributes: { 'kernel.name': 'linux', 'cpu.arch': 'amd64' },
        NodeResources: { Cpu: { CpuShares: 4000 }, Memory: { MemoryMB: 8192 }, Disk: { DiskMB: 100_000 } },
        Drivers: { docker: { Detected: true, Healthy: true }, exec: { Detected: true, Healthy: true } },
        ...fields,
      },
    });
  if (res.status !== 200) throw new Error(`register node: ${res.status} ${res.text}`);
  return { id, secret };
}

/** Client status reports from a node (POST /v1/internal/node/:id/allocations). */
export function reportAllocs(app: Express, node: TestNode, updates: JsonObject[]) {
  return request(app).post(`/v1/internal/node/${node.id}/allocations`).set('X-Nomad-Token', node.secret).send({ Allocs: updates });
}

/** Waits for an evaluation to reach one of `statuses` and returns it. */
export async function waitForEval(app: Express, id: string, statuses: readonly string[] = ['complete'], timeoutMs = 20_000): Promise<JsonObject> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    const r = await request(app).get(`/v1/evaluation/${id}`);
    last = r.body;
    if (r.status === 200 && statuses.includes(String(r.body.Status))) return r.body as JsonObject;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`evaluation ${id} did not reach ${statuses.join('/')}: ${JSON.stringify(last)}`);
}

/** The allocations of a job (all versions). */
export async function jobAllocs(app: Express, jobId: string): Promise<JsonObject[]> {
  const res = await request(app).get(`/v1/job/${encodeURIComponent(jobId)}/allocations`);
  if (res.status !== 200) throw new Error(`allocations of ${jobId}: ${res.status} ${res.text}`);
  return res.body as JsonObject[];
}
