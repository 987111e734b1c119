// Storage layout of the KV engines under a mount's prefix `logical/<mount uuid>/`:
//   v1  kv/<key>                         the secret's data (canonical JSON)
//   v2  config                           engine settings
//       meta/<key>                       key metadata (versions map, settings)
//       ver/<hmac(key)>/<16-digit n>     one version's data
// Version rows are named by the salted HMAC of the key so that the "latest version" is
// the greatest path under a fixed-length prefix (one range read), and key names do not
// appear twice in plaintext.
import type { StorageTx } from '../barrier/barrier.types';

export interface VersionMeta {
  created_ms: number;
  deletion_ms: number | null;
  destroyed: boolean;
}

export interface KeyMetadata {
  created_ms: number;
  updated_ms: number;
  current_version: number;
  oldest_version: number;
  max_versions: number;
  cas_required: boolean;
  delete_version_after: number;
  custom_metadata: Record<string, string> | null;
  versions: Record<string, VersionMeta>;
}

export interface KvConfig {
  max_versions: number;
  cas_required: boolean;
  delete_version_after: number;
}

export const DEFAULT_KV_CONFIG: KvConfig = { max_versions: 0, cas_required: false, delete_version_after: 0 };
export const DEFAULT_MAX_VERSIONS = 10;

export const v1Path = (prefix: string, key: string): string => `${prefix}kv/${key}`;
export const v1Dir = (prefix: string): string => `${prefix}kv/`;
export const metaPath = (prefix: string, key: string): string => `${prefix}meta/${key}`;
export const metaDir = (prefix: string): string => `${prefix}meta/`;
export const configPath = (prefix: string): string => `${prefix}config`;
export const versionDir = (prefix: string, keyHash: string): string => `${prefix}ver/${keyHash}/`;
export const versionPath = (prefix: string, keyHash: string, version: number): string =>
  `${versionDir(prefix, keyHash)}${String(version).padStart(16, '0')}`;

/** Recursively sorts object keys, as Go's encoding/json does for maps. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** tune options.version 1 -> 2: each v1 key becomes version 1 of a v2 key. */
export async function upgradeKvV1ToV2(tx: StorageTx, prefix: string, now: number, hash: (v: string) => string): Promise<void> {
  const dir = v1Dir(prefix);
  for (const path of await tx.listPaths(dir)) {
    const key = path.slice(dir.length);
    const data = await tx.get(path);
    if (data === null) continue;
    const meta: KeyMetadata = {
      created_ms: now,
      updated_ms: now,
      current_version: 1,
      oldest_version: 0,
      max_versions: 0,
      cas_required: false,
      delete_version_after: 0,
      custom_metadata: null,
      versions: { '1': { created_ms: now, deletion_ms: null, destroyed: false } },
    };
    await tx.put(versionPath(prefix, hash(key), 1), data);
    await tx.put(metaPath(prefix, key), Buffer.from(JSON.stringify(meta)));
    await tx.delete(path);
  }
}
