// Node shape (spec "Node"; reference §2). SecretID is never exposed.
import type { JsonObject } from '../../shared/common.types';

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
