// Routes of a userpass mount, relative to `auth/<mount>/` (issue 28, item 5; reference
// §5.4): users CRUD, password and policy updates, and the login, which needs no token
// (`unauthenticated`: the /v1 handler serves it before the token check).
import { z } from 'zod';
import { badRequest, notFound } from '../../core/errors';
import { respondWith } from '../../http/logical-response';
import { secretsPath, type SecretsOpContext, type SecretsPathSpec } from '../../http/request-context';
import { authBlock } from '../tokens/tokens.paths';
import type { AuthMountEntry } from '../auth/auth-mounts.types';
import { applyTokenFields, TOKEN_FIELDS, tokenSettingsData, type LoginIssuer } from '../auth/token-settings';
import { normaliseUsername, type UserpassService } from './userpass.service';

/** Root help of a userpass mount (`GET /v1/auth/<path>?help=1`). */
export const USERPASS_HELP =
  'The userpass auth method authenticates with a username and a password. Users are created under `users/` with their policies and token settings; `login/<username>` needs no token and returns a client token in the `auth` block. Passwords are stored as memory-hard hashes.';

// Vault's framework.GenericNameWithAtRegex for user names.
const USERNAME = /^\w(?:[\w\-.@]*\w)?$/;

const usernameField = { username: { schema: z.string().regex(USERNAME, 'invalid username'), in: 'path', required: true, description: 'Username (case-insensitive).' } } as const;
const passwordField = { password: { schema: z.string(), in: 'body', description: 'Password (stored only as an argon2id hash).' } } as const;

function mountOf(ctx: SecretsOpContext): AuthMountEntry {
  const m = ctx.extra.authMount;
  if (!m) throw new Error('userpass route without its auth mount');
  return m;
}

export function createUserpassPaths(deps: { userpass: UserpassService; issuer: LoginIssuer }): SecretsPathSpec[] {
  const { userpass, issuer } = deps;
  return [
    secretsPath({
      pattern: 'users',
      summary: 'List the users.',
      operations: {
        async list(ctx) {
          const keys = await userpass.list(mountOf(ctx));
          if (keys.length === 0) throw notFound();
          return respondWith({ data: { keys } });
        },
      },
    }),
    secretsPath({
      pattern: 'users/:username',
      summary: 'Create, read, update or delete a user.',
      fields: { ...usernameField, ...passwordField, ...TOKEN_FIELDS },
      existenceCheck: (ctx) => userpass.exists(mountOf(ctx as SecretsOpContext), ctx.rawParams.username ?? ''),
      operations: {
        async read(ctx) {
          const user = await userpass.get(mountOf(ctx), ctx.data.username);
          if (!user) throw notFound();
          return respondWith({ data: tokenSettingsData(user.token) });
        },
        async create(ctx) {
          if (ctx.data.password === undefined) throw badRequest('missing password');
          await userpass.write(mountOf(ctx), ctx.data.username, { password: ctx.data.password, token: (cur) => applyTokenFields(cur, ctx.data) });
        },
        async update(ctx) {
          await userpass.write(mountOf(ctx), ctx.data.username, { password: ctx.data.password, token: (cur) => applyTokenFields(cur, ctx.data) });
        },
        async delete(ctx) {
          await userpass.delete(mountOf(ctx), ctx.data.username);
        },
      },
    }),
    secretsPath({
      pattern: 'users/:username/password',
      summary: "Change a user's password.",
      fields: { ...usernameField, ...passwordField },
      operations: {
        async update(ctx) {
          await userpass.setPassword(mountOf(ctx), ctx.data.username, ctx.data.password ?? '');
        },
      },
    }),
    secretsPath({
      pattern: 'users/:username/policies',
      summary: "Change a user's token policies.",
      fields: { ...usernameField, token_policies: TOKEN_FIELDS.token_policies, policies: TOKEN_FIELDS.policies },
      operations: {
        async update(ctx) {
          const mount = mountOf(ctx);
          if (!(await userpass.exists(mount, ctx.data.username))) throw badRequest('username does not exist');
          await userpass.write(mount, ctx.data.username, { token: (cur) => applyTokenFields(cur, { token_policies: ctx.data.token_policies, policies: ctx.data.policies }) });
        },
      },
    }),
    secretsPath({
      pattern: 'login/:username',
      summary: 'Log in with a username and password.',
      unauthenticated: true,
      fields: { ...usernameField, ...passwordField },
      operations: {
        async update(ctx) {
          const mount = mountOf(ctx);
          const name = normaliseUsername(ctx.data.username);
          const user = await userpass.login(mount, name, ctx.data.password ?? '');
          if (!user) throw badRequest('invalid username or password');
          const { id, entry } = await issuer.issue({
            mount,
            settings: user.token,
            path: `auth/${mount.path}login/${name}`,
            displayName: `${mount.path.replace(/\//g, '-')}${name}`,
            meta: { username: name },
          });
          return respondWith({ auth: authBlock(id, entry) });
        },
      },
    }),
  ];
}
