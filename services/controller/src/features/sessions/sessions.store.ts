// Persistence of sessions and workers (Postgres schema `controller`).
import type { PrismaClient } from '@selfstack/db';
import type { SessionRecord, SessionStatus, WorkerRecord } from './sessions.types';

export interface SessionStore {
  create(input: { id: string; workerName: string; target: string; expiresAt: Date }): Promise<SessionRecord>;
  get(id: string): Promise<SessionRecord | null>;
  list(filter: { workerName?: string; status?: SessionStatus }): Promise<SessionRecord[]>;
  /** Sessions a worker should hold: pending or active, not expired. */
  desiredFor(workerName: string, now: Date): Promise<SessionRecord[]>;
  /** Moves a session to `canceling` unless it is already terminated; returns the new record. */
  cancel(id: string): Promise<SessionRecord | null>;
  /** Applies a worker's report: held pending -> active; not-held canceling/expired -> terminated. */
  applyReport(workerName: string, heldIds: readonly string[], now: Date): Promise<void>;
  upsertWorker(input: { name: string; description: string; controllerName: string; connected: boolean; activeSessions?: number }): Promise<void>;
  markWorker(name: string, patch: { connected?: boolean; activeSessions?: number }): Promise<void>;
  listWorkers(): Promise<WorkerRecord[]>;
  /** The connected worker with the fewest active sessions, if any. */
  leastLoadedWorker(): Promise<WorkerRecord | null>;
}

const asSession = (row: { status: string } & Omit<SessionRecord, 'status'>): SessionRecord => ({ ...row, status: row.status as SessionStatus });

export function createSessionStore({ prisma }: { prisma: PrismaClient }): SessionStore {
  return {
    async create(input) {
      const row = await prisma.controllerSession.create({
        data: { id: input.id, workerName: input.workerName, target: input.target, expiresAt: input.expiresAt, status: 'pending' },
      });
      return asSession(row);
    },
    async get(id) {
      const row = await prisma.controllerSession.findUnique({ where: { id } });
      return row ? asSession(row) : null;
    },
    async list(filter) {
      const rows = await prisma.controllerSession.findMany({
        where: { ...(filter.workerName ? { workerName: filter.workerName } : {}), ...(filter.status ? { status: filter.status } : {}) },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(asSession);
    },
    async desiredFor(workerName, now) {
      const rows = await prisma.controllerSession.findMany({
        where: { workerName, status: { in: ['pending', 'active'] }, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
        orderBy: { id: 'asc' },
      });
      return rows.map(asSession);
    },
    async cancel(id) {
      // One conditional UPDATE, so a concurrent report cannot resurrect a canceled session.
      await prisma.controllerSession.updateMany({ where: { id, status: { in: ['pending', 'active'] } }, data: { status: 'canceling' } });
      const row = await prisma.controllerSession.findUnique({ where: { id } });
      return row ? asSession(row) : null;
    },
    async applyReport(workerName, heldIds, now) {
      await prisma.$transaction([
        prisma.controllerSession.updateMany({
          where: { workerName, status: 'pending', id: { in: [...heldIds] } },
          data: { status: 'active' },
        }),
        prisma.controllerSession.updateMany({
          where: { workerName, status: 'canceling', id: { notIn: [...heldIds] } },
          data: { status: 'terminated' },
        }),
        prisma.controllerSession.updateMany({
          where: { workerName, status: { in: ['pending', 'active'] }, expiresAt: { lte: now } },
          data: { status: 'terminated' },
        }),
        prisma.controllerWorker.updateMany({ where: { name: workerName }, data: { activeSessions: heldIds.length, lastSeenAt: now } }),
      ]);
    },
    async upsertWorker(input) {
      await prisma.controllerWorker.upsert({
        where: { name: input.name },
        create: { name: input.name, description: input.description, controllerName: input.controllerName, connected: input.connected, activeSessions: input.activeSessions ?? 0 },
        update: { description: input.description, controllerName: input.controllerName, connected: input.connected, lastSeenAt: new Date() },
      });
    },
    async markWorker(name, patch) {
      await prisma.controllerWorker.updateMany({ where: { name }, data: { ...patch, lastSeenAt: new Date() } });
    },
    async listWorkers() {
      return prisma.controllerWorker.findMany({ orderBy: { name: 'asc' } });
    },
    async leastLoadedWorker() {
      return prisma.controllerWorker.findFirst({ where: { connected: true }, orderBy: [{ activeSessions: 'asc' }, { name: 'asc' }] });
    },
  };
}
