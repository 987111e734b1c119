// Allocation shape (reference §3).
import type { JsonObject } from '../../shared/common.types';

export type Allocation = JsonObject & {
  ID: string;
  EvalID: string;
  Name: string;
  Namespace: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  Job: JsonObject | null;
  TaskGroup: string;
  DesiredStatus: string;
  DesiredDescription: string;
  ClientStatus: string;
  ClientDescription: string;
  DeploymentID: string;
  DeploymentStatus: JsonObject | null;
  DesiredTransition: JsonObject;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
};

/** CPU (MHz), memory and disk (MB) an allocation holds on its node (its AllocatedResources). */
export function allocResourceTotals(a: Allocation): { cpu: number; memoryMb: number; diskMb: number } {
  const ar = (a['AllocatedResources'] ?? null) as { Tasks?: Record<string, { Cpu?: { CpuShares?: number }; Memory?: { MemoryMB?: number } }>; Shared?: { DiskMB?: number } } | null;
  let cpu = 0;
  let memoryMb = 0;
  for (const t of Object.values(ar?.Tasks ?? {})) {
    cpu += Number(t.Cpu?.CpuShares ?? 0) || 0;
    memoryMb += Number(t.Memory?.MemoryMB ?? 0) || 0;
  }
  return { cpu, memoryMb, diskMb: Number(ar?.Shared?.DiskMB ?? 0) || 0 };
}

export function isTerminalAlloc(a: Allocation): boolean {
  return a.DesiredStatus === 'stop' || a.DesiredStatus === 'evict' || ['complete', 'failed', 'lost'].includes(a.ClientStatus);
}

/** AllocListStub (reference §3). */
export function allocStub(a: Allocation, opts: { resources: boolean; taskStates: boolean }): JsonObject {
  const job = a.Job ?? {};
  const stub: JsonObject = {
    ID: a.ID,
    EvalID: a.EvalID,
    Name: a.Name,
    Namespace: a.Namespace,
    NodeID: a.NodeID,
    NodeName: a.NodeName,
    JobID: a.JobID,
    JobType: (job as JsonObject)['Type'] ?? '',
    JobVersion: (job as JsonObject)['Version'] ?? 0,
    TaskGroup: a.TaskGroup,
    DesiredStatus: a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    ClientStatus: a.ClientStatus,
    ClientDescription: a.ClientDescription,
    DesiredTransition: a.DesiredTransition,
    TaskStates: opts.taskStates ? (a['TaskStates'] ?? null) : null,
    DeploymentStatus: a.DeploymentStatus,
    FollowupEvalID: a['FollowupEvalID'] ?? '',
    NextAllocation: a['NextAllocation'] ?? '',
    RescheduleTracker: a['RescheduleTracker'] ?? null,
    PreemptedAllocations: a['PreemptedAllocations'] ?? null,
    PreemptedByAllocation: a['PreemptedByAllocation'] ?? '',
    CreateIndex: a.CreateIndex,
    ModifyIndex: a.ModifyIndex,
    CreateTime: a.CreateTime,
    ModifyTime: a.ModifyTime,
  };
  if (opts.resources) stub['AllocatedResources'] = a['AllocatedResources'] ?? null;
  return stub;
}
