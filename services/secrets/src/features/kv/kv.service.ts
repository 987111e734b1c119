// The KV engines (issue 3, item 6; reference §2, §3), composed from one file per concern:
//   kv-v1.service.ts        KV version 1
//   kv-reads.ts             KV v2 data reads, and the physical cache's fast path
//   kv-writes.ts            KV v2 data writes: the write queue and the conditional write
//   kv-data.service.ts      KV v2 data operations (reads, writes, patch, version states)
//   kv-metadata.service.ts  KV v2 key metadata, listing, deleting a key
//   kv-config.service.ts    a KV v2 mount's configuration
//   kv-versions.ts          the version rules, as pure functions
// Pure service logic over the storage contract: it returns data (or throws SecretsError /
// returns Reply for Vault's "404 with a body" answers); the paths layer turns
// that into HTTP.
import type { Bus } from '@selfstack/bus';
import type { Clock } from '../../core/clock';
import type { LatestPeek, Storage } from '../barrier/storage.types';
import { createKvConfigService, type KvConfigService } from './kv-config.service';
import { createKvDataService, type KvDataService } from './kv-data.service';
import { createKvMetadataService, type KvMetadataService } from './kv-metadata.service';
import { createKvReads } from './kv-reads';
import { createKvV1Service, type KvV1Service } from './kv-v1.service';
import { createVersionWriter } from './kv-writes';

export interface KvService extends KvV1Service, KvDataService, KvMetadataService, Pick<KvConfigService, 'readConfig' | 'writeConfig'> {
  /** Subscribes to other replicas' configuration changes. */
  start(): Promise<void>;
  /** Seal: drops what the engine keeps decoded (configurations, last writes). */
  clearCache(): void;
}

export interface KvServiceDeps {
  /** Every read that must see the database (metadata, configuration, write guards, transactions) and every write. */
  storage: Storage;
  /**
   * Reads of secret data (KV v1 reads, KV v2 version reads), which the physical cache may
   * answer (Barrier.cachedView), with its synchronous fast path; default: `storage`, no cache.
   */
  dataReads?: { storage: Storage; peek: LatestPeek };
  clock: Clock;
  bus: Bus;
  hash: (key: string) => string;
}

export function createKvService(deps: KvServiceDeps): KvService {
  const { storage, clock, bus, hash } = deps;
  const dataReads = deps.dataReads?.storage ?? storage;
  const config = createKvConfigService({ storage, bus });
  const writer = createVersionWriter({ storage, clock, hash });
  const reads = createKvReads({ storage: dataReads, ...(deps.dataReads ? { peek: deps.dataReads.peek } : {}), clock, hash });
  return {
    ...createKvV1Service({ storage, dataReads }),
    ...createKvDataService({ reads, writer, config, clock, hash }),
    ...createKvMetadataService({ storage, writer, config, clock, hash }),
    readConfig: config.readConfig,
    writeConfig: config.writeConfig,
    start: () => config.start(),
    clearCache() {
      // (Sealing: the decoded metadata goes with the keys.)
      writer.clear();
      config.clear();
    },
  };
}
