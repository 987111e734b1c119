// Mount table entries (issue 3, item 5; reference §4.7).

export interface MountConfig {
  default_lease_ttl: number;
  max_lease_ttl: number;
  force_no_cache: boolean;
}

export interface MountEntry {
  /** Always ends with `/` (e.g. `secret/`). */
  path: string;
  type: 'kv';
  description: string;
  accessor: string;
  uuid: string;
  config: MountConfig;
  /** KV version as a string, as Vault reports it. */
  options: { version: '1' | '2' };
  local: boolean;
  seal_wrap: boolean;
  external_entropy_access: boolean;
}

export interface EnableMountInput {
  type: string;
  description?: string;
  config?: { default_lease_ttl?: number; max_lease_ttl?: number; force_no_cache?: boolean };
  options?: Record<string, unknown> | null;
  local?: boolean;
  seal_wrap?: boolean;
  external_entropy_access?: boolean;
}

export interface TuneMountInput {
  description?: string;
  default_lease_ttl?: number;
  max_lease_ttl?: number;
  options?: Record<string, unknown> | null;
}

const prefixes = new WeakMap<object, { uuid: string; prefix: string }>();

/**
 * Storage prefix of a mount's data: everything under it is removed when unmounting. One
 * string per entry object (a hot-path map key: its hash is computed once).
 */
export function mountStoragePrefix(entry: Pick<MountEntry, 'uuid'>): string {
  let known = prefixes.get(entry);
  if (known === undefined || known.uuid !== entry.uuid) prefixes.set(entry, (known = { uuid: entry.uuid, prefix: `logical/${entry.uuid}/` }));
  return known.prefix;
}
