// Who is calling: the admin (bootstrap token from REGISTRY_ADMIN_TOKEN), an API token
// (scoped to one namespace, or read-only), or nobody. Decides reads and publishing.
import { ForbiddenError, UnauthorizedError } from '@selfstack/errors';
import type { TokenRecord } from '../admin/admin.types';
import { hashToken, secretsEqual } from './tokens';

export type Principal =
  | { kind: 'admin' }
  | { kind: 'token'; tokenId: string; namespace: string | null }
  | { kind: 'anonymous' }
  /** A token was presented but is unknown or expired. */
  | { kind: 'invalid' };

export interface TokenLookup {
  findTokenByHash(hash: string): Promise<TokenRecord | null>;
}

export interface AuthService {
  authenticate(token: string | undefined): Promise<Principal>;
  /** Reads: public, or any valid token when REGISTRY_PUBLIC_READS=false. */
  assertCanRead(principal: Principal): void;
  assertAdmin(principal: Principal): void;
  /** Publishing and deleting versions in `namespace`. */
  assertCanPublish(principal: Principal, namespace: string): void;
  readonly publicReads: boolean;
}

export interface AuthServiceDeps {
  tokens: TokenLookup;
  adminToken: string | undefined;
  publicReads: boolean;
  clock?: () => Date;
}

const MISSING = 'a registry token is required: send "Authorization: Bearer <token>"';
const INVALID = 'invalid or expired registry token';

export function createAuthService(deps: AuthServiceDeps): AuthService {
  const clock = deps.clock ?? (() => new Date());
  const requireValid = (p: Principal) => {
    if (p.kind === 'anonymous') throw new UnauthorizedError(MISSING);
    if (p.kind === 'invalid') throw new UnauthorizedError(INVALID);
  };
  return {
    publicReads: deps.publicReads,
    async authenticate(token) {
      if (token === undefined || token === '') return { kind: 'anonymous' };
      if (deps.adminToken !== undefined && secretsEqual(token, deps.adminToken)) return { kind: 'admin' };
      const record = await deps.tokens.findTokenByHash(hashToken(token));
      if (!record) return { kind: 'invalid' };
      if (record.expiresAt !== null && record.expiresAt.getTime() <= clock().getTime()) return { kind: 'invalid' };
      return { kind: 'token', tokenId: record.id, namespace: record.namespace };
    },
    assertCanRead(p) {
      // With public reads a bad stored token must not lock users out of public modules
      // (the lesson of hashicorp/vagrant#9238), so it is ignored for reads.
      if (deps.publicReads) return;
      requireValid(p);
    },
    assertAdmin(p) {
      requireValid(p);
      if (p.kind !== 'admin') throw new ForbiddenError('this operation needs the admin token');
    },
    assertCanPublish(p, namespace) {
      requireValid(p);
      if (p.kind === 'admin') return;
      if (p.kind === 'token' && p.namespace === namespace) return;
      throw new ForbiddenError(
        p.kind === 'token' && p.namespace === null
          ? 'this token is read-only; it cannot publish or delete'
          : `this token may not publish or delete in namespace ${namespace}`,
      );
    },
  };
}

/** Per-request data every registry path table receives as `ctx.extra`. */
export interface RegistryExtra {
  principal: Principal;
}
