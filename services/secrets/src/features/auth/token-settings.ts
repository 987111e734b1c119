// The token settings every auth method's users and roles carry (Vault's `tokenutil`;
// reference §5.4, §5.5): the request fields, their stored form, what reads answer, and
// how a login turns them into a token (issue 28, item 5).
import { z } from 'zod';
import { badRequest } from '../../core/errors';
import { secondsField } from '../../core/duration';
import { commaList } from '../../http/request-context';
import { SYSTEM_DEFAULT_TTL, SYSTEM_MAX_TTL, type TokenService } from '../tokens/tokens.service';
import type { TokenEntry } from '../tokens/tokens.types';
import type { AuthMountEntry } from './auth-mounts.types';

export const tokenSettingsSchema = z.object({
  policies: z.array(z.string()),
  ttl: z.number().int(),
  maxTtl: z.number().int(),
  explicitMaxTtl: z.number().int(),
  noDefaultPolicy: z.boolean(),
  numUses: z.number().int(),
});
export type TokenSettings = z.output<typeof tokenSettingsSchema>;

export const DEFAULT_TOKEN_SETTINGS: TokenSettings = { policies: [], ttl: 0, maxTtl: 0, explicitMaxTtl: 0, noDefaultPolicy: false, numUses: 0 };

const str = z.string();
const list = z.union([z.array(str), str]);
const duration = z.union([z.number(), z.string()]);

/** The request fields (current names and Vault's deprecated aliases). */
export const TOKEN_FIELDS = {
  token_policies: { schema: list, in: 'body', description: 'Policies of the issued tokens (list or comma-separated).' },
  policies: { schema: list, in: 'body', description: 'Deprecated alias of token_policies.' },
  token_ttl: { schema: duration, in: 'body', description: 'Initial TTL of the issued tokens (default: the mount\'s, else 768h).' },
  ttl: { schema: duration, in: 'body', description: 'Deprecated alias of token_ttl.' },
  token_max_ttl: { schema: duration, in: 'body', description: 'Longest lifetime of the issued tokens, renewals included.' },
  max_ttl: { schema: duration, in: 'body', description: 'Deprecated alias of token_max_ttl.' },
  token_explicit_max_ttl: { schema: duration, in: 'body', description: 'Hard cap written into each issued token.' },
  token_no_default_policy: { schema: z.boolean(), in: 'body', description: 'Do not attach the default policy.' },
  token_num_uses: { schema: z.number().int(), in: 'body', description: 'Uses of each issued token (0 = unlimited).' },
  token_period: { schema: duration, in: 'body', description: 'Periodic tokens are not supported (must be 0).' },
  period: { schema: duration, in: 'body', description: 'Deprecated alias of token_period.' },
  token_type: { schema: str, in: 'body', description: '`default` or `service` (batch tokens are not supported).' },
  token_bound_cidrs: { schema: list, in: 'body', description: 'Not supported (must be empty).' },
  bound_cidrs: { schema: list, in: 'body', description: 'Deprecated alias of token_bound_cidrs (must be empty).' },
} as const;

export interface TokenFieldValues {
  token_policies?: string | string[];
  policies?: string | string[];
  token_ttl?: number | string;
  ttl?: number | string;
  token_max_ttl?: number | string;
  max_ttl?: number | string;
  token_explicit_max_ttl?: number | string;
  token_no_default_policy?: boolean;
  token_num_uses?: number;
  token_period?: number | string;
  period?: number | string;
  token_type?: string;
  token_bound_cidrs?: string | string[];
  bound_cidrs?: string | string[];
}

const normalise = (names: string[]): string[] => [...new Set(names.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();

/** `current` with the fields the request sets applied (Vault's ParseTokenFields). */
export function applyTokenFields(current: TokenSettings, data: TokenFieldValues): TokenSettings {
  const next = { ...current };
  const policies = data.token_policies ?? data.policies;
  if (policies !== undefined) next.policies = normalise(commaList(policies));
  const ttl = secondsField(data.token_ttl ?? data.ttl, data.token_ttl !== undefined ? 'token_ttl' : 'ttl');
  if (ttl !== undefined) next.ttl = ttl;
  const maxTtl = secondsField(data.token_max_ttl ?? data.max_ttl, data.token_max_ttl !== undefined ? 'token_max_ttl' : 'max_ttl');
  if (maxTtl !== undefined) next.maxTtl = maxTtl;
  const explicit = secondsField(data.token_explicit_max_ttl, 'token_explicit_max_ttl');
  if (explicit !== undefined) next.explicitMaxTtl = explicit;
  if (data.token_no_default_policy !== undefined) next.noDefaultPolicy = data.token_no_default_policy;
  if (data.token_num_uses !== undefined) {
    if (data.token_num_uses < 0) throw badRequest('token_num_uses cannot be negative');
    next.numUses = data.token_num_uses;
  }
  const period = secondsField(data.token_period ?? data.period, 'token_period') ?? 0;
  if (period > 0) throw badRequest('periodic tokens are not supported by this server');
  const type = data.token_type;
  if (type !== undefined && type !== '' && type !== 'default' && type !== 'service') {
    throw badRequest(type === 'batch' || type === 'default-batch' ? 'batch tokens are not supported by this server' : `invalid 'token_type' value ${JSON.stringify(type)}`);
  }
  if (commaList(data.token_bound_cidrs ?? data.bound_cidrs).length > 0) throw badRequest('token_bound_cidrs is not supported by this server');
  if (next.maxTtl > 0 && next.ttl > next.maxTtl) throw badRequest('"token_ttl" value must be less than or equal to "token_max_ttl" value');
  return next;
}

/** What a read of a user or role answers for its token settings (Vault's PopulateTokenData). */
export function tokenSettingsData(s: TokenSettings): Record<string, unknown> {
  return {
    token_bound_cidrs: [],
    token_explicit_max_ttl: s.explicitMaxTtl,
    token_max_ttl: s.maxTtl,
    token_no_default_policy: s.noDefaultPolicy,
    token_num_uses: s.numUses,
    token_period: 0,
    token_policies: s.policies,
    token_ttl: s.ttl,
    token_type: 'default',
  };
}

/** The smallest of the non-zero values. */
function minPositive(...values: number[]): number {
  const set = values.filter((v) => v > 0);
  return set.length === 0 ? 0 : Math.min(...set);
}

export interface LoginIssuer {
  /**
   * Issues the token of a successful login: an orphan with the settings' policies; TTL
   * from the settings, else the mount's default, else the system's; capped by the
   * settings' and the mount's maximum (Vault's RegisterAuth and its TTL rules).
   */
  issue(input: { mount: AuthMountEntry; settings: TokenSettings; path: string; displayName: string; meta: Record<string, string> }): Promise<{ id: string; entry: TokenEntry }>;
}

/** `namespaceId`: the namespace of the auth methods it serves (their tokens belong to it; absent: root). */
export function createLoginIssuer(deps: { tokens: TokenService; namespaceId?: string }): LoginIssuer {
  return {
    async issue({ mount, settings, path, displayName, meta }) {
      // Vault's RegisterAuth refuses the same (a role or user naming `root`).
      if (settings.policies.includes('root')) throw badRequest('auth methods cannot create root tokens');
      const maxTtl = minPositive(settings.maxTtl, mount.config.max_lease_ttl, SYSTEM_MAX_TTL);
      let ttl = settings.ttl || mount.config.default_lease_ttl || SYSTEM_DEFAULT_TTL;
      if (ttl > maxTtl) ttl = maxTtl;
      return deps.tokens.create(
        null,
        {
          policies: settings.policies,
          noDefaultPolicy: settings.noDefaultPolicy,
          noParent: true,
          ttl,
          explicitMaxTtl: settings.explicitMaxTtl,
          numUses: settings.numUses,
          meta,
          renewable: true,
          login: { path, displayName, authMount: mount.uuid, maxTtl },
          namespaceId: deps.namespaceId,
        },
        true,
      );
    },
  };
}
