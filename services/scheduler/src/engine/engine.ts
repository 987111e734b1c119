// The scheduling engine of one scheduler process (issue 25; docs/scheduler.md
// "Scheduling"): the evaluation broker's worker slots, and the timers of the deployment
// watcher (progress deadlines) and the periodic dispatcher. Any number of processes may
// run one against the same database: evaluations and launches are claimed, never shared.
import type { Bus } from '@selfstack/bus';
import type { PrismaClient } from '@selfstack/db';
import type { Logger } from '@selfstack/logger';
import type { StateStore } from '@selfstack/state';
import { createDeploymentStore } from '../features/deployments/deployments.store';
import { createEvaluationStore } from '../features/evaluations/evaluations.store';
import { createJobStore } from '../features/jobs/jobs.store';
import type { Node } from '../features/nodes/nodes.types';
import { systemClock, type Clock, type Db } from '../shared/common.types';
import type { SqlClient } from '../shared/sql-client.store';
import { BROKER_TABLES, createBroker, type BrokerDeps } from './broker';
import { createWakeSignal, type WakeSignal } from './wake-signal';
import { createEngineStore } from './engine.store';
import type { ProcessorDeps } from './eval-processor';
import { createPlanApplier } from './plan-applier';
import { createDeploymentWatcher } from './deployment-watcher';
import { createPeriodicDispatcher } from './periodic';
import { refreshJobState } from './job-state';
import { TABLES } from '../shared/common.types';

export interface EngineOptions {
  prisma: PrismaClient;
  /** The state store, with `sql` as its SQL client (plans and settlements are raw writes). */
  state: StateStore<Db>;
  /** The process's raw-SQL client (shared/sql-client.store.ts): the broker's and the planners' reads. */
  sql: SqlClient;
  /** The bus the state store publishes its wake-ups on. */
  bus: Bus;
  /** The state store's bus channel (createStateStore's `channel`). */
  stateChannel?: string;
  logger: Logger;
  databaseUrl: string;
  clock?: Clock;
  /** Evaluations processed concurrently by this process (default 2). */
  workers?: number;
  /** Jobs a worker slot plans and commits together (default 8; 1 = one at a time). */
  batch?: number;
  /** Safety poll of the broker and the timers (ms, default 5000). */
  pollMs?: number;
  onProcessed?: BrokerDeps['onProcessed'];
}

export function createEngine(options: EngineOptions) {
  const clock = options.clock ?? systemClock;
  const engineStore = createEngineStore();
  const jobStore = createJobStore();
  const evalStore = createEvaluationStore();
  const deploymentStore = createDeploymentStore();
  const workers = options.workers ?? 2;
  const applier = createPlanApplier({ state: options.state, jobStore, evalStore, deploymentStore, engineStore, clock });

  // Nodes change rarely compared with evaluations: one load per nodes-table index.
  let nodeCache: { index: number; nodes: Promise<Node[]> } | null = null;
  const nodesAt = (index: number): Promise<Node[]> => {
    if (nodeCache && nodeCache.index === index) return nodeCache.nodes;
    const nodes = engineStore.nodes(options.sql.db);
    const entry = { index, nodes };
    nodeCache = entry;
    nodes.catch(() => {
      if (nodeCache === entry) nodeCache = null;
    });
    return nodes;
  };
  // The broker's and the processor's reads (candidates, a job's open evaluations, its
  // snapshot with every allocation of the job) are raw statements: the SQL client.
  const processor: ProcessorDeps = { db: options.sql.db, engineStore, applier, clock, nodesAt };
  let wake: WakeSignal | null = null;
  const wakeProxy: WakeSignal = {
    generation: () => wake?.generation() ?? 0,
    wait: (since, ms) => (wake ? wake.wait(since, ms) : new Promise((r) => setTimeout(r, Math.min(ms, 100)))),
    close: async () => undefined,
  };
  const broker = createBroker({
    wake: wakeProxy,
    db: options.sql.db,
    databaseUrl: options.databaseUrl,
    engineStore,
    applier,
    clock,
    logger: options.logger,
    processor,
    workers,
    pollMs: options.pollMs ?? 5_000,
    backoffMs: 100,
    batch: options.batch ?? 8,
    ...(options.onProcessed ? { onProcessed: options.onProcessed } : {}),
  });

  const watcher = createDeploymentWatcher({ jobStore, evalStore, deploymentStore, clock });

  /** Fails running deployments whose progress deadline passed (the watcher's timer). */
  async function checkDeadlines(): Promise<number> {
    const now = clock.nowMs();
    let failed = 0;
    for (const d of await engineStore.runningDeployments(options.prisma)) {
      const due = Object.values(d.TaskGroups).some((g) => g.RequireProgressBy !== null && Date.parse(g.RequireProgressBy) < now);
      if (!due) continue;
      const { result } = await options.state.withWrite(
        [TABLES.deployments, TABLES.evals, TABLES.jobs, TABLES.jobSummary, TABLES.jobVersions],
        async ({ tx, index, emit }) => {
          const w = { tx, index, emit };
          const done = await watcher.checkDeadline(w, d.ID);
          if (done) await refreshJobState({ jobStore, engineStore }, w, d.Namespace, d.JobID, 'DeploymentStatusUpdate');
          return done;
        },
      );
      if (result) failed++;
    }
    return failed;
  }

  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<void> | null = null;
  const tickMs = Math.min(1_000, options.pollMs ?? 1_000);
  function schedule(): void {
    timer = setTimeout(() => {
      ticking = tick().finally(() => {
        ticking = null;
        if (timer !== null) schedule();
      });
    }, tickMs);
  }

  const periodic = createPeriodicDispatcher({ state: options.state, db: options.prisma, jobStore, evalStore, engineStore, clock, logger: options.logger });

  /** One round of the timers: progress deadlines and periodic launches. */
  async function tick(): Promise<void> {
    await checkDeadlines().catch((err: unknown) => options.logger.warn('deployment deadline check failed', { err: err instanceof Error ? err.message : String(err) }));
    await periodic.runDue().catch((err: unknown) => options.logger.warn('periodic dispatch failed', { err: err instanceof Error ? err.message : String(err) }));
  }

  return {
    /** Subscribes to wake-ups, then starts the broker's worker slots and the timers. */
    async start(): Promise<void> {
      wake = await createWakeSignal(options.bus, options.stateChannel ?? (await options.state.wakeChannel()), BROKER_TABLES);
      broker.start();
      schedule();
    },
    async stop(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = null;
      await ticking;
      // Stop claiming first, then release the slots sleeping on wake-ups.
      const stopping = broker.stop();
      await wake?.close();
      await stopping;
      wake = null;
    },
    /** Runs the timers once now (tests with a controlled clock). */
    tick,
  };
}

export type Engine = ReturnType<typeof createEngine>;
