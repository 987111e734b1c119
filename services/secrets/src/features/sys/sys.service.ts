// Seal lifecycle orchestration (issue 3, item 1; reference §4.1-4.6): initialisation
// writes the salt, the default policy, the mount table (kv at secret/) and the root token
// in the same transaction that creates the barrier row; unseal loads the salt and mount
// table; seal drops every cache.
import { badRequest } from '../../core/errors';
import { uuid } from '../../core/random';
import { newSalt, type Barrier, type SealStatus } from '../barrier/barrier.service';
import { hmacHex, SALT_PATH, type Salt } from '../barrier/salt';
import { newKvMount, writeInitialMounts, type MountService } from '../mounts/mounts.service';
import { writeDefaultPolicy, type PolicyService } from '../policies/policies.service';
import type { KvService } from '../kv/kv.service';
import type { TokenService } from '../tokens/tokens.service';

export const VERSION = '1.15.0+selfstack';
export const BUILD_DATE = '2026-11-22T00:00:00Z';

export interface InitResponse {
  keys: string[];
  keys_base64: string[];
  root_token: string;
}

export interface SysService {
  initialize(shares: number, threshold: number, options?: { rootTokenId?: string }): Promise<InitResponse>;
  sealStatus(): Promise<Record<string, unknown>>;
  unseal(key: string | undefined, reset: boolean): Promise<Record<string, unknown>>;
  seal(): void;
  health(): Promise<{ initialized: boolean; sealed: boolean; body: Record<string, unknown> }>;
  readonly clusterName: string;
  readonly clusterId: string;
}

/** Vault accepts an unseal share as hex, else standard base64. */
export function decodeKey(key: string): Buffer {
  const trimmed = key.trim();
  if (/^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) && trimmed.length % 4 === 0) return Buffer.from(trimmed, 'base64');
  throw badRequest("'key' must be a valid hex or base64 string");
}

export function createSysService(deps: {
  barrier: Barrier;
  salt: Salt;
  mounts: MountService;
  policies: PolicyService;
  tokens: TokenService;
  kv: KvService;
  clock: { now(): number };
}): SysService {
  const { barrier, salt, mounts, policies, tokens, kv } = deps;
  // The cluster id is derived from the install's salt once unsealed, so every replica of
  // one installation reports the same id (Vault keeps one id per cluster).
  let clusterId = uuid();
  let clusterName = `vault-cluster-${clusterId.slice(0, 8)}`;

  barrier.onUnseal(async () => {
    await salt.load();
    await mounts.load();
    const h = salt.hash('cluster-id');
    clusterId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
    clusterName = `vault-cluster-${h.slice(32, 40)}`;
  });
  barrier.onSeal(() => {
    salt.clear();
    mounts.clear();
    policies.clearCache();
    tokens.clearCache();
    kv.clearCache();
  });

  const statusBody = (s: SealStatus): Record<string, unknown> => ({
    type: 'shamir',
    initialized: s.initialized,
    sealed: s.sealed,
    t: s.t,
    n: s.n,
    progress: s.progress,
    nonce: '',
    version: VERSION,
    build_date: BUILD_DATE,
    migration: false,
    ...(s.sealed ? {} : { cluster_name: clusterName, cluster_id: clusterId }),
    recovery_seal: false,
    storage_type: 'postgresql',
  });

  return {
    get clusterId() {
      return clusterId;
    },
    get clusterName() {
      return clusterName;
    },
    async initialize(shares, threshold, options = {}) {
      let rootToken = '';
      const { keys } = await barrier.initialize(shares, threshold, async (tx) => {
        const saltBytes = newSalt();
        await tx.put(SALT_PATH, saltBytes);
        await writeDefaultPolicy(tx);
        await writeInitialMounts(tx, [newKvMount('secret/', '2')]);
        rootToken = await tokens.createRootInTx(tx, (v) => hmacHex(saltBytes, v), options.rootTokenId);
      });
      return { keys: keys.map((k) => k.toString('hex')), keys_base64: keys.map((k) => k.toString('base64')), root_token: rootToken };
    },
    async sealStatus() {
      return statusBody(await barrier.status());
    },
    async unseal(key, reset) {
      if (reset) return statusBody(await barrier.resetUnseal());
      if (key === undefined || key === '') {
        throw badRequest("'key' must be specified in request body as JSON, or 'reset' set to true");
      }
      return statusBody(await barrier.submitUnsealKey(decodeKey(key)));
    },
    seal: () => barrier.seal(),
    async health() {
      const s = await barrier.status();
      return {
        initialized: s.initialized,
        sealed: s.sealed,
        body: {
          initialized: s.initialized,
          sealed: s.sealed,
          standby: false,
          performance_standby: false,
          replication_performance_mode: 'disabled',
          replication_dr_mode: 'disabled',
          server_time_utc: Math.floor(deps.clock.now() / 1000),
          version: VERSION,
          enterprise: false,
          ...(s.sealed ? {} : { cluster_name: clusterName, cluster_id: clusterId }),
          echo_duration_ms: 0,
          clock_skew_ms: 0,
          replication_primary_canary_age_ms: 0,
        },
      };
    },
  };
}
