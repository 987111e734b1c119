// The userpass auth method (issue 28, item 5; reference §5.4): users with an argon2id
// password hash and token settings, stored behind the barrier at
// `auth/<mount uuid>/user/<name>`. The password is never stored, logged or returned.
import { z } from 'zod';
import { badRequest } from '../../core/errors';
import type { Storage } from '../barrier/storage.types';
import { authStoragePrefix, type AuthMountEntry } from '../auth/auth-mounts.types';
import type { PasswordHasher } from '@selfstack/password';
import { DEFAULT_TOKEN_SETTINGS, tokenSettingsSchema, type TokenSettings } from '../auth/token-settings';

const userSchema = z.object({ passwordHash: z.string(), token: tokenSettingsSchema });
export type UserEntry = z.output<typeof userSchema>;

export interface UserpassService {
  list(mount: AuthMountEntry): Promise<string[]>;
  get(mount: AuthMountEntry, username: string): Promise<UserEntry | null>;
  exists(mount: AuthMountEntry, username: string): Promise<boolean>;
  /** Creates or updates a user; a new user needs a password. */
  write(mount: AuthMountEntry, username: string, update: { password?: string; token: (current: TokenSettings) => TokenSettings }): Promise<void>;
  setPassword(mount: AuthMountEntry, username: string, password: string): Promise<void>;
  delete(mount: AuthMountEntry, username: string): Promise<void>;
  /** The user when `password` is theirs; null otherwise (unknown user included, in about the same time). */
  login(mount: AuthMountEntry, username: string, password: string): Promise<UserEntry | null>;
}

/** Vault lower-cases userpass user names. */
export const normaliseUsername = (name: string): string => name.toLowerCase();

export function createUserpassService(deps: { storage: Storage; hasher: PasswordHasher }): UserpassService {
  const { storage, hasher } = deps;
  const userPath = (mount: AuthMountEntry, name: string): string => `${authStoragePrefix(mount)}user/${normaliseUsername(name)}`;
  const decode = (raw: Buffer): UserEntry => userSchema.parse(JSON.parse(raw.toString('utf8')));
  const encode = (u: UserEntry): Buffer => Buffer.from(JSON.stringify(u));
  // Verified against when the user does not exist, so an unknown name costs a login the
  // same hash as a wrong password (no timing oracle for user names, as Vault's userpass).
  let dummy: Promise<string> | undefined;

  const checkPassword = (password: string): void => {
    if (password === '') throw badRequest('missing password');
  };

  const service: UserpassService = {
    async list(mount) {
      const prefix = `${authStoragePrefix(mount)}user/`;
      return (await storage.list(prefix)).map((p) => p.slice(prefix.length)).sort();
    },
    async get(mount, username) {
      const raw = await storage.get(userPath(mount, username));
      return raw ? decode(raw) : null;
    },
    async exists(mount, username) {
      return (await storage.get(userPath(mount, username))) !== null;
    },
    async write(mount, username, update) {
      if (username === '') throw badRequest('missing username');
      if (update.password !== undefined) checkPassword(update.password);
      // Hashed before the transaction: a row lock is never held across ~40 ms of argon2.
      const newHash = update.password !== undefined ? await hasher.hash(update.password) : undefined;
      await storage.transaction(async (tx) => {
        const path = userPath(mount, username);
        const raw = await tx.get(path, { forUpdate: true });
        const current = raw ? decode(raw) : null;
        if (!current && newHash === undefined) throw badRequest('missing password');
        const next: UserEntry = {
          passwordHash: newHash ?? (current as UserEntry).passwordHash,
          token: update.token(current?.token ?? DEFAULT_TOKEN_SETTINGS),
        };
        await tx.put(path, encode(next));
      });
    },
    async setPassword(mount, username, password) {
      checkPassword(password);
      const newHash = await hasher.hash(password);
      await storage.transaction(async (tx) => {
        const path = userPath(mount, username);
        const raw = await tx.get(path, { forUpdate: true });
        if (!raw) throw badRequest('username does not exist');
        await tx.put(path, encode({ ...decode(raw), passwordHash: newHash }));
      });
    },
    async delete(mount, username) {
      await storage.delete(userPath(mount, username));
    },
    async login(mount, username, password) {
      const user = await service.get(mount, username);
      if (!user) {
        dummy ??= hasher.hash('selfstack-userpass-dummy');
        await hasher.verify(password, await dummy);
        return null;
      }
      return (await hasher.verify(password, user.passwordHash)) ? user : null;
    },
  };
  return service;
}
