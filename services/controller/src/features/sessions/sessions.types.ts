import { z } from 'zod';

export const SESSION_STATUSES = ['pending', 'active', 'canceling', 'terminated'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export interface SessionRecord {
  id: string;
  workerName: string;
  target: string;
  status: SessionStatus;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
}

export interface WorkerRecord {
  name: string;
  description: string;
  controllerName: string;
  connected: boolean;
  activeSessions: number;
  lastSeenAt: Date;
}

/** Body of `POST /v1/sessions`. */
export const createSessionInput = z
  .object({
    target_id: z.string().max(256).optional(),
    worker_name: z.string().min(1).max(256).optional(),
    /** Boundary's default session lifetime is 8 hours. */
    expiration_seconds: z.number().int().positive().max(7 * 24 * 3600).optional(),
  })
  .strict();
export type CreateSessionInput = z.infer<typeof createSessionInput>;

/** The wire shape of a session (Boundary-style snake_case names). */
export interface SessionView {
  id: string;
  target_id: string;
  worker_name: string;
  status: SessionStatus;
  created_time: string;
  updated_time: string;
  expiration_time: string | null;
}

export function sessionView(s: SessionRecord): SessionView {
  return {
    id: s.id,
    target_id: s.target,
    worker_name: s.workerName,
    status: s.status,
    created_time: s.createdAt.toISOString(),
    updated_time: s.updatedAt.toISOString(),
    expiration_time: s.expiresAt ? s.expiresAt.toISOString() : null,
  };
}

export interface WorkerView {
  name: string;
  description: string;
  controller_name: string;
  connected: boolean;
  active_session_count: number;
  last_seen_time: string;
}

export function workerView(w: WorkerRecord): WorkerView {
  return {
    name: w.name,
    description: w.description,
    controller_name: w.controllerName,
    connected: w.connected,
    active_session_count: w.activeSessions,
    last_seen_time: w.lastSeenAt.toISOString(),
  };
}
