// Nodes in Postgres (scheduler.nodes), listed by ID (reference §0.3), with the heartbeat
// columns the sweeper reads (docs/scheduler.md "Nodes and heartbeats").
import type { Prisma } from '@selfstack/db';
import type { Db } from '../../shared/common.types';
import type { Node } from './nodes.types';

/** Statuses a missed heartbeat takes a node out of. */
export const HEARTBEAT_STATUSES = ['initializing', 'ready'] as const;

export interface NodeStore {
  get(db: Db, id: string): Promise<{ node: Node; secretHash: string } | null>;
  /** Nodes whose ID starts with `prefix`, by ID. */
  list(db: Db, prefix: string): Promise<Node[]>;
  put(tx: Db, node: Node, secretHash: string): Promise<void>;
  delete(tx: Db, id: string): Promise<void>;
  /** Does a node with this SecretID hash exist? */
  secretExists(db: Db, secretHash: string): Promise<boolean>;
  /** Nodes a heartbeat keeps alive (initializing or ready): the TTL scales with them. */
  countLive(db: Db): Promise<number>;
  /**
   * Records a heartbeat: last contact now, good for `ttlMs`. With `status` given, only while
   * the node still has that status (false: it changed, the caller writes the change).
   */
  touch(db: Db, id: string, nowMs: number, ttlMs: number, status?: string): Promise<boolean>;
  /** IDs of initializing/ready nodes whose last heartbeat + TTL + grace is before `nowMs`. */
  expired(db: Db, nowMs: number, graceMs: number): Promise<string[]>;
  /** Locks the node row (inside a write) and says whether its heartbeat has expired. */
  expiredLocked(tx: Db, id: string, nowMs: number, graceMs: number): Promise<boolean>;
  /** Nodes with a drain strategy. */
  draining(db: Db): Promise<Node[]>;
}

export function createNodeStore(): NodeStore {
  return {
    async get(db, id) {
      const row = await db.schedulerNode.findUnique({ where: { id }, select: { data: true, secretHash: true } });
      return row ? { node: row.data as unknown as Node, secretHash: row.secretHash } : null;
    },
    async list(db, prefix) {
      const rows = await db.schedulerNode.findMany({
        where: prefix !== '' ? { id: { startsWith: prefix } } : {},
        orderBy: { id: 'asc' },
        select: { data: true },
      });
      return rows.map((r) => r.data as unknown as Node);
    },
    async secretExists(db, secretHash) {
      return (await db.schedulerNode.count({ where: { secretHash } })) > 0;
    },
    async put(tx, node, secretHash) {
      const row = {
        name: node.Name,
        status: node.Status,
        secretHash,
        data: node as unknown as Prisma.InputJsonValue,
        createIndex: BigInt(node.CreateIndex),
        modifyIndex: BigInt(node.ModifyIndex),
      };
      await tx.schedulerNode.upsert({ where: { id: node.ID }, create: { id: node.ID, ...row }, update: row });
    },
    async delete(tx, id) {
      await tx.schedulerNode.deleteMany({ where: { id } });
    },
    async countLive(db) {
      return db.schedulerNode.count({ where: { status: { in: [...HEARTBEAT_STATUSES] } } });
    },
    async touch(db, id, nowMs, ttlMs, status) {
      const r = await db.schedulerNode.updateMany({
        where: { id, ...(status !== undefined ? { status } : {}) },
        data: { lastHeartbeatMs: BigInt(nowMs), heartbeatTtlMs: BigInt(ttlMs) },
      });
      return r.count > 0;
    },
    async expired(db, nowMs, graceMs) {
      const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT "id" FROM "scheduler"."nodes"
         WHERE "status" IN ('initializing', 'ready') AND "last_heartbeat_ms" + "heartbeat_ttl_ms" + $2 < $1
         ORDER BY "id"`,
        nowMs,
        graceMs,
      );
      return rows.map((r) => r.id);
    },
    async expiredLocked(tx, id, nowMs, graceMs) {
      const rows = await tx.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT "id" FROM "scheduler"."nodes"
         WHERE "id" = $3 AND "status" IN ('initializing', 'ready') AND "last_heartbeat_ms" + "heartbeat_ttl_ms" + $2 < $1
         FOR UPDATE`,
        nowMs,
        graceMs,
        id,
      );
      return rows.length > 0;
    },
    async draining(db) {
      const rows = await db.$queryRawUnsafe<Array<{ d: string }>>(
        `SELECT "data"::text AS d FROM "scheduler"."nodes" WHERE "data"->'DrainStrategy' IS NOT NULL AND "data"->'DrainStrategy' <> 'null'::jsonb ORDER BY "id"`,
      );
      return rows.map((r) => JSON.parse(r.d) as Node);
    },
  };
}
