// The KV version 1 engine (issue 3, item 6; reference §2): one row per key under the
// mount's `kv/`, its data stored as canonical JSON and spliced into answers verbatim.
import { RawJson } from '../../core/json';
import type { Storage, StorageTx } from '../barrier/storage.types';
import { canonicalJson, v1Dir, v1Path } from './kv-layout';
import { childrenOf } from './kv-versions';

/** Runs first inside a write's transaction; throws to abort it (the mount's StaleMountError guard). */
export type TxCheck = (tx: StorageTx) => Promise<void>;

export interface KvV1Service {
  v1Read(prefix: string, key: string): Promise<RawJson | null>;
  /** `check` runs first in the write's transaction (the mount's StaleMountError guard). */
  v1Write(prefix: string, key: string, data: Record<string, unknown>, check: TxCheck): Promise<void>;
  v1Delete(prefix: string, key: string, check: TxCheck): Promise<void>;
  v1Exists(prefix: string, key: string): Promise<boolean>;
  v1List(prefix: string, dir: string): Promise<string[]>;
}

/**
 * `storage` reads the database; `dataReads` (reads of a key's data) may be the physical
 * cache's view (services.ts), coherent with every write through either.
 */
export function createKvV1Service(deps: { storage: Storage; dataReads: Storage }): KvV1Service {
  const { storage, dataReads } = deps;
  return {
    async v1Read(prefix, key) {
      const raw = await dataReads.get(v1Path(prefix, key));
      return raw ? new RawJson(raw.toString('utf8')) : null;
    },
    async v1Write(prefix, key, data, check) {
      const value = Buffer.from(canonicalJson(data));
      await storage.transaction(async (tx) => {
        await check(tx);
        await tx.put(v1Path(prefix, key), value);
      });
    },
    async v1Delete(prefix, key, check) {
      await storage.transaction(async (tx) => {
        await check(tx);
        await tx.delete(v1Path(prefix, key));
      });
    },
    async v1Exists(prefix, key) {
      return (await storage.get(v1Path(prefix, key))) !== null;
    },
    async v1List(prefix, dir) {
      const base = v1Dir(prefix) + dir;
      return childrenOf(await storage.list(base), base);
    },
  };
}
