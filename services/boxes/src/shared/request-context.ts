// What every boxes route handler receives besides its validated fields (the kit's
// `ctx.extra`), computed once per request in app.ts.
import { ForbiddenError } from '@selfstack/errors';
import type { Caller } from '../features/boxes/boxes.service';

export interface BoxesExtra {
  caller: Caller;
  /** Client address, the key of per-client rate limits. */
  clientKey: string;
}

/**
 * Missing or invalid parameters. The spec maps them to 403 ("forbidden use of the
 * system: a required request parameter is missing or a parameter is invalid; the errors
 * key explains"), one message per problem.
 */
export function invalidRequest(messages: string[]): ForbiddenError {
  return new ForbiddenError(messages);
}
