// Nodes in Postgres (scheduler.nodes), listed by ID (reference §0.3).
import { jsonValue } from '@selfstack/db';
import type { Db } from '../../shared/common.types';
import type { Node } from './nodes.types';

export interface NodeStore {
  get(db: Db, id: string): Promise<{ node: Node; secretHash: string } | null>;
  /** Nodes whose ID starts with `prefix`, by ID. */
  list(db: Db, prefix: string): Promise<Node[]>;
  put(tx: Db, node: Node, secretHash: string): Promise<void>;
  /** Does a node with this SecretID hash exist? */
  secretExists(db: Db, secretHash: string): Promise<boolean>;
}

export function createNodeStore(): NodeStore {
  return {
    async get(db, id) {
      const row = await db.schedulerNode.findUnique({ where: { id } });
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
        data: jsonValue(node),
        createIndex: BigInt(node.CreateIndex),
        modifyIndex: BigInt(node.ModifyIndex),
      };
      await tx.schedulerNode.upsert({ where: { id: node.ID }, create: { id: node.ID, ...row }, update: row });
    },
  };
}
