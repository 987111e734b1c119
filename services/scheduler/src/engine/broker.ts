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
import { TABLES, newId, type Clock, type Db } from '../shared/common.types';
import { waitUntilMs } from '../features/evaluations/evaluations.store';
import type { Evaluation } from '../features/evaluations/evaluations.types';
import type { EngineStore } from './engine.store';
import { prepareEvaluation, processEvaluation, type ProcessorDeps } from './eval-processor';
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
  /** Jobs a worker slot claims and commits together (group commit); 1 = one at a time. */
  batch: number;
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

  interface Claimed {
    namespace: string;
    jobId: string;
    key: string;
    ev: Evaluation;
    others: Evaluation[];
  }

  /** Locks up to `deps.batch` jobs with a ready evaluation (each under its advisory lock). */
  async function claim(lock: JobLockClient): Promise<Claimed[]> {
    const now = deps.clock.nowMs();
    const candidates = await engineStore.candidates(deps.db, now, 32);
    const out: Claimed[] = [];
    try {
      await claimInto(lock, candidates, now, out);
    } catch (err) {
      // The lock connection failed (its locks went with it): forget what was claimed.
      for (const c of out) {
        await lock.unlock(c.namespace, c.jobId);
        localBusy.delete(c.key);
      }
      throw err;
    }
    return out;
  }

  async function claimInto(lock: JobLockClient, candidates: Array<{ namespace: string; jobId: string }>, now: number, out: Claimed[]): Promise<void> {
    for (const c of candidates) {
      if (out.length >= deps.batch) break;
      const key = `${c.namespace}\u0000${c.jobId}`;
      if (localBusy.has(key)) continue;
      localBusy.add(key);
      let keep = false;
      try {
        if (!(await lock.tryLock(c.namespace, c.jobId))) continue;
        try {
          // Read under the lock: anything processed by whoever held it before is settled.
          const { evals: open, capacityIndex } = await engineStore.openEvalsAndCapacity(deps.db, c.namespace, c.jobId);
          const ev = chooseEvaluation(open, deps.clock.nowMs(), capacityIndex);
          if (!ev) continue;
          const others = open.filter((o) => o.ID !== ev.ID && (o.Status === 'blocked' || (o.CreateIndex < ev.CreateIndex && waitUntilMs(o) <= now)));
          out.push({ namespace: c.namespace, jobId: c.jobId, key, ev, others });
          keep = true;
        } finally {
          if (!keep) await lock.unlock(c.namespace, c.jobId);
        }
      } finally {
        if (!keep) localBusy.delete(key);
      }
    }
  }

  /** The full path for one evaluation: attempts, retries, backoff, delivery limit. */
  async function processOne(c: Claimed): Promise<void> {
    const started = Date.now();
    try {
      const r = await processEvaluation(deps.processor, c.ev, c.others);
      failures.delete(c.ev.ID);
      logger.debug('evaluation processed', { evalId: c.ev.ID, jobId: c.ev.JobID, status: r.status, placed: r.placed, attempts: r.attempts, ms: Date.now() - started });
      deps.onProcessed?.({ evalId: c.ev.ID, status: r.status, placed: r.placed, ms: Date.now() - started });
    } catch (err) {
      const n = (failures.get(c.ev.ID) ?? 0) + 1;
      failures.set(c.ev.ID, n);
      if (n >= DELIVERY_LIMIT) {
        failures.delete(c.ev.ID);
        await failDelivery(c.ev, err).catch((e2: unknown) => logger.error('could not fail evaluation', { evalId: c.ev.ID, err: String(e2) }));
      } else {
        const backoff = Math.min(5_000, deps.backoffMs * 2 ** (n - 1));
        logger.warn('evaluation failed; retrying', { evalId: c.ev.ID, attempt: n, backoffMs: backoff, err: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }

  /**
   * One claim: true when evaluations were processed (or failed), false when idle. Several
   * claimed jobs are planned and their first plans committed together (group commit: one
   * counter lock and one commit for all); any that did not fully commit, or a batch that
   * failed, goes through the full one-by-one path.
   */
  async function claimOnce(lock: JobLockClient): Promise<boolean> {
    const claimed = await claim(lock);
    if (claimed.length === 0) return false;
    try {
      let rest = claimed;
      if (claimed.length > 1) {
        const started = Date.now();
        const prepared = await Promise.all(claimed.map((c) => prepareEvaluation(deps.processor, c.ev, c.others).catch(() => null)));
        const batch = claimed.flatMap((c, i) => (prepared[i] ? [{ c, p: prepared[i] }] : []));
        const done = new Set<string>();
        if (batch.length > 0) {
          try {
            const results = await deps.applier.applyBatch(batch.map((b) => ({ plan: b.p.plan, outcome: b.p.outcome })));
            results.forEach((r, i) => {
              const b = batch[i] as (typeof batch)[number];
              if (!r.full) return;
              done.add(b.c.ev.ID);
              failures.delete(b.c.ev.ID);
              logger.debug('evaluation processed', { evalId: b.c.ev.ID, jobId: b.c.ev.JobID, status: b.p.outcome.eval.Status, placed: r.placed, attempts: 1, batch: batch.length, ms: Date.now() - started });
              deps.onProcessed?.({ evalId: b.c.ev.ID, status: b.p.outcome.eval.Status, placed: r.placed, ms: Date.now() - started });
            });
          } catch (err) {
            logger.warn('batched plans failed; applying one by one', { err: err instanceof Error ? err.message : String(err) });
          }
        }
        rest = claimed.filter((c) => !done.has(c.ev.ID));
      }
      for (const c of rest) await processOne(c);
      return true;
    } finally {
      for (const c of claimed) {
        await lock.unlock(c.namespace, c.jobId);
        localBusy.delete(c.key);
      }
    }
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
