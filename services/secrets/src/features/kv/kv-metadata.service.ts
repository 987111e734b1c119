// KV v2 key metadata (issue 3, item 6; reference §3): settings and version history of a
// key, its listing, and deleting a key with every version. Reads go to the database
// (not the physical cache); every change is one transaction holding the metadata row.
import { badRequest, notFound } from '../../core/errors';
import type { Clock } from '../../core/clock';
import { goDuration, rfc3339 } from '../../core/duration';
import type { Storage } from '../barrier/storage.types';
import type { KvConfigService } from './kv-config.service';
import { decodeMetadata, encodeMetadata, metaDir, metaPath, sortKeys, versionDir, versionPath } from './kv-layout';
import { childrenOf, effectiveMax, mergePatch, newMetadata, pruneTo, validateCustomMetadata, type MetadataInput } from './kv-versions';
import type { VersionWriter } from './kv-writes';

export interface KvMetadataService {
  exists(prefix: string, key: string): Promise<boolean>;
  readMetadata(prefix: string, key: string): Promise<Record<string, unknown> | null>;
  writeMetadata(prefix: string, key: string, input: MetadataInput, patch: boolean): Promise<void>;
  deleteMetadata(prefix: string, key: string): Promise<void>;
  list(prefix: string, dir: string): Promise<string[]>;
}

/** `storage` must read the database itself; changes to a metadata row go through `writer.changeMeta`. */
export function createKvMetadataService(deps: {
  storage: Storage;
  writer: Pick<VersionWriter, 'changeMeta'>;
  config: Pick<KvConfigService, 'readConfig'>;
  clock: Clock;
  hash: (key: string) => string;
}): KvMetadataService {
  const { storage, writer, config, clock, hash } = deps;
  return {
    async exists(prefix, key) {
      return (await storage.get(metaPath(prefix, key))) !== null;
    },

    async readMetadata(prefix, key) {
      const raw = await storage.get(metaPath(prefix, key));
      if (!raw) return null;
      const meta = decodeMetadata(raw);
      const versions: Record<string, unknown> = {};
      for (const v of meta.versions) {
        versions[String(v.n)] = {
          created_time: rfc3339(v.created_ms),
          deletion_time: v.deletion_ms === null ? '' : rfc3339(v.deletion_ms),
          destroyed: v.destroyed,
        };
      }
      return {
        cas_required: meta.cas_required,
        created_time: rfc3339(meta.created_ms),
        current_version: meta.current_version,
        custom_metadata: meta.custom_metadata,
        delete_version_after: goDuration(meta.delete_version_after),
        max_versions: meta.max_versions,
        oldest_version: meta.oldest_version,
        updated_time: rfc3339(meta.updated_ms),
        versions,
      };
    },

    async writeMetadata(prefix, key, input, patch) {
      let custom: Record<string, unknown> | null | undefined = input.custom_metadata;
      if (input.max_versions !== undefined && input.max_versions < 0) throw badRequest('max_versions must be greater than or equal to 0');
      const mp = metaPath(prefix, key);
      // Read before the transaction, never inside it: a configuration not cached goes to the
      // pool, and transactions that hold every connection (waiting on this key's row lock)
      // would wait for it forever.
      const cfg = await config.readConfig(prefix);
      await writer.changeMeta(mp, async (tx) => {
        const raw = await tx.get(mp, { forUpdate: true });
        const existing = raw ? decodeMetadata(raw) : null;
        if (patch && !existing) throw notFound();
        const now = clock.now();
        const meta = existing ?? newMetadata(now);
        if (input.max_versions !== undefined) meta.max_versions = input.max_versions;
        if (input.cas_required !== undefined) meta.cas_required = input.cas_required;
        if (input.delete_version_after !== undefined) meta.delete_version_after = input.delete_version_after;
        if (custom !== undefined) {
          if (patch && custom !== null) custom = mergePatch(meta.custom_metadata ?? {}, custom) as Record<string, unknown>;
          const validated = custom === null ? {} : validateCustomMetadata(custom);
          meta.custom_metadata = Object.keys(validated).length > 0 ? (sortKeys(validated) as Record<string, string>) : null;
        }
        meta.updated_ms = now;
        // Prune immediately when max_versions shrinks below the stored count.
        const max = effectiveMax(meta, cfg);
        const keyHash = hash(key);
        for (const oldest of pruneTo(meta, max)) await tx.delete(versionPath(prefix, keyHash, oldest));
        if (existing) await tx.put(mp, encodeMetadata(meta));
        else await tx.insert(mp, encodeMetadata(meta));
      });
    },

    async deleteMetadata(prefix, key) {
      const mp = metaPath(prefix, key);
      await writer.changeMeta(mp, async (tx) => {
        await tx.get(mp, { forUpdate: true });
        await tx.delete(mp);
        await tx.deletePrefix(versionDir(prefix, hash(key)));
      });
    },

    async list(prefix, dir) {
      const base = metaDir(prefix) + dir;
      return childrenOf(await storage.list(base), base);
    },
  };
}
