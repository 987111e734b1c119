// The evaluation broker (ARCHITECTURE "Scheduling"; the anchor's eval_broker.go on
// PostgreSQL). Each worker slot loops: list jobs with a ready evaluation (pending and past
// its WaitUntil, or blocked and computed before the latest capacity change), highest
// priority first; take the first job whose advisory lock is free (job-lock.store.ts),
// re-read its open evaluations under the lock, process the newest ready one (older pending
// ones are cancelled by it, as the anchor's broker does), release. Nothing to do: wait for
// a write to evaluations, nodes or capacity (libs/state wake-ups, which Redis carries
// between replicas), the next WaitUntil, or the slow safety poll, whichever comes first.
// Errors are retried with exponential backoff; an evaluation that keeps failing is marked
// failed with a follow-up evaluation (the anchor's delivery limit).
import type { Logger } from '@selfstack/logger';
import { TABLES, newId, type Clock, type Db } from '../features/common/common.types';
import { waitUntilMs } from '../features/evaluations/evaluations.store';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { EngineStore } from './engine.store';
import { processEvaluation, type ProcessorDeps } from './eval-processor';
import { JobLockClient } from './job-lock.store';
import { CAPACITY_TABLE, type PlanApplier } from './plan-applier';
import type { WakeSignal } from './wake-signal';

export const DELIVERY_LIMIT = 3;
/** Tables whose writes may give the broker work. */
export const BROKER_TABLES = [TABLES.evals, TABLES.nodes, CAPACITY_TABLE];

export interface BrokerDeps {
  wake: WakeSignal;
  db: Db;
  databaseUrl: string;
  engineStore: EngineStore;
  applier: PlanApplier;
  clock: Clock;
  logger: Logger;
  processor: ProcessorDeps;
  /** Concurrent evaluations in this process. */
  workers: number;
  /** Safety poll when no wake-up arrives (ms). */
  pollMs: number;
  /** Base of the retry backoff (ms). */
  backoffMs: number;
  /** Observes each processed evaluation (benchmarks, tests). */
  onProcessed?: (e: { evalId: string; status: string; placed: number; ms: number }) => void;
}

function isReady(e: Evaluation, nowMs: number, capacityIndex: number): boolean {
  if (e.Status === 'pending') return waitUntilMs(e) <= nowMs;
  return e.Status === 'blocked' && Number(e['SnapshotIndex'] ?? 0) < capacityIndex;
}

/** The evaluation to run among a job's ready ones: the newest pending, else the newest blocked. */
export function chooseEvaluation(open: readonly Evaluation[], nowMs: number, capacityIndex: number): Evaluation | null {
  const ready = open.filter((e) => isReady(e, nowMs, capacityIndex));
  const pending = ready.filter((e) => e.Status === 'pending');
  const pick = (list: Evaluation[]) => list.reduce<Evaluation | null>((best, e) => (best === null || e.CreateIndex > best.CreateIndex ? e : best), null);
  return pick(pending) ?? pick(ready);
}

export function createBroker(deps: BrokerDeps) {
  const { engineStore, logger } = deps;
  let running = false;
  const slots: Array<{ lock: JobLockClient; done: Promise<void> }> = [];
  const localBusy = new Set<string>();
  const failures = new Map<string, number>();

  async function waitForWork(since: number): Promise<void> {
    const now = deps.clock.nowMs();
    const next = await engineStore.nextWaitUntil(deps.db, now).catch(() => null);
    const waitMs = Math.max(10, Math.min(deps.pollMs, next !== null ? next - now : deps.pollMs));
    await deps.wake.wait(since, waitMs);
  }

  async function failDelivery(ev: Evaluation, err: unknown): Promise<void> {
    const now = deps.clock.nowMs();
    const followup: Evaluation = {
      ...ev,
      ID: newId(),
      Status: 'pending',
      StatusDescription: '',
      TriggeredBy: 'failed-follow-up',
      PreviousEval: ev.ID,
      NextEval: '',
      BlockedEval: '',
      FailedTGAllocs: null,
      QueuedAllocations: null,
      // The anchor's follow-up waits a baseline minute plus up to five more.
      WaitUntil: new Date(now + 60_000 + Math.floor(Math.random() * 300_000)).toISOString(),
    };
    const failed: Evaluation = { ...ev, Status: 'failed', StatusDescription: `evaluation reached delivery limit (${DELIVERY_LIMIT})`, NextEval: followup.ID };
    logger.error('evaluation failed repeatedly', { evalId: ev.ID, jobId: ev.JobID, err: err instanceof Error ? err.message : String(err) });
    await deps.applier.settle({ eval: failed, blocked: followup, settled: [] });
  }

  /** One claim: true when an evaluation was processed (or failed), false when idle. */
  async function claimOnce(lock: JobLockClient): Promise<boolean> {
    const now = deps.clock.nowMs();
    const candidates = await engineStore.candidates(deps.db, now, 32);
    for (const c of candidates) {
      const key = `${c.namespace}\u0000${c.jobId}`;
      if (localBusy.has(key)) continue;
      localBusy.add(key);
      let locked = false;
      try {
        locked = await lock.tryLock(c.namespace, c.jobId);
        if (!locked) continue;
        // Read under the lock: anything processed by whoever held it before is settled.
        const { evals: open, capacityIndex } = await engineStore.openEvalsAndCapacity(deps.db, c.namespace, c.jobId);
        const ev = chooseEvaluation(open, deps.clock.nowMs(), capacityIndex);
        if (!ev) continue;
        const started = Date.now();
        try {
          const others = open.filter((o) => o.ID !== ev.ID && (o.Status === 'blocked' || (o.CreateIndex < ev.CreateIndex && waitUntilMs(o) <= now)));
          const r = await processEvaluation(deps.processor, ev, others);
          failures.delete(ev.ID);
          logger.debug('evaluation processed', { evalId: ev.ID, jobId: ev.JobID, status: r.status, placed: r.placed, attempts: r.attempts, ms: Date.now() - started });
          deps.onProcessed?.({ evalId: ev.ID, status: r.status, placed: r.placed, ms: Date.now() - started });
        } catch (err) {
          const n = (failures.get(ev.ID) ?? 0) + 1;
          failures.set(ev.ID, n);
          if (n >= DELIVERY_LIMIT) {
            failures.delete(ev.ID);
            await failDelivery(ev, err).catch((e2: unknown) => logger.error('could not fail evaluation', { evalId: ev.ID, err: String(e2) }));
          } else {
            const backoff = Math.min(5_000, deps.backoffMs * 2 ** (n - 1));
            logger.warn('evaluation failed; retrying', { evalId: ev.ID, attempt: n, backoffMs: backoff, err: err instanceof Error ? err.message : String(err) });
            await new Promise((r) => setTimeout(r, backoff));
          }
        }
        return true;
      } finally {
        if (locked) await lock.unlock(c.namespace, c.jobId);
        localBusy.delete(key);
      }
    }
    return false;
  }

  async function slotLoop(lock: JobLockClient): Promise<void> {
    while (running) {
      // Taken before looking: a write landing while we look moves it, and we look again.
      const since = deps.wake.generation();
      try {
        if (await claimOnce(lock)) continue;
      } catch (err) {
        logger.warn('broker claim failed', { err: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, deps.backoffMs));
      }
      if (running) await waitForWork(since);
    }
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      for (let i = 0; i < deps.workers; i++) {
        const lock = new JobLockClient(deps.databaseUrl, logger);
        slots.push({ lock, done: slotLoop(lock) });
      }
    },
    async stop(): Promise<void> {
      running = false;
      await Promise.all(slots.map((s) => s.done.catch(() => undefined)));
      await Promise.all(slots.map((s) => s.lock.close()));
      slots.length = 0;
    },
  };
}

export type Broker = ReturnType<typeof createBroker>;
