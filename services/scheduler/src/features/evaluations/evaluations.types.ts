// Evaluation shape (reference §3).
import type { JsonObject } from '../../shared/common.types';

export type Evaluation = JsonObject & {
  ID: string;
  Namespace: string;
  Priority: number;
  Type: string;
  TriggeredBy: string;
  JobID: string;
  JobModifyIndex: number;
  NodeID: string;
  DeploymentID: string;
  Status: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
};

export const TERMINAL_EVAL_STATUSES = ['complete', 'failed', 'canceled'];
