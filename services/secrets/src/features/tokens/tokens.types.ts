// Token entries as stored behind the barrier (issue 3, item 3). The token id itself is
// never stored: the entry lives at `sys/token/id/<hmac(id)>`.

export interface TokenEntry {
  /** HMAC of the token id (the storage key). */
  readonly hash: string;
  readonly accessor: string;
  readonly policies: string[];
  readonly meta: Record<string, string> | null;
  readonly displayName: string;
  /** Remaining uses; 0 = unlimited. */
  numUses: number;
  /** Unix seconds. */
  readonly creationTime: number;
  readonly creationTtl: number;
  readonly explicitMaxTtl: number;
  /** Seconds of the current lease (creation TTL, or the last renewal's). */
  ttl: number;
  /** Epoch ms, or null for a non-expiring token. */
  expireTime: number | null;
  readonly renewable: boolean;
  readonly parent: string | null;
  readonly path: string;
  readonly issueTimeMs: number;
  lastRenewalMs: number | null;
  /**
   * Tokens issued by a login (issue 28, item 5): the auth mount's uuid, so disabling the
   * mount revokes them, and the renewal cap (seconds from creation) of the role, user or
   * mount (`token_max_ttl`, the mount's `max_lease_ttl`). Absent on other tokens.
   */
  readonly authMount?: string;
  readonly maxTtl?: number;
  /**
   * The namespace the token belongs to (its id; absent: the root namespace). Its policies
   * are that namespace's and their paths are relative to it (docs/secrets.md, "Namespaces").
   */
  readonly namespaceId?: string;
}

export interface TokenCreateParams {
  id?: string;
  policies?: string[];
  meta?: Record<string, string>;
  noParent?: boolean;
  noDefaultPolicy?: boolean;
  renewable?: boolean;
  ttl?: number;
  explicitMaxTtl?: number;
  displayName?: string;
  numUses?: number;
  type?: string;
  /** Created through auth/token/create-orphan: orphan without sudo. */
  viaOrphanEndpoint?: boolean;
  /**
   * Issued by a login (issue 28, item 5): the login path (`auth/userpass/login/alice`),
   * the display name as it is (`userpass-alice`, not prefixed with `token-`), the auth
   * mount's uuid and the renewal cap in seconds (0 = the system maximum only).
   */
  login?: { path: string; displayName: string; authMount: string; maxTtl: number };
  /** The namespace the token is created in (its id; absent or '': root). */
  namespaceId?: string;
}

/** The caller of a token operation: its entry (null only for internal/bootstrap calls). */
export interface TokenCaller {
  readonly entry: TokenEntry;
  readonly isRoot: boolean;
  readonly hasSudo: boolean;
}
