// What the secrets pipeline resolves before a path table runs, handed to the kit's
// dispatcher as `ctx.extra` (mount, token, ACL).
import { definePathFor, type OperationContext, type RequestContext, type FieldMap, type PathSpec } from '@selfstack/http-kit';
import type { Acl } from '../features/policies/acl';
import type { AuthMountEntry } from '../features/auth/auth-mounts.types';
import type { MountEntry } from '../features/mounts/mounts.types';
import type { NamespaceEntry } from '../features/namespaces/namespaces.types';
import type { TokenEntry } from '../features/tokens/tokens.types';

export interface SecretsExtra {
  /** The caller's token entry (null on unauthenticated sys routes). */
  token: TokenEntry | null;
  /** The client token as sent (needed for lookup-self's `id`). */
  tokenId: string;
  acl: Acl | null;
  /** The secrets-engine mount (KV routes only). */
  mount: MountEntry | null;
  /** `sys/`, `auth/token/`, or the mount path. */
  mountPath: string;
  /** The auth method of an `auth/<path>/` route (issue 28, item 5). */
  authMount?: AuthMountEntry;
  /** Envelope `mount_type`: `system`, `token`, `kv`, `userpass`, `approle`. */
  mountType: string;
  /** The namespace the request targets (issue 28, item 1; the root namespace without one). */
  namespace: NamespaceEntry;
  /**
   * The request namespace's path relative to the token's (`ns2/` for a token of `ns1/`
   * used in `ns1/ns2/`; '' when they are the same): policy paths are relative to the
   * token's namespace (Vault), so ACL checks see this prefix before the path.
   */
  aclPrefix: string;
}

export type SecretsOpContext<F extends FieldMap = FieldMap> = OperationContext<F, SecretsExtra>;
export type SecretsRequestContext = RequestContext<SecretsExtra>;
export type SecretsPathSpec = PathSpec<FieldMap, SecretsExtra>;

/** The Vault path the ACL sees: mount path + relative path; list paths end with `/`. */
export function aclPath(ctx: SecretsRequestContext): string {
  const full = ctx.extra.aclPrefix + ctx.extra.mountPath + ctx.path;
  return ctx.operation === 'list' && !full.endsWith('/') ? `${full}/` : full;
}

/** definePath with the secrets context type fixed (field types still inferred). */
export const secretsPath = definePathFor<SecretsExtra>();

/** Vault's comma-string-or-list fields (`policies: "a,b"` or `["a","b"]`). */
export function commaList(value: readonly unknown[] | string | undefined): string[] {
  if (value === undefined) return [];
  const items = typeof value === 'string' ? [value] : value;
  return items.flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter((s) => s !== '');
}
