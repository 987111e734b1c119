// Job shapes (reference §1): the canonical Job, its list stub and summary.
import type { JsonObject } from '../../shared/common.types';

export type Job = JsonObject & {
  ID: string;
  Name: string;
  Namespace: string;
  Region: string;
  Type: string;
  Priority: number;
  Datacenters: string[];
  TaskGroups: JsonObject[];
  Status: string;
  StatusDescription: string;
  Stop: boolean;
  Stable: boolean;
  Version: number;
  SubmitTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
  Periodic: JsonObject | null;
  ParameterizedJob: JsonObject | null;
  Meta: Record<string, string> | null;
};

export interface TaskGroupSummary {
  Queued: number;
  Complete: number;
  Failed: number;
  Running: number;
  Starting: number;
  Lost: number;
  Unknown: number;
}

export interface JobSummary {
  JobID: string;
  Namespace: string;
  Summary: Record<string, TaskGroupSummary>;
  Children: { Pending: number; Running: number; Dead: number };
  CreateIndex: number;
  ModifyIndex: number;
}

export interface JobRegisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
  LastContact: number;
  KnownLeader: boolean;
  NextToken: string;
}

export interface JobDeregisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  VolumeEvalID: string;
  VolumeEvalIndex: number;
  Index: number;
  LastContact: number;
  KnownLeader: boolean;
  NextToken: string;
}

/** api.JobRegisterRequest (reference §1.1). */
export interface JobRegisterRequest {
  Job?: unknown;
  EnforceIndex?: boolean;
  JobModifyIndex?: number;
  PolicyOverride?: boolean;
  PreserveCounts?: boolean;
  EvalPriority?: number;
}
