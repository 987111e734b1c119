// /api/v1/authenticate and /api/v1/two-factor/request-code (spec "Endpoints",
// "Authentication"; reference A.1, A.8).
import { z } from 'zod';
import { ForbiddenError } from '@selfstack/errors';
import { definePath, type AnyPathSpec } from '@selfstack/http-kit';
import type { BoxesExtra } from '../../shared/request-context';
import type { AuthService } from './auth.service';

const userSchema = z.object({
  login: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
});

export function createAuthPaths(deps: { authService: AuthService }): AnyPathSpec<BoxesExtra>[] {
  const { authService } = deps;
  return [
    definePath({
      pattern: 'authenticate',
      summary: 'Create, validate or delete an access token',
      description: 'POST logs in with a username or e-mail address and password (and a two-factor code when enabled) and returns a new token; GET answers 200 when the token sent is valid; DELETE revokes the token sent.',
      fields: {
        user: { in: 'body', schema: userSchema.nullish(), description: 'Credentials: {login, password}; login is a username or an e-mail address' },
        token: { in: 'body', schema: z.object({ description: z.string().max(1000).nullish() }).nullish(), description: 'Token attributes: {description}' },
        two_factor: { in: 'body', schema: z.object({ code: z.union([z.string(), z.number()]).nullish() }).nullish(), description: 'Two-factor code: {code}; required when two-factor authentication is enabled' },
      },
      operations: {
        async create(ctx) {
          const user = ctx.body.user;
          if (!user) throw new ForbiddenError('user.login and user.password are required');
          const code = ctx.body.two_factor?.code;
          return authService.login({
            login: user.login,
            password: user.password,
            description: ctx.body.token?.description ?? '',
            code: code === null || code === undefined ? null : String(code),
            clientKey: ctx.extra.clientKey,
          });
        },
        read: (ctx) => authService.whoami(ctx.extra.caller.actor, ctx.extra.caller.tokenState),
        async delete(ctx) {
          await authService.logout(ctx.extra.caller.actor, ctx.extra.caller.tokenState);
          return undefined;
        },
      },
    }),
    definePath({
      pattern: 'two-factor/request-code',
      summary: 'Send a two-factor code',
      description: 'Sends a short-lived, single-use two-factor code to the account\'s destination; delivery_method is currently only "sms".',
      fields: {
        user: { in: 'body', schema: userSchema.nullish(), description: 'Credentials: {login, password}' },
        two_factor: { in: 'body', schema: z.object({ delivery_method: z.string().max(32).nullish() }).nullish(), description: 'Delivery: {delivery_method: "sms"}' },
      },
      operations: {
        async create(ctx) {
          const user = ctx.body.user;
          if (!user) throw new ForbiddenError('user.login and user.password are required');
          const method = ctx.body.two_factor?.delivery_method;
          if (!method) throw new ForbiddenError('two_factor.delivery_method is required');
          return authService.requestCode({ login: user.login, password: user.password, deliveryMethod: method, clientKey: ctx.extra.clientKey });
        },
      },
    }),
  ];
}
