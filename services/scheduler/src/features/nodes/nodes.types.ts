// Node shape (spec "Node"; reference §2). SecretID is never exposed.
import { asObject, type JsonObject } from '../../shared/common.types';
import type { Allocation } from '../allocations/allocations.types';

export type Node = JsonObject & {
  ID: string;
  Name: string;
  Datacenter: string;
  HTTPAddr: string;
  NodeClass: string;
  NodePool: string;
  Attributes: Record<string, string>;
  Drain: boolean;
  DrainStrategy: JsonObject | null;
  SchedulingEligibility: string;
  Status: string;
  StatusDescription: string;
  StatusUpdatedAt: number;
  Events: JsonObject[];
  Drivers: Record<string, JsonObject>;
  CreateIndex: number;
  ModifyIndex: number;
};

/** NodeListStub (reference §2). */
export function nodeStub(n: Node, opts: { resources: boolean; os: boolean }): JsonObject {
  const host = n.HTTPAddr.includes(':') ? n.HTTPAddr.slice(0, n.HTTPAddr.lastIndexOf(':')) : n.HTTPAddr;
  const stub: JsonObject = {
    Address: host,
    ID: n.ID,
    Datacenter: n.Datacenter,
    Name: n.Name,
    NodeClass: n.NodeClass,
    NodePool: n.NodePool,
    Version: n.Attributes['nomad.version'] ?? '',
    Drain: n.DrainStrategy !== null,
    SchedulingEligibility: n.SchedulingEligibility,
    Status: n.Status,
    StatusDescription: n.StatusDescription,
    Drivers: n.Drivers,
    HostVolumes: n['HostVolumes'] ?? null,
    LastDrain: n['LastDrain'] ?? null,
    CreateIndex: n.CreateIndex,
    ModifyIndex: n.ModifyIndex,
  };
  if (opts.os) stub['Attributes'] = { 'os.name': n.Attributes['os.name'] ?? '' };
  if (opts.resources) {
    stub['NodeResources'] = n['NodeResources'] ?? null;
    stub['ReservedResources'] = n['ReservedResources'] ?? null;
  }
  return stub;
}

export interface NodeUpdateResponse {
  NodeModifyIndex: number;
  EvalIDs: string[];
  EvalCreateIndex: number;
  Index: number;
  LastContact: number;
  KnownLeader: boolean;
  NextToken: string;
}

export const CLIENT_TERMINAL: ReadonlySet<string> = new Set(['complete', 'failed', 'lost']);
export const SYSTEM_JOB_TYPES: ReadonlySet<string> = new Set(['system', 'sysbatch']);

export function jobTypeOf(a: Allocation): string {
  return String(asObject(a.Job)['Type'] ?? 'service');
}

/** Live on the client and wanted: what a drain still has to move. */
export function isLiveAlloc(a: Allocation): boolean {
  return a.DesiredStatus === 'run' && !CLIENT_TERMINAL.has(a.ClientStatus);
}

/** Marked to move (DesiredTransition.Migrate): by a drain, or by an allocation stop. */
export function markedForMigration(a: Allocation): boolean {
  return asObject(a.DesiredTransition)['Migrate'] === true;
}

/** Allocations a drain waits for: live ones of service and batch jobs (system jobs are the
 * system scheduler's, as in the anchor's drainer). */
export function drainBlocking(a: Allocation): boolean {
  return isLiveAlloc(a) && !SYSTEM_JOB_TYPES.has(jobTypeOf(a));
}
