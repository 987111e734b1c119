// KV engine paths for both versions (docs/secrets.md, "KV version 1/2"): the console lists
// folders, reads a key with its versions and metadata, writes with check-and-set, and
// deletes, undeletes and destroys versions.
export interface KvMount {
  /** Mount path without the trailing slash, e.g. "secret". */
  readonly path: string;
  readonly version: 1 | 2;
}

export interface MountInfo {
  readonly type?: string;
  readonly description?: string;
  readonly options?: Record<string, unknown> | null;
}

/** KV mounts out of `GET /v1/sys/mounts` (`data` of the injector, or the top level). */
export function kvMounts(mounts: Record<string, MountInfo>): KvMount[] {
  const out: KvMount[] = [];
  for (const [path, m] of Object.entries(mounts)) {
    if (!m || typeof m !== 'object' || !path.endsWith('/')) continue;
    if (m.type !== 'kv' && m.type !== 'generic') continue;
    const v = m.options?.version;
    out.push({ path: path.slice(0, -1), version: String(v) === '2' ? 2 : 1 });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

const encPath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** Path of a folder listing (LIST as `GET ?list=true`). `folder` is '' or ends with '/'. */
export function listPath(mount: KvMount, folder: string): string {
  return mount.version === 2 ? `/v1/${encPath(mount.path)}/metadata/${encPath(folder)}` : `/v1/${encPath(mount.path)}/${encPath(folder)}`;
}

export function dataPath(mount: KvMount, key: string): string {
  return mount.version === 2 ? `/v1/${encPath(mount.path)}/data/${encPath(key)}` : `/v1/${encPath(mount.path)}/${encPath(key)}`;
}

export function metadataPath(mount: KvMount, key: string): string {
  return `/v1/${encPath(mount.path)}/metadata/${encPath(key)}`;
}

export function versionActionPath(mount: KvMount, action: 'delete' | 'undelete' | 'destroy', key: string): string {
  return `/v1/${encPath(mount.path)}/${action}/${encPath(key)}`;
}

/** The write body: v2 wraps the data and carries the check-and-set version. */
export function writeBody(mount: KvMount, data: Record<string, unknown>, cas?: number): unknown {
  if (mount.version === 1) return data;
  return cas === undefined ? { data } : { data, options: { cas } };
}

/** Parent folder of a key or folder path ('' at the top). */
export function parentFolder(path: string): string {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  const i = trimmed.lastIndexOf('/');
  return i < 0 ? '' : trimmed.slice(0, i + 1);
}

/** Breadcrumb steps of a path: [['a/', 'a/'], ['b/', 'a/b/'], ['c', 'a/b/c']]. */
export function crumbs(path: string): [label: string, path: string][] {
  const out: [string, string][] = [];
  let acc = '';
  for (const part of path.split('/')) {
    if (part === '') continue;
    const isLast = acc.length + part.length === path.length;
    acc += isLast ? part : `${part}/`;
    out.push([isLast ? part : `${part}/`, acc]);
  }
  return out;
}

export interface VersionMeta {
  readonly created_time?: string;
  readonly deletion_time?: string;
  readonly destroyed?: boolean;
}

export type VersionState = 'current' | 'active' | 'deleted' | 'destroyed';

/** KV v2 version rows (newest first) out of `metadata.versions`. */
export function versionRows(
  versions: Record<string, VersionMeta> | undefined,
  current: number,
  now: number = Date.now(),
): { version: number; state: VersionState; created: string; deleted: string }[] {
  return Object.entries(versions ?? {})
    .map(([v, m]) => {
      const version = Number(v);
      const deleted = m.deletion_time ?? '';
      const isDeleted = deleted !== '' && Date.parse(deleted) <= now;
      const state: VersionState = m.destroyed ? 'destroyed' : isDeleted ? 'deleted' : version === current ? 'current' : 'active';
      return { version, state, created: m.created_time ?? '', deleted };
    })
    .filter((r) => Number.isInteger(r.version))
    .sort((a, b) => b.version - a.version);
}

/**
 * Parses the secret editor's text: a JSON object whose values are kept as written. The
 * API refuses other bodies too, but this answers in the form before a round trip.
 */
export function parseSecretJson(text: string): { ok: true; data: Record<string, unknown> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: 'the secret must be a JSON object of key/value pairs' };
  return { ok: true, data: value as Record<string, unknown> };
}
