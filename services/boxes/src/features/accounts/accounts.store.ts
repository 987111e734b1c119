// Accounts, memberships and service settings (boxes.accounts, boxes.memberships,
// boxes.settings). The only module of the accounts feature that touches Prisma.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '@selfstack/db';
import type { AccountRecord } from './accounts.types';

export class DuplicateError extends Error {
  override readonly name = 'DuplicateError';
  constructor(readonly target: string) {
    super(`duplicate ${target}`);
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

function uniqueTarget(err: unknown): string {
  const meta = (err as { meta?: { target?: unknown; driverAdapterError?: { cause?: { constraint?: { fields?: unknown } } } } }).meta;
  const fields = meta?.target ?? meta?.driverAdapterError?.cause?.constraint?.fields;
  return Array.isArray(fields) ? fields.join(',') : String(fields ?? 'value');
}

export interface NewAccount {
  username: string;
  kind: 'user' | 'organization';
  email?: string | null;
  passwordHash?: string | null;
  isAdmin?: boolean;
  profileMarkdown?: string;
  profileHtml?: string;
  avatarUrl?: string;
  twoFactorPhone?: string | null;
  twoFactorEnabled?: boolean;
}

export type AccountPatch = Partial<Omit<AccountRecord, 'id' | 'createdAt' | 'updatedAt'>>;

export interface AccountStore {
  findById(id: string): Promise<AccountRecord | null>;
  findByUsername(username: string): Promise<AccountRecord | null>;
  /** Username or e-mail address (spec: "`login` is a username or e-mail address"). */
  findByLogin(login: string): Promise<AccountRecord | null>;
  /** Throws DuplicateError when the username or e-mail is taken. */
  create(account: NewAccount): Promise<AccountRecord>;
  update(id: string, patch: AccountPatch): Promise<AccountRecord>;
  /** Idempotent; updates the role of an existing membership. */
  addMember(orgId: string, userId: string, role: 'owner' | 'member'): Promise<void>;
  removeMember(orgId: string, userId: string): Promise<boolean>;
  orgIdsOf(userId: string): Promise<string[]>;
  membersOf(orgId: string): Promise<{ username: string; role: string }[]>;
  getSetting(key: string): Promise<string | null>;
  setSetting(key: string, value: string | null): Promise<void>;
}

export function createAccountStore(prisma: PrismaClient): AccountStore {
  return {
    findById: (id) => prisma.boxAccount.findUnique({ where: { id } }),
    findByUsername: (username) => prisma.boxAccount.findUnique({ where: { username } }),
    async findByLogin(login) {
      const byName = await prisma.boxAccount.findUnique({ where: { username: login } });
      if (byName) return byName;
      return login.includes('@') ? prisma.boxAccount.findUnique({ where: { email: login.toLowerCase() } }) : null;
    },
    async create(account) {
      try {
        return await prisma.boxAccount.create({
          data: {
            id: randomUUID(),
            username: account.username,
            kind: account.kind,
            email: account.email ? account.email.toLowerCase() : null,
            passwordHash: account.passwordHash ?? null,
            isAdmin: account.isAdmin ?? false,
            profileMarkdown: account.profileMarkdown ?? '',
            profileHtml: account.profileHtml ?? '',
            avatarUrl: account.avatarUrl ?? '',
            twoFactorPhone: account.twoFactorPhone ?? null,
            twoFactorEnabled: account.twoFactorEnabled ?? false,
          },
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new DuplicateError(uniqueTarget(err));
        throw err;
      }
    },
    async update(id, patch) {
      try {
        return await prisma.boxAccount.update({ where: { id }, data: { ...patch, ...(patch.email ? { email: patch.email.toLowerCase() } : {}) } });
      } catch (err) {
        if (isUniqueViolation(err)) throw new DuplicateError(uniqueTarget(err));
        throw err;
      }
    },
    async addMember(orgId, userId, role) {
      await prisma.boxMembership.upsert({
        where: { orgId_userId: { orgId, userId } },
        create: { orgId, userId, role },
        update: { role },
      });
    },
    async removeMember(orgId, userId) {
      const r = await prisma.boxMembership.deleteMany({ where: { orgId, userId } });
      return r.count > 0;
    },
    async orgIdsOf(userId) {
      const rows = await prisma.boxMembership.findMany({ where: { userId }, select: { orgId: true } });
      return rows.map((r) => r.orgId);
    },
    async membersOf(orgId) {
      const rows = await prisma.boxMembership.findMany({ where: { orgId }, include: { user: { select: { username: true } } }, orderBy: { createdAt: 'asc' } });
      return rows.map((r) => ({ username: r.user.username, role: r.role }));
    },
    async getSetting(key) {
      const row = await prisma.boxSetting.findUnique({ where: { key } });
      return row?.value ?? null;
    },
    async setSetting(key, value) {
      if (value === null) {
        await prisma.boxSetting.deleteMany({ where: { key } });
        return;
      }
      await prisma.boxSetting.upsert({ where: { key }, create: { key, value }, update: { value } });
    },
  };
}
