// Deployment shape (spec "Deployment"; reference §4).
import type { JsonObject } from '../../shared/common.types';

export interface DeploymentTaskGroup {
  AutoRevert: boolean;
  AutoPromote: boolean;
  ProgressDeadline: number;
  RequireProgressBy: string | null;
  Promoted: boolean;
  PlacedCanaries: string[] | null;
  DesiredCanaries: number;
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
}

export type Deployment = JsonObject & {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  JobModifyIndex: number;
  JobSpecModifyIndex: number;
  JobCreateIndex: number;
  IsMultiregion: boolean;
  TaskGroups: Record<string, DeploymentTaskGroup>;
  Status: string;
  StatusDescription: string;
  EvalPriority: number;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
};

export const ACTIVE_DEPLOYMENT_STATUSES = ['running', 'paused', 'initializing', 'pending', 'blocked', 'unblocking'];

export function isActiveDeployment(d: Deployment): boolean {
  return ACTIVE_DEPLOYMENT_STATUSES.includes(d.Status);
}

/** DeploymentUpdateResponse (reference §4). */
export interface DeploymentUpdateResponse {
  EvalID: string;
  EvalCreateIndex: number;
  DeploymentModifyIndex: number;
  RevertedJobVersion: number | null;
  Index: number;
  LastContact: number;
  KnownLeader: boolean;
  NextToken: string;
}
