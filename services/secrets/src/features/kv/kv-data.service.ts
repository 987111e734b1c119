// KV v2 data operations (issue 3, item 6; reference §3): versions of a key's data. Reads
// are kv-reads.ts's (the physical cache's fast path); data writes go through the write
// queue (kv-writes.ts, optimistic); a patch and every version state change are one
// transaction holding the key's metadata row.
import { Reply } from '@selfstack/http-kit';
import { badRequest } from '../../core/errors';
import type { Clock } from '../../core/clock';
import type { StorageTx } from '../barrier/storage.types';
import type { KvConfigService } from './kv-config.service';
import { canonicalJson, decodeMetadata, encodeMetadata, findVersion, metaPath, versionPath, type VersionMeta } from './kv-layout';
import type { KvReads } from './kv-reads';
import { checkCas, isDeleted, mergePatch, planVersion, versionInfo, type VersionInfo } from './kv-versions';
import { saveVersion, type VersionWriter } from './kv-writes';

export interface KvDataService extends KvReads {
  write(prefix: string, key: string, data: Record<string, unknown>, cas: number | undefined): Promise<VersionInfo>;
  patch(prefix: string, key: string, patch: Record<string, unknown>, cas: number | undefined): Promise<VersionInfo | Reply>;
  deleteLatest(prefix: string, key: string): Promise<void>;
  deleteVersions(prefix: string, key: string, versions: number[]): Promise<void>;
  undeleteVersions(prefix: string, key: string, versions: number[]): Promise<void>;
  destroyVersions(prefix: string, key: string, versions: number[]): Promise<void>;
}

export function createKvDataService(deps: {
  reads: KvReads;
  writer: VersionWriter;
  config: Pick<KvConfigService, 'readConfig'>;
  clock: Clock;
  hash: (key: string) => string;
}): KvDataService {
  const { reads, writer, config, clock, hash } = deps;

  async function updateVersions(
    prefix: string,
    key: string,
    versions: number[],
    apply: (v: VersionMeta, n: number, tx: StorageTx, keyHash: string) => Promise<boolean> | boolean,
  ): Promise<void> {
    const mp = metaPath(prefix, key);
    await writer.changeMeta(mp, async (tx) => {
      const raw = await tx.get(mp, { forUpdate: true });
      if (!raw) return;
      const meta = decodeMetadata(raw);
      const keyHash = hash(key);
      let changed = false;
      for (const n of versions) {
        const v = findVersion(meta, n);
        if (v && (await apply(v, n, tx, keyHash))) changed = true;
      }
      if (changed) {
        meta.updated_ms = clock.now();
        await tx.put(mp, encodeMetadata(meta));
      }
    });
  }

  return {
    read: reads.read,
    subkeys: reads.subkeys,

    async write(prefix, key, data, cas) {
      const cfg = await config.readConfig(prefix);
      return writer.write(prefix, key, cfg, canonicalJson(data), cas);
    },

    async patch(prefix, key, patch, cas) {
      const cfg = await config.readConfig(prefix);
      const mp = metaPath(prefix, key);
      return writer.changeMeta(mp, async (tx) => {
        const stored = await tx.get(mp, { forUpdate: true });
        if (!stored) return new Reply(404);
        const meta = decodeMetadata(stored);
        const current = findVersion(meta, meta.current_version);
        if (!current) return new Reply(404);
        if (isDeleted(current, clock.now())) {
          return new Reply(404, { data: versionInfo(meta, meta.current_version, current) });
        }
        checkCas(meta, cfg, cas);
        const keyHash = hash(key);
        const raw = await tx.get(versionPath(prefix, keyHash, meta.current_version));
        if (!raw) return new Reply(404);
        const merged = mergePatch(JSON.parse(raw.toString('utf8')), patch);
        const plan = planVersion(prefix, keyHash, meta, cfg, canonicalJson(merged), clock.now());
        await saveVersion(tx, mp, plan, true);
        return plan.info;
      });
    },

    async deleteLatest(prefix, key) {
      const mp = metaPath(prefix, key);
      await writer.changeMeta(mp, async (tx) => {
        const raw = await tx.get(mp, { forUpdate: true });
        if (!raw) return;
        const meta = decodeMetadata(raw);
        const v = findVersion(meta, meta.current_version);
        const now = clock.now();
        if (!v || isDeleted(v, now)) return;
        v.deletion_ms = now;
        meta.updated_ms = now;
        await tx.put(mp, encodeMetadata(meta));
      });
    },
    async deleteVersions(prefix, key, versions) {
      if (versions.length === 0) throw badRequest('No version number provided');
      const now = clock.now();
      await updateVersions(prefix, key, versions, (v) => {
        if (isDeleted(v, now)) return false;
        v.deletion_ms = now;
        return true;
      });
    },
    async undeleteVersions(prefix, key, versions) {
      if (versions.length === 0) throw badRequest('No version number provided');
      await updateVersions(prefix, key, versions, (v) => {
        if (v.destroyed || v.deletion_ms === null) return false;
        v.deletion_ms = null;
        return true;
      });
    },
    async destroyVersions(prefix, key, versions) {
      if (versions.length === 0) throw badRequest('no version number provided');
      await updateVersions(prefix, key, versions, async (v, n, tx, keyHash) => {
        if (v.destroyed) return false;
        v.destroyed = true;
        await tx.delete(versionPath(prefix, keyHash, n));
        return true;
      });
    },
  };
}
