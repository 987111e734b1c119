// Accounts: users and organizations share one namespace of usernames (spec "Organization
// or user"); organizations have member users. Records mirror rows of boxes.accounts.

export type AccountKind = 'user' | 'organization';
export type BillingState = 'ok' | 'delinquent';

export interface AccountRecord {
  id: string;
  username: string;
  kind: string;
  email: string | null;
  passwordHash: string | null;
  isAdmin: boolean;
  avatarUrl: string;
  profileMarkdown: string;
  profileHtml: string;
  billingState: string;
  twoFactorEnabled: boolean;
  twoFactorPhone: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Who is calling: resolved from the token once per request. */
export interface Actor {
  accountId: string;
  username: string;
  isAdmin: boolean;
  /** Organizations the user is a member of. */
  orgIds: readonly string[];
  tokenId: string;
}

/** 1-64 characters, letters, digits, `-`, `_`, `.`, starting with a letter or digit. */
export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** First path segments the service itself serves at the root (catalog lives at /:username/:name). */
export const RESERVED_USERNAMES = new Set(['api', 'healthz', 'readyz', 'metrics', 'boxes', 'uploads', 'search', 'admin']);

export function usernameProblem(username: string): string | undefined {
  if (!USERNAME_PATTERN.test(username) || username.endsWith('.')) {
    return `invalid username ${JSON.stringify(username)}: 1-64 letters, digits, "-", "_" or ".", starting with a letter or digit`;
  }
  if (RESERVED_USERNAMES.has(username.toLowerCase())) return `username ${JSON.stringify(username)} is reserved`;
  return undefined;
}

export interface OrganizationJson {
  username: string;
  avatar_url: string;
  profile_html: string;
  profile_markdown: string;
  boxes: unknown[];
}
