// Who may see and change what (spec "Authentication" 1 and 5, "Errors"):
// - anyone reads public boxes; private ones only their owner, members of the owning
//   organization and admins; everybody else gets 404, as for a missing box;
// - writes need a token (401 without) and ownership or membership (403 otherwise);
// - an owner delinquent on billing gets 402 on writes and on private reads.
import { ForbiddenError, NotFoundError, PaymentRequiredError, UnauthorizedError } from '@selfstack/errors';
import type { Actor } from './accounts.types';

export function canManage(actor: Actor | null, ownerId: string): boolean {
  if (!actor) return false;
  return actor.isAdmin || actor.accountId === ownerId || actor.orgIds.includes(ownerId);
}

export function canRead(actor: Actor | null, owned: { ownerId: string; isPrivate: boolean }): boolean {
  return !owned.isPrivate || canManage(actor, owned.ownerId);
}

/** Visible owner ids for listings (search): the actor and their organizations. */
export function visibleOwners(actor: Actor | null): { all: true } | { ownerIds: readonly string[] } {
  if (actor?.isAdmin) return { all: true };
  return { ownerIds: actor ? [actor.accountId, ...actor.orgIds] : [] };
}

export function requireActor(actor: Actor | null, tokenState: TokenState): Actor {
  if (actor) return actor;
  throw new UnauthorizedError(tokenState === 'invalid' ? 'Invalid token' : 'Authentication required: send a token in the Authorization header');
}

/** `none`: no token sent; `invalid`: a token was sent but is unknown; `valid`. */
export type TokenState = 'none' | 'invalid' | 'valid';

export function notFound(what: string): NotFoundError {
  return new NotFoundError(`Resource not found: ${what}`);
}

export interface OwnedResource {
  ownerId: string;
  isPrivate: boolean;
  owner: { username: string; billingState: string };
}

/**
 * The checks every box-scoped route makes, in order: 401 (write without token), 404
 * (missing or invisible), 403 (visible but not yours), 402 (owner delinquent).
 */
export function authorizeBoxAccess(
  actor: Actor | null,
  tokenState: TokenState,
  box: OwnedResource | null,
  what: string,
  mode: 'read' | 'write',
): void {
  if (mode === 'write') requireActor(actor, tokenState);
  if (!box || !canRead(actor, box)) throw notFound(what);
  if (mode === 'write' && !canManage(actor, box.ownerId)) throw new ForbiddenError(`You are not allowed to change ${what}`);
  if (box.owner.billingState === 'delinquent' && (mode === 'write' || box.isPrivate) && !actor?.isAdmin) {
    throw new PaymentRequiredError(`The account ${box.owner.username} is delinquent on billing; the owner must update billing information`);
  }
}
