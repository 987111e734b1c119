// Tokens and two-factor codes (spec "Authentication", endpoints /api/v1/authenticate and
// /api/v1/two-factor/request-code; reference A.1, A.3, A.8).
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { AppError, ForbiddenError, UnauthorizedError } from '@selfstack/errors';
import type { Logger } from '@selfstack/logger';
import type { PasswordHasher } from '@selfstack/password';
import type { AccountStore } from '../accounts/accounts.store';
import type { AccountRecord, Actor } from '../accounts/accounts.types';
import { requireActor, type TokenState } from '../accounts/access';
import { enforceRateLimit } from '@selfstack/http-kit';
import type { BoxesRateLimiter } from '../guards/rate-limit';
import type { AuthStore } from './auth.store';
import { obfuscate, type TwoFactorSender } from './two-factor-sender';

export interface TokenJson {
  description: string;
  token: string;
  token_hash: string;
  created_at: string;
}

export interface AuthServiceDeps {
  accountStore: AccountStore;
  authStore: AuthStore;
  hasher: PasswordHasher;
  limiter: BoxesRateLimiter;
  sender: TwoFactorSender;
  logger: Logger;
  now?: () => Date;
  /** Lifetime of a two-factor code. */
  codeTtlMs: number;
  /** Wrong guesses tolerated per code before it stops working. */
  codeMaxAttempts?: number;
}

export interface ResolvedToken {
  actor: Actor | null;
  state: TokenState;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Same shape as Vagrant Cloud's tokens (`<id>.atlasv1.<secret>`, reference A.3). */
export function generateToken(): string {
  const id = randomBytes(10).toString('base64url').replace(/[-_]/g, '').slice(0, 14).padEnd(14, 'x');
  return `${id}.atlasv1.${randomBytes(48).toString('base64url')}`;
}

function hashCode(accountId: string, code: string): string {
  return createHash('sha256').update(`${accountId}:${code}`).digest('hex');
}

const TWO_FACTOR_INFO = { default_delivery_method: 'sms', delivery_methods: ['sms'] };

export interface AuthService {
  /** Resolves a raw token (from whichever header) to the calling account. */
  resolve(rawToken: string | undefined): Promise<ResolvedToken>;
  login(input: { login: string; password: string; description: string; code: string | null; clientKey: string }): Promise<TokenJson>;
  requestCode(input: { login: string; password: string; deliveryMethod: string; clientKey: string }): Promise<{ two_factor: { obfuscated_destination: string } }>;
  whoami(actor: Actor | null, state: TokenState): Promise<{ user: { username: string; email: string | null; is_admin: boolean } }>;
  logout(actor: Actor | null, state: TokenState): Promise<void>;
  /** Issues a token without a password (admin CLI, bootstrap). */
  issueToken(account: AccountRecord, description: string): Promise<TokenJson>;
}

export function createAuthService(deps: AuthServiceDeps): AuthService {
  const now = deps.now ?? (() => new Date());
  const maxAttempts = deps.codeMaxAttempts ?? 5;
  // Verifying against a real hash when the account does not exist keeps the response time
  // of "no such user" equal to "wrong password".
  let dummyHash: Promise<string> | undefined;

  async function checkPassword(login: string, password: string, clientKey: string): Promise<AccountRecord> {
    await enforceRateLimit(deps.limiter, 'login', `addr:${clientKey}`);
    await enforceRateLimit(deps.limiter, 'login', `login:${login.toLowerCase()}`);
    const account = await deps.accountStore.findByLogin(login);
    if (!account || account.kind !== 'user' || account.passwordHash === null) {
      dummyHash ??= deps.hasher.hash(randomBytes(16).toString('hex'));
      await deps.hasher.verify(password, await dummyHash);
      throw new UnauthorizedError('Invalid login or password');
    }
    if (!(await deps.hasher.verify(password, account.passwordHash))) throw new UnauthorizedError('Invalid login or password');
    return account;
  }

  async function issueToken(account: AccountRecord, description: string): Promise<TokenJson> {
    const token = generateToken();
    const tokenHash = hashToken(token);
    const row = await deps.authStore.createToken({ accountId: account.id, tokenHash, description });
    return { description: row.description, token, token_hash: tokenHash, created_at: row.createdAt.toISOString() };
  }

  return {
    async resolve(rawToken) {
      if (rawToken === undefined || rawToken === '') return { actor: null, state: 'none' };
      const tokenHash = hashToken(rawToken);
      const row = await deps.authStore.findToken(tokenHash);
      // The lookup is by hash; compare again in constant time for form's sake.
      if (!row || !timingSafeEqual(Buffer.from(row.tokenHash), Buffer.from(tokenHash))) return { actor: null, state: 'invalid' };
      const orgIds = await deps.accountStore.orgIdsOf(row.account.id);
      const t = now();
      if (!row.lastUsedAt || t.getTime() - row.lastUsedAt.getTime() > 60_000) await deps.authStore.touchToken(row.id, t);
      return {
        actor: { accountId: row.account.id, username: row.account.username, isAdmin: row.account.isAdmin, orgIds, tokenId: row.id },
        state: 'valid',
      };
    },

    async login(input) {
      const account = await checkPassword(input.login, input.password, input.clientKey);
      if (account.twoFactorEnabled) {
        const code = input.code?.trim() ?? '';
        const ok = code !== '' && (await deps.authStore.consumeCode(account.id, hashCode(account.id, code), now(), maxAttempts));
        if (!ok) {
          // Reference A.8: 406 with the delivery methods, so a client can request a code.
          const message = code === '' ? 'Two factor authentication is enabled; a two_factor code is required' : 'Invalid two factor code';
          throw new AppError(406, message, { body: { two_factor: TWO_FACTOR_INFO, errors: [message], success: false } });
        }
      }
      const token = await issueToken(account, input.description);
      deps.logger.info('token created', { username: account.username, token_id_hash: token.token_hash.slice(0, 12) });
      return token;
    },

    async requestCode(input) {
      if (input.deliveryMethod !== 'sms') throw new ForbiddenError(`Unsupported two-factor delivery method ${JSON.stringify(input.deliveryMethod)}; only "sms" is available`);
      const account = await checkPassword(input.login, input.password, input.clientKey);
      if (!account.twoFactorEnabled || !account.twoFactorPhone) throw new ForbiddenError('Two-factor authentication by sms is not enabled for this account');
      await enforceRateLimit(deps.limiter, 'two-factor', account.id);
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const expiresAt = new Date(now().getTime() + deps.codeTtlMs);
      await deps.authStore.createCode({ accountId: account.id, codeHash: hashCode(account.id, code), expiresAt });
      await deps.sender.send({
        accountId: account.id,
        username: account.username,
        deliveryMethod: 'sms',
        destination: account.twoFactorPhone,
        code,
        message: `Your verification code is ${code}. It expires in ${Math.round(deps.codeTtlMs / 60_000)} minutes.`,
        expiresAt,
      });
      return { two_factor: { obfuscated_destination: obfuscate(account.twoFactorPhone) } };
    },

    async whoami(actor, state) {
      const a = requireActor(actor, state);
      const account = await deps.accountStore.findById(a.accountId);
      if (!account) throw new UnauthorizedError('Invalid token');
      return { user: { username: account.username, email: account.email, is_admin: account.isAdmin } };
    },

    async logout(actor, state) {
      const a = requireActor(actor, state);
      if (!(await deps.authStore.deleteToken(a.tokenId))) throw new UnauthorizedError('Invalid token');
    },

    issueToken,
  };
}
