// The node lifecycle timers of a scheduler process (docs/scheduler.md "Nodes and
// heartbeats"): the heartbeat sweeper (the anchor's heartbeat timers) and the drainer.
// Every replica runs one; the state they act on is in PostgreSQL, and each transition is
// re-checked under a row lock inside its write (nodes.service.ts markMissed, completeDrain,
// enforceDrainDeadline), so replicas sweeping at once write each transition once.
//   - A node whose last heartbeat + TTL + grace has passed goes down (its allocations are
//     lost and replaced, engine/node-evals.ts). A sweeper waits `failoverMs` after it starts
//     before marking any node down (the anchor's failover heartbeat TTL): after an outage
//     of every server, agents get time to reach one before their nodes are declared down.
//   - A draining node whose deadline has passed (or that is forced) has its remaining
//     allocations migrated; before that, a paced drain takes its next step (the service
//     allocations the groups' max_parallel allows now that earlier replacements run,
//     engine/node-evals.ts pacedMigrations); a drain completes once no allocation of a
//     service or batch job is live on the node.
import type { Logger } from '@selfstack/logger';
import { pacedMigrations } from '../../engine/node-evals';
import type { AllocationStore } from '../allocations/allocations.store';
import type { JobStore } from '../jobs/jobs.store';
import { asObject, type Clock, type Db } from '../../shared/common.types';
import type { NodeService } from './nodes.service';
import type { NodeStore } from './nodes.store';
import { drainBlocking, markedForMigration, type Node } from './nodes.types';

export interface NodeLifecycleDeps {
  db: Db;
  nodes: Pick<NodeService, 'markMissed' | 'completeDrain' | 'enforceDrainDeadline' | 'advanceDrain' | 'heartbeatSettings'>;
  nodeStore: NodeStore;
  allocStore: AllocationStore;
  jobStore: Pick<JobStore, 'get'>;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'info' | 'debug'>;
  /** How often the timers run (ms). */
  intervalMs: number;
  /** Time after start before this sweeper marks nodes down (ms). */
  failoverMs: number;
}

export interface SweepResult {
  down: string[];
  drained: string[];
  enforced: string[];
  /** Draining nodes whose paced drain took a step. */
  advanced: string[];
}

export interface NodeLifecycle {
  /** One round now (tests, with a controlled clock). */
  sweepNow(): Promise<SweepResult>;
  stop(): Promise<void>;
}

/** When a drain's deadline forces what is left off the node (null: no deadline). */
function forceAtMs(node: Node): number | null {
  const s = asObject(node.DrainStrategy);
  const deadline = asObject(s['DrainSpec'])['Deadline'];
  if (typeof deadline === 'number' && deadline < 0) return 0;
  if (typeof deadline !== 'number' || deadline === 0) return null;
  const at = Date.parse(String(s['ForceDeadline'] ?? ''));
  return Number.isFinite(at) ? at : null;
}

export function createNodeLifecycle(deps: NodeLifecycleDeps, options: { start?: boolean } = {}): NodeLifecycle {
  const startedAt = deps.clock.nowMs();
  const graceMs = deps.nodes.heartbeatSettings.graceMs;

  async function sweepNow(): Promise<SweepResult> {
    const out: SweepResult = { down: [], drained: [], enforced: [], advanced: [] };
    const now = deps.clock.nowMs();
    if (now - startedAt >= deps.failoverMs) {
      for (const id of await deps.nodeStore.expired(deps.db, now, graceMs)) {
        if ((await deps.nodes.markMissed(id, now)) !== null) {
          out.down.push(id);
          deps.logger.info('node heartbeat missed: node down', { node: id });
        }
      }
    }
    for (const node of await deps.nodeStore.draining(deps.db)) {
      const blocking = (await deps.allocStore.where(deps.db, { nodeId: node.ID })).filter(drainBlocking);
      const forceAt = forceAtMs(node);
      const deadlined = forceAt !== null && forceAt <= now;
      if (blocking.length === 0) {
        if ((await deps.nodes.completeDrain(node.ID, deadlined ? { deadline_reached: 'true' } : null)) !== null) out.drained.push(node.ID);
      } else if (deadlined && blocking.some((a) => !markedForMigration(a))) {
        await deps.nodes.enforceDrainDeadline(node.ID);
        out.enforced.push(node.ID);
      } else if (
        !deadlined &&
        // Read outside the write (which decides again under its lock), so that a drain
        // waiting for replacements writes nothing.
        (await pacedMigrations(deps, deps.db, node.ID, blocking)).length > 0 &&
        (await deps.nodes.advanceDrain(node.ID)).length > 0
      ) {
        out.advanced.push(node.ID);
      }
    }
    return out;
  }

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    running = sweepNow()
      .catch((err: unknown) => deps.logger.warn('node lifecycle sweep failed; retrying at the next interval', { err: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        running = null;
        if (stopped) return;
        timer = setTimeout(tick, deps.intervalMs);
        timer.unref();
      });
  };
  if (options.start !== false) {
    timer = setTimeout(tick, deps.intervalMs);
    timer.unref();
  }

  return {
    sweepNow,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
