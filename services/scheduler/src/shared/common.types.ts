// Shared building blocks of the scheduler features: the database handle stores take, the
// clock, id generation and the state tables blocking queries watch.
import { createHash, randomUUID } from 'node:crypto';
import type { Prisma } from '@selfstack/db';

/** A Prisma client or transaction client (stores work with either). */
export type Db = Prisma.TransactionClient;

export interface Clock {
  /** Wall clock in milliseconds since the epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** Nomad reports times as Unix nanoseconds. */
export function nowNanos(clock: Clock): number {
  return clock.nowMs() * 1_000_000;
}

export function newId(): string {
  return randomUUID();
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Go's zero time.Time as encoding/json writes it. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** The logical tables of the state store (table_index rows; reference §0.2). */
export const TABLES = {
  jobs: 'jobs',
  jobSummary: 'job_summary',
  jobVersions: 'job_version',
  evals: 'evals',
  allocs: 'allocs',
  deployments: 'deployment',
  nodes: 'nodes',
  namespaces: 'namespaces',
  aclPolicies: 'acl_policy',
  aclTokens: 'acl_token',
} as const;

export type JsonObject = Record<string, unknown>;

export function asObject(v: unknown): JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {};
}

/** A read's answer: the value and the index of the tables it came from. */
export interface Indexed<T> {
  index: number;
  value: T;
}

/** The handle every read gets for blocking (spec "Blocking queries"). */
export interface ReadOptions {
  minIndex: number;
  waitMs: number;
  signal?: AbortSignal;
}
