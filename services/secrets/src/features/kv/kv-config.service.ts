// A KV v2 mount's engine configuration (`<mount>/config`; reference §3): read through a
// per-process cache that every replica drops on the `secrets.kvconfig` bus channel when
// any of them writes it (docs/secrets.md, "Replicas").
import type { Bus } from '@selfstack/bus';
import type { Storage } from '../barrier/storage.types';
import { configPath, DEFAULT_KV_CONFIG, type KvConfig } from './kv-layout';

export const KV_CONFIG_CHANNEL = 'secrets.kvconfig';

export interface KvConfigService {
  readConfig(prefix: string): Promise<KvConfig>;
  writeConfig(prefix: string, input: Partial<KvConfig>): Promise<void>;
  /** Subscribes to other replicas' changes (and drops everything on a bus reconnect). */
  start(): Promise<void>;
  /** Drops every cached configuration (seal). */
  clear(): void;
}

/** `storage` must read the database itself (not the physical cache): this cache is coherent through its own channel. */
export function createKvConfigService(deps: { storage: Storage; bus: Bus }): KvConfigService {
  const { storage, bus } = deps;
  const configs = new Map<string, KvConfig>();
  // Bumped by every invalidation: a read that raced with one does not install what it read.
  let generation = 0;
  const drop = (prefix: string | null): void => {
    generation++;
    if (prefix === null) configs.clear();
    else configs.delete(prefix);
  };

  async function readConfig(prefix: string): Promise<KvConfig> {
    const hit = configs.get(prefix);
    if (hit) return hit;
    const started = generation;
    const raw = await storage.get(configPath(prefix));
    const config = raw ? { ...DEFAULT_KV_CONFIG, ...(JSON.parse(raw.toString('utf8')) as KvConfig) } : DEFAULT_KV_CONFIG;
    if (generation === started) configs.set(prefix, config);
    return config;
  }

  return {
    readConfig,
    async writeConfig(prefix, input) {
      const next: KvConfig = { ...(await readConfig(prefix)), ...input };
      await storage.put(configPath(prefix), Buffer.from(JSON.stringify(next)));
      drop(prefix);
      void bus.publish(KV_CONFIG_CHANNEL, prefix).catch(() => undefined);
    },
    async start() {
      await bus.subscribe(KV_CONFIG_CHANNEL, (prefix) => drop(prefix));
      bus.onReconnect(() => drop(null));
    },
    clear: () => drop(null),
  };
}
