// Namespaces (issue 28, item 1; spec "Authentication" 3-4; docs/secrets.md "Namespaces").
// A namespace is an isolated tenant: its own secrets-engine mounts, auth methods, policies
// and tokens. The table of every namespace is one barrier entry, `core/namespaces`.
import type { AuthMountService } from '../auth/auth-mounts.service';
import type { MountService } from '../mounts/mounts.service';
import type { PolicyService } from '../policies/policies.service';

export interface NamespaceEntry {
  /** Vault's short random id (5 base62 characters); `root` for the root namespace. */
  readonly id: string;
  /** Full path with a trailing slash (`ns1/ns2/`); '' for the root namespace. */
  readonly path: string;
  readonly custom_metadata: Record<string, string>;
}

export const ROOT_NAMESPACE: NamespaceEntry = Object.freeze({ id: 'root', path: '', custom_metadata: {} });

/** The per-namespace tables a request of that namespace is served from. */
export interface NamespaceScope {
  readonly ns: NamespaceEntry;
  readonly mounts: MountService;
  readonly policies: PolicyService;
  readonly auth: AuthMountService;
}

/** Storage prefix of everything a namespace holds besides its mounts' data (`logical/<uuid>/`, `auth/<uuid>/`). */
export function namespaceStoragePrefix(id: string): string {
  return `namespaces/${id}/`;
}

/** The namespace id a token of `ns` stores (none for root). */
export function tokenNamespaceId(ns: NamespaceEntry): string | undefined {
  return ns.path === '' ? undefined : ns.id;
}

/** Names a namespace may not take (the paths Vault reserves in every namespace). */
export const RESERVED_NAMESPACE_NAMES = new Set(['root', 'sys', 'audit', 'auth', 'cubbyhole', 'identity']);

/** `ns1/ns2`, `/ns1/ns2/`, `ns1//ns2` -> `ns1/ns2/`; '' for root (also `root`, `/`). */
export function canonicalNamespacePath(raw: string): string {
  const parts = raw.split('/').filter((p) => p !== '');
  if (parts.length === 1 && parts[0] === 'root') return '';
  return parts.length === 0 ? '' : `${parts.join('/')}/`;
}
