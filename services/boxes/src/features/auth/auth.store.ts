// Tokens, two-factor codes and the two-factor outbox (boxes.tokens,
// boxes.two_factor_codes, boxes.two_factor_outbox). Only hashes of tokens and codes are
// stored.
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '@selfstack/db';
import type { AccountRecord } from '../accounts/accounts.types';

export interface TokenRecord {
  id: string;
  accountId: string;
  tokenHash: string;
  description: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface OutboxRecord {
  id: string;
  accountId: string;
  deliveryMethod: string;
  destination: string;
  message: string;
  createdAt: Date;
}

export interface AuthStore {
  createToken(input: { accountId: string; tokenHash: string; description: string }): Promise<TokenRecord>;
  findToken(tokenHash: string): Promise<(TokenRecord & { account: AccountRecord }) | null>;
  deleteToken(id: string): Promise<boolean>;
  touchToken(id: string, at: Date): Promise<void>;
  createCode(input: { accountId: string; codeHash: string; expiresAt: Date }): Promise<void>;
  /**
   * Consumes a matching, unexpired, unused code (single use even under concurrency: the
   * UPDATE only succeeds while used_at is null). Every live code of the account gets an
   * attempt counted on failure; codes past `maxAttempts` stop matching.
   */
  consumeCode(accountId: string, codeHash: string, now: Date, maxAttempts: number): Promise<boolean>;
  addOutbox(input: { accountId: string; deliveryMethod: string; destination: string; message: string }): Promise<OutboxRecord>;
  listOutbox(accountId: string): Promise<OutboxRecord[]>;
}

export function createAuthStore(prisma: PrismaClient): AuthStore {
  return {
    createToken: (input) => prisma.boxToken.create({ data: { id: randomUUID(), ...input } }),
    findToken: (tokenHash) => prisma.boxToken.findUnique({ where: { tokenHash }, include: { account: true } }),
    async deleteToken(id) {
      const r = await prisma.boxToken.deleteMany({ where: { id } });
      return r.count > 0;
    },
    async touchToken(id, at) {
      await prisma.boxToken.updateMany({ where: { id }, data: { lastUsedAt: at } });
    },
    async createCode(input) {
      await prisma.boxTwoFactorCode.create({ data: { id: randomUUID(), ...input } });
    },
    async consumeCode(accountId, codeHash, now, maxAttempts) {
      const live = { accountId, usedAt: null, expiresAt: { gt: now }, attempts: { lt: maxAttempts } };
      const used = await prisma.boxTwoFactorCode.updateMany({ where: { ...live, codeHash }, data: { usedAt: now } });
      if (used.count > 0) return true;
      await prisma.boxTwoFactorCode.updateMany({ where: live, data: { attempts: { increment: 1 } } });
      return false;
    },
    addOutbox: (input) => prisma.boxTwoFactorOutbox.create({ data: { id: randomUUID(), ...input } }),
    listOutbox: (accountId) => prisma.boxTwoFactorOutbox.findMany({ where: { accountId }, orderBy: { createdAt: 'asc' } }),
  };
}
