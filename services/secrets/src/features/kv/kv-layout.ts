// Storage layout of the KV engines under a mount's prefix `logical/<mount uuid>/`:
//   v1  kv/<key>                         the secret's data (canonical JSON)
//   v2  config                           engine settings
//       meta/<key>                       key metadata (versions, settings)
//       ver/<hmac(key)>/<16-digit n>     one version's data
// Version rows are named by the salted HMAC of the key so that the "latest version" is
// the greatest path under a fixed-length prefix (one range read), and key names do not
// appear twice in plaintext.
import type { StorageTx } from '../barrier/storage.types';

export interface VersionMeta {
  /** The version number. */
  n: number;
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
  /**
   * The versions still recorded, ascending by number (the newest last). An array, not an
   * object keyed by version number: every write copies, extends and prunes it, and V8
   * keeps integer keys as an object's elements, whose spread, Object.keys and delete cost
   * ~5 µs per write against ~0.5 for the array (docs/secrets.md, "Thirteenth round").
   */
  versions: VersionMeta[];
}

/** Version `n` of `meta`, if recorded (searched from the newest: the usual lookup). */
export function findVersion(meta: KeyMetadata, n: number): VersionMeta | undefined {
  const { versions } = meta;
  for (let i = versions.length - 1; i >= 0; i--) {
    const v = versions[i] as VersionMeta;
    if (v.n === n) return v;
    if (v.n < n) return undefined;
  }
  return undefined;
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

// Key metadata as stored (inside the barrier's encryption). Written compact, as one JSON
// array (fields in a fixed order, each version's four fields flattened into one list, its
// times relative to the key's creation):
//   [1, created_ms, updated_ms, current_version, oldest_version, max_versions,
//    cas_required 0|1, delete_version_after, custom_metadata|null,
//    [n, created_ms - key created_ms, deletion_ms - key created_ms | null, destroyed 0|1, ...]]
// ~230 bytes for a key at 10 versions, where the earlier encoding (the KeyMetadata object as
// JSON, still read: it starts with `{`) took ~920: the metadata row is rewritten by every
// write, and its size was most of what Postgres logged per KV write (docs/secrets.md,
// "Twelfth round").
const METADATA_FORMAT = 1;

export function encodeMetadata(meta: KeyMetadata): Buffer {
  const base = meta.created_ms;
  const versions: (number | null)[] = [];
  for (const v of meta.versions) versions.push(v.n, v.created_ms - base, v.deletion_ms === null ? null : v.deletion_ms - base, v.destroyed ? 1 : 0);
  return Buffer.from(
    JSON.stringify([
      METADATA_FORMAT,
      base,
      meta.updated_ms,
      meta.current_version,
      meta.oldest_version,
      meta.max_versions,
      meta.cas_required ? 1 : 0,
      meta.delete_version_after,
      meta.custom_metadata,
      versions,
    ]),
  );
}

export class MetadataFormatError extends Error {
  constructor(detail: string) {
    super(`unreadable KV metadata: ${detail}`);
  }
}

const isInt = (x: unknown): x is number => Number.isSafeInteger(x);

/** The earlier encoding: the metadata object, its versions keyed by number. */
interface EarlierKeyMetadata extends Omit<KeyMetadata, 'versions'> {
  versions: Record<string, Omit<VersionMeta, 'n'>>;
}

/** Stored key metadata, in either encoding (compact array, or the earlier object). */
export function decodeMetadata(raw: Buffer): KeyMetadata {
  const parsed: unknown = JSON.parse(raw.toString('utf8'));
  if (!Array.isArray(parsed)) {
    const earlier = parsed as EarlierKeyMetadata;
    const versions = Object.keys(earlier.versions).map((n) => ({ n: Number(n), ...(earlier.versions[n] as Omit<VersionMeta, 'n'>) }));
    return { ...earlier, versions: versions.sort((a, b) => a.n - b.n) };
  }
  const [format, base, updated, current, oldest, max, cas, dva, custom, flat] = parsed as unknown[];
  if (format !== METADATA_FORMAT) throw new MetadataFormatError(`format ${String(format)}`);
  if (![base, updated, current, oldest, max, cas, dva].every(isInt) || !Array.isArray(flat) || flat.length % 4 !== 0) {
    throw new MetadataFormatError('bad fields');
  }
  const b = base as number;
  const versions: VersionMeta[] = [];
  for (let i = 0; i < flat.length; i += 4) {
    const deletion: unknown = flat[i + 2];
    if (!isInt(flat[i]) || !isInt(flat[i + 1]) || (deletion !== null && !isInt(deletion)) || (flat[i + 3] !== 0 && flat[i + 3] !== 1)) {
      throw new MetadataFormatError(`bad version entry at ${i / 4}`);
    }
    // Written ascending; a repeated or out-of-order number is not a record we wrote.
    if (i > 0 && (flat[i] as number) <= (flat[i - 4] as number)) throw new MetadataFormatError(`version entry at ${i / 4} out of order`);
    versions.push({ n: flat[i] as number, created_ms: b + (flat[i + 1] as number), deletion_ms: deletion === null ? null : b + deletion, destroyed: flat[i + 3] === 1 });
  }
  return {
    created_ms: b,
    updated_ms: updated as number,
    current_version: current as number,
    oldest_version: oldest as number,
    max_versions: max as number,
    cas_required: cas === 1,
    delete_version_after: dva as number,
    custom_metadata: (custom as Record<string, string> | null) ?? null,
    versions,
  };
}

/** Sorts object keys at every level, as Go's encoding/json does for maps. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * A copy of `value` whose objects have their keys sorted. Iterative: request bodies are
 * depth-bounded by the kit, but nothing here relies on it (issue 29: 4,500 levels used to
 * overflow the stack). Keys are defined, not assigned, so a `__proto__` key stays data.
 */
export function sortKeys(value: unknown): unknown {
  const holder: Record<string, unknown> = {};
  const stack: [unknown, object, string | number][] = [[value, holder, 'v']];
  while (stack.length > 0) {
    const [src, parent, key] = stack.pop() as [unknown, object, string | number];
    let copy = src;
    if (Array.isArray(src)) {
      const list: unknown[] = new Array<unknown>(src.length);
      copy = list;
      for (let i = src.length - 1; i >= 0; i--) stack.push([src[i], list, i]);
    } else if (src !== null && typeof src === 'object') {
      const obj: Record<string, unknown> = {};
      copy = obj;
      // Popped (and so defined) in sorted order.
      const keys = Object.keys(src).sort();
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(src as Record<string, unknown>)[keys[i] as string], obj, keys[i] as string]);
    }
    if (Array.isArray(parent)) (parent as unknown[])[key as number] = copy;
    else Object.defineProperty(parent, key, { value: copy, enumerable: true, writable: true, configurable: true });
  }
  return holder['v'];
}

/** tune options.version 1 -> 2: each v1 key becomes version 1 of a v2 key. */
export async function upgradeKvV1ToV2(tx: StorageTx, prefix: string, now: number, hash: (v: string) => string): Promise<void> {
  const dir = v1Dir(prefix);
  for (const path of await tx.list(dir)) {
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
      versions: [{ n: 1, created_ms: now, deletion_ms: null, destroyed: false }],
    };
    await tx.put(versionPath(prefix, hash(key), 1), data);
    await tx.put(metaPath(prefix, key), encodeMetadata(meta));
    await tx.delete(path);
  }
}
