// Allocation updates from client agents (the server side of the anchor's Node.UpdateAlloc
// RPC, over HTTP: POST /v1/internal/node/:id/allocations). A node reports its
// allocations' ClientStatus, TaskStates and DeploymentStatus.Healthy; the write settles
// what follows in the same transaction: job summary and status, deployment health (the
// watcher), an `alloc-failure` evaluation for a failed allocation (rescheduling), and the
// capacity index when an allocation stops holding resources (blocked evaluations retry).
import { BadRequestError, ForbiddenError, NotFoundError } from '@selfstack/errors';
import type { Acl } from '../features/acl/acl-policy';
import type { AllocationStore } from '../features/allocations/allocations.store';
import { allocEvent } from '../features/allocations/allocations.service';
import type { Allocation } from '../features/allocations/allocations.types';
import { asObject, nowNanos, sha256Hex, TABLES, type Clock, type Indexed, type JsonObject, type ReadOptions } from '../shared/common.types';
import { blockingRead, shareKey, type SchedulerState } from '../shared/blocking-read';
import { evalEvent, newEvaluation } from '../features/evaluations/eval-factory';
import type { EvaluationStore } from '../features/evaluations/evaluations.store';
import type { JobStore } from '../features/jobs/jobs.store';
import type { NodeStore } from '../features/nodes/nodes.store';
import type { EngineStore } from './engine.store';
import { healthOf, type DeploymentWatcher, type HealthChange } from './deployment-watcher';
import { refreshJobState } from './job-state';
import { CAPACITY_TABLE } from './plan-applier';
import { secretsEqual } from '@selfstack/password';

export interface ClientAllocUpdate {
  ID: string;
  ClientStatus: string;
  ClientDescription?: string | undefined;
  TaskStates?: Record<string, unknown> | null | undefined;
  DeploymentStatus?: { Healthy?: boolean | null | undefined; Timestamp?: string | undefined } | null | undefined;
  NetworkStatus?: unknown;
}

export interface ClientUpdatesDeps extends SchedulerState {
  nodeStore: NodeStore;
  allocStore: AllocationStore;
  evalStore: EvaluationStore;
  jobStore: JobStore;
  engineStore: EngineStore;
  watcher: DeploymentWatcher;
  clock: Clock;
  aclEnabled: boolean;
}

const TERMINAL = new Set(['complete', 'failed', 'lost']);

function sameSecret(hash: string, secret: string): boolean {
  return secretsEqual(hash, sha256Hex(secret));
}

export function createClientUpdatesService(deps: ClientUpdatesDeps) {
  const { state } = deps;
  return {
    /**
     * The allocations of a node, for its client agent (the anchor's Node.GetClientAllocs):
     * the node's SecretID as the token (or a management token with ACLs enabled); a
     * blocking query on the allocation table. The public GET /v1/node/:id/allocations
     * needs node:read, which a node's secret does not carry.
     */
    async allocationsFor(nodeId: string, token: string, acl: Acl, opts: ReadOptions): Promise<Indexed<Allocation[]>> {
      const row = await deps.nodeStore.get(deps.prisma, nodeId);
      if (!row) throw new NotFoundError('node not found');
      const isNode = token !== '' && sameSecret(row.secretHash, token);
      if (!isNode && !(deps.aclEnabled && acl.management)) throw new ForbiddenError('Permission denied');
      return blockingRead(deps, [TABLES.allocs], opts, (db) => deps.allocStore.where(db, { nodeId }), shareKey('client-allocs', nodeId));
    },

    /**
     * Applies a node's allocation updates. The caller is the node (its SecretID as the
     * request token) or, with ACLs enabled, a management token.
     */
    async update(nodeId: string, updates: readonly ClientAllocUpdate[], token: string, acl: Acl): Promise<{ Index: number }> {
      const row = await deps.nodeStore.get(deps.prisma, nodeId);
      if (!row) throw new NotFoundError('node not found');
      const isNode = token !== '' && sameSecret(row.secretHash, token);
      if (!isNode && !(deps.aclEnabled && acl.management)) throw new ForbiddenError('Permission denied');
      if (updates.length === 0) throw new BadRequestError('Must update at least one allocation');
      const tables: string[] = [TABLES.allocs, TABLES.evals, TABLES.jobs, TABLES.jobSummary];
      if (updates.some((u) => u.DeploymentStatus)) tables.push(TABLES.deployments, TABLES.jobVersions);
      // Resources held by an allocation are freed when it ends: blocked evaluations retry.
      if (updates.some((u) => TERMINAL.has(u.ClientStatus))) tables.push(CAPACITY_TABLE);
      const { index } = await state.withWrite(
        tables,
        async ({ tx, index, emit }) => {
          const w = { tx, index, emit };
          const now = nowNanos(deps.clock);
          const current = new Map((await deps.allocStore.getMany(tx, updates.map((u) => u.ID))).map((a) => [a.ID, a]));
          const touchedJobs = new Map<string, { namespace: string; jobId: string }>();
          const health = new Map<string, HealthChange[]>();
          const failedJobs = new Map<string, Allocation>();
          for (const u of updates) {
            const before = current.get(u.ID);
            if (!before) throw new NotFoundError(`Unknown allocation ${JSON.stringify(u.ID)}`);
            if (before.NodeID !== nodeId) throw new BadRequestError(`Allocation ${JSON.stringify(u.ID)} is not on node ${JSON.stringify(nodeId)}`);
            // A terminal client status is final (the anchor ignores regressions from it).
            if (TERMINAL.has(before.ClientStatus) && before.ClientStatus !== u.ClientStatus) continue;
            let deploymentStatus = before.DeploymentStatus;
            if (u.DeploymentStatus && typeof u.DeploymentStatus.Healthy === 'boolean' && before.DeploymentID !== '') {
              deploymentStatus = {
                ...asObject(before.DeploymentStatus),
                Healthy: u.DeploymentStatus.Healthy,
                Timestamp: u.DeploymentStatus.Timestamp ?? new Date(deps.clock.nowMs()).toISOString(),
                ModifyIndex: index,
              };
            }
            const after: Allocation = {
              ...before,
              ClientStatus: u.ClientStatus,
              ClientDescription: u.ClientDescription ?? before.ClientDescription,
              ...(u.TaskStates !== undefined ? { TaskStates: u.TaskStates } : {}),
              ...(u.NetworkStatus !== undefined ? { NetworkStatus: u.NetworkStatus as JsonObject } : {}),
              DeploymentStatus: deploymentStatus,
              ModifyIndex: index,
              ModifyTime: now,
            };
            current.set(u.ID, after);
            await deps.allocStore.put(tx, after);
            emit(allocEvent('AllocationUpdated', after));
            touchedJobs.set(`${after.Namespace}\u0000${after.JobID}`, { namespace: after.Namespace, jobId: after.JobID });
            if (after.DeploymentID !== '' && healthOf(before) !== healthOf(after)) {
              const list = health.get(after.DeploymentID) ?? [];
              list.push({ before, after });
              health.set(after.DeploymentID, list);
            }
            if (after.ClientStatus === 'failed' && before.ClientStatus !== 'failed' && after.DesiredStatus === 'run') {
              failedJobs.set(`${after.Namespace}\u0000${after.JobID}`, after);
            }
          }
          for (const [deploymentId, changes] of health) {
            const allocs = new Map((await deps.allocStore.where(tx, { deploymentId })).map((a) => [a.ID, a]));
            await deps.watcher.onHealth(w, deploymentId, changes, allocs);
          }
          // A failed allocation: the scheduler decides about rescheduling (Node.UpdateAlloc).
          for (const a of failedJobs.values()) {
            const rec = await deps.jobStore.get(tx, a.Namespace, a.JobID);
            if (!rec || rec.job.Type === 'system' || rec.job.Stop) continue;
            const ev = newEvaluation(
              { namespace: a.Namespace, jobId: a.JobID, jobModifyIndex: rec.job.JobModifyIndex, type: rec.job.Type, priority: rec.job.Priority, triggeredBy: 'alloc-failure', index },
              deps.clock,
            );
            await deps.evalStore.put(tx, ev);
            emit(evalEvent('AllocationUpdated', ev));
          }
          for (const j of touchedJobs.values()) await refreshJobState(deps, w, j.namespace, j.jobId, 'AllocationUpdated');
        },
      );
      return { Index: index };
    },
  };
}

export type ClientUpdatesService = ReturnType<typeof createClientUpdatesService>;
