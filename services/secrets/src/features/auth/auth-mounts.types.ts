// Auth method mounts (issue 28, item 5; reference §4.10): the table behind `sys/auth`.
// `token/` is built in and always present; the others are stored in `core/auth`.
import { z } from 'zod';

export const AUTH_TYPES = ['userpass', 'approle'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

export const authMountSchema = z.object({
  /** Relative to `auth/`, always ends with `/` (`userpass/`). */
  path: z.string(),
  type: z.enum(AUTH_TYPES),
  description: z.string(),
  accessor: z.string(),
  uuid: z.string(),
  config: z.object({
    default_lease_ttl: z.number().int(),
    max_lease_ttl: z.number().int(),
    token_type: z.string(),
    listing_visibility: z.string(),
  }),
  local: z.boolean(),
  seal_wrap: z.boolean(),
});

export type AuthMountEntry = z.output<typeof authMountSchema>;

export interface EnableAuthInput {
  type: string;
  description?: string;
  config?: { default_lease_ttl?: number; max_lease_ttl?: number; token_type?: string; listing_visibility?: string };
  local?: boolean;
  seal_wrap?: boolean;
}

export interface TuneAuthInput {
  description?: string;
  default_lease_ttl?: number;
  max_lease_ttl?: number;
  token_type?: string;
  listing_visibility?: string;
}

/**
 * Storage prefix of an auth method's data (users, roles, secret IDs): removed with the
 * mount. Vault keeps credential backends under `auth/<uuid>/` the same way; when
 * namespaces come (issue 28, item 1) the table and this prefix move under the namespace.
 */
export function authStoragePrefix(entry: Pick<AuthMountEntry, 'uuid'>): string {
  return `auth/${entry.uuid}/`;
}
