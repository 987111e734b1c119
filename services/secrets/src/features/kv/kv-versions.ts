// KV v2 version bookkeeping as pure functions (issue 3, item 6; reference §3): the rules
// every write, read and metadata change of the engine applies to a key's metadata. No
// storage here: the services (kv-data.service.ts, kv-metadata.service.ts, kv-writes.ts)
// read and write, these decide.
import { badRequest } from '../../core/errors';
import { rfc3339 } from '../../core/duration';
import { isPlainObject } from '../../core/json';
import type { StorageEntry } from '../barrier/storage.types';
import { DEFAULT_MAX_VERSIONS, encodeMetadata, versionPath, type KeyMetadata, type KvConfig, type VersionMeta } from './kv-layout';

export interface VersionInfo {
  created_time: string;
  custom_metadata: Record<string, string> | null;
  deletion_time: string;
  destroyed: boolean;
  version: number;
}

export interface MetadataInput {
  max_versions?: number;
  cas_required?: boolean;
  delete_version_after?: number;
  custom_metadata?: Record<string, unknown> | null;
}

/** `obj[key] = value` that keeps a `__proto__` key as data (docs/operations.md "Request bodies"). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7396 JSON merge patch: null deletes, objects merge recursively, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const base: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    // Defined, not assigned: a `__proto__` key is data (docs/operations.md "Request bodies").
    if (v === null) delete base[k];
    else setOwn(base, k, mergePatch(Object.hasOwn(base, k) ? base[k] : undefined, v));
  }
  return base;
}

/**
 * Direct children of `dir` among full paths under `base + dir`: `a`, `folder/`, sorted,
 * unique (what Vault's List answers, from `Storage.list`'s every path under a prefix).
 */
export function childrenOf(paths: readonly string[], base: string): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const rest = p.slice(base.length);
    if (rest === '') continue;
    const slash = rest.indexOf('/');
    out.add(slash === -1 ? rest : rest.slice(0, slash + 1));
  }
  return [...out].sort();
}

export function subkeysOf(value: unknown, depth: number, level = 1): unknown {
  if (!isPlainObject(value)) return null;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = value[k];
    setOwn(out, k, isPlainObject(v) && (depth === 0 || level < depth) ? subkeysOf(v, depth, level + 1) : null);
  }
  return out;
}

export function validateCustomMetadata(input: Record<string, unknown>): Record<string, string> {
  const problems: string[] = [];
  const keys = Object.keys(input);
  if (keys.length > 64) problems.push(`payload must contain at most 64 keys, provided ${keys.length}`);
  const out: Record<string, string> = {};
  const printable = /^[\x20-\x7e\u00a0-\uffff]*$/u;
  for (const k of keys) {
    const v = input[k];
    if (k.length === 0 || k.length > 128) problems.push(`length of key ${JSON.stringify(k)} is ${k.length} but must be 0 < len(key) <= 128`);
    if (!printable.test(k)) problems.push(`key ${JSON.stringify(k)} contains unprintable characters`);
    if (typeof v !== 'string') {
      problems.push(`value for key ${JSON.stringify(k)} must be a string`);
      continue;
    }
    if (v.length > 512) problems.push(`length of value for key ${JSON.stringify(k)} is ${v.length} but must be 0 < len(value) <= 512`);
    if (!printable.test(v)) problems.push(`value for key ${JSON.stringify(k)} contains unprintable characters`);
    setOwn(out, k, v);
  }
  if (problems.length > 0) {
    const text = problems.length === 1 ? problems[0] : `${problems.length} errors occurred:\n${problems.map((p) => `\t* ${p}`).join('\n')}\n\n`;
    throw badRequest(`custom_metadata validation failed: ${text}`);
  }
  return out;
}

export function newMetadata(now: number): KeyMetadata {
  return {
    created_ms: now,
    updated_ms: now,
    current_version: 0,
    oldest_version: 0,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
    versions: [],
  };
}

export function versionInfo(meta: KeyMetadata, version: number, v: VersionMeta): VersionInfo {
  return {
    created_time: rfc3339(v.created_ms),
    custom_metadata: meta.custom_metadata,
    deletion_time: v.deletion_ms === null ? '' : rfc3339(v.deletion_ms),
    destroyed: v.destroyed,
    version,
  };
}

/** Deleted: destroyed, or its deletion time has come (delete_version_after included). */
export const isDeleted = (v: VersionMeta, now: number): boolean => v.destroyed || (v.deletion_ms !== null && v.deletion_ms <= now);

export function effectiveMax(meta: KeyMetadata, config: KvConfig): number {
  const m = Math.max(meta.max_versions, config.max_versions);
  return m > 0 ? m : DEFAULT_MAX_VERSIONS;
}

function effectiveDeleteAfter(meta: KeyMetadata, config: KvConfig): number {
  const candidates = [meta.delete_version_after, config.delete_version_after].filter((d) => d > 0);
  return candidates.length > 0 ? Math.min(...candidates) : 0;
}

/** Vault's check-and-set rules: `cas` must be the current version (0: no key yet); required when configured. */
export function checkCas(meta: KeyMetadata | null, config: KvConfig, cas: number | undefined): void {
  if (cas === undefined) {
    if (config.cas_required || meta?.cas_required) throw badRequest('check-and-set parameter required for this call');
    return;
  }
  if ((meta?.current_version ?? 0) !== cas) throw badRequest('check-and-set parameter did not match the current version');
}

/**
 * Drops the oldest versions of `meta` (its own array, not shared) beyond `max` and
 * returns their numbers; oldest_version becomes the oldest kept once any was dropped.
 */
export function pruneTo(meta: KeyMetadata, max: number): number[] {
  const excess = meta.versions.length - max;
  if (excess <= 0) return [];
  const dropped = meta.versions.splice(0, excess).map((v) => v.n);
  meta.oldest_version = meta.versions[0]?.n ?? 0;
  return dropped;
}

/** What adding a version writes: the metadata (encoded and as decoded), the version row, the rows pruned. */
export interface VersionPlan {
  readonly meta: Buffer;
  readonly decoded: KeyMetadata;
  readonly versionRow: StorageEntry;
  readonly pruned: string[];
  readonly info: VersionInfo;
}

/**
 * Plans the next version of a key (`keyHash`: its salted hash) on top of `existing` (left
 * unchanged: it may be shared): the new metadata, the version row and the version rows to
 * prune at max_versions.
 */
export function planVersion(prefix: string, keyHash: string, existing: KeyMetadata | null, config: KvConfig, dataText: string, now: number): VersionPlan {
  const base = existing ?? newMetadata(now);
  const version = base.current_version + 1;
  const dva = effectiveDeleteAfter(base, config);
  const vmeta: VersionMeta = { n: version, created_ms: now, deletion_ms: dva > 0 ? now + dva * 1000 : null, destroyed: false };
  // Every recorded version is at most current_version: the new one goes last.
  const meta: KeyMetadata = { ...base, current_version: version, updated_ms: now, versions: [...base.versions, vmeta] };
  const pruned = pruneTo(meta, effectiveMax(meta, config)).map((n) => versionPath(prefix, keyHash, n));
  return {
    meta: encodeMetadata(meta),
    decoded: meta,
    versionRow: { path: versionPath(prefix, keyHash, version), value: Buffer.from(dataText) },
    pruned,
    info: versionInfo(meta, version, vmeta),
  };
}
