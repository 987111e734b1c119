// Administration (issue 5 item 1): what the admin CLI and the bootstrap admin do. No
// HTTP routes: these operations need shell access to the deployment's configuration.
import { renderMarkdown } from '../../shared/markdown';
import type { PasswordHasher } from '@selfstack/password';
import { DuplicateError, type AccountStore } from '../accounts/accounts.store';
import { usernameProblem, type AccountRecord, type BillingState } from '../accounts/accounts.types';
import type { AuthStore, OutboxRecord } from '../auth/auth.store';
import { hashToken, type AuthService, type TokenJson } from '../auth/auth.service';
import { MAINTENANCE_KEY, parseMaintenance, serializeMaintenance, type MaintenanceState } from '@selfstack/http-kit';

export class AdminError extends Error {
  override readonly name = 'AdminError';
}

export interface AdminService {
  createUser(input: { username: string; email?: string | undefined; password: string; admin?: boolean; phone?: string | undefined }): Promise<AccountRecord>;
  createOrganization(input: { username: string; owner?: string | undefined; profile?: string | undefined }): Promise<AccountRecord>;
  addMember(input: { org: string; user: string; role: 'owner' | 'member' }): Promise<void>;
  removeMember(input: { org: string; user: string }): Promise<void>;
  listMembers(org: string): Promise<{ username: string; role: string }[]>;
  setBilling(username: string, state: BillingState): Promise<AccountRecord>;
  setAdmin(username: string, admin: boolean): Promise<AccountRecord>;
  setPassword(username: string, password: string): Promise<void>;
  setTwoFactor(username: string, phone: string | null): Promise<AccountRecord>;
  setMaintenance(enabled: boolean, message?: string): Promise<MaintenanceState>;
  maintenance(): Promise<MaintenanceState>;
  createToken(username: string, description: string): Promise<TokenJson>;
  outbox(username: string): Promise<OutboxRecord[]>;
  /**
   * Creates the configured admin when missing (or makes the existing account an admin)
   * and, when a fixed token is configured, makes sure it exists. Safe on every start.
   */
  bootstrap(input: { username: string; email?: string | undefined; password: string; token?: string | undefined }): Promise<{ created: boolean }>;
}

export function createAdminService(deps: { accountStore: AccountStore; authStore: AuthStore; authService: AuthService; hasher: PasswordHasher }): AdminService {
  const { accountStore, authStore, hasher } = deps;

  async function account(username: string, kind?: 'user' | 'organization'): Promise<AccountRecord> {
    const a = await accountStore.findByUsername(username);
    if (!a) throw new AdminError(`no such account: ${username}`);
    if (kind && a.kind !== kind) throw new AdminError(`${username} is a ${a.kind}, not a ${kind}`);
    return a;
  }

  function checkName(username: string): void {
    const problem = usernameProblem(username);
    if (problem) throw new AdminError(problem);
  }

  async function create(fn: () => Promise<AccountRecord>, what: string): Promise<AccountRecord> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DuplicateError) throw new AdminError(`${what} is already taken`);
      throw err;
    }
  }

  return {
    async createUser(input) {
      checkName(input.username);
      if (input.password.length < 8) throw new AdminError('the password must be at least 8 characters');
      if (input.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new AdminError(`invalid e-mail address ${input.email}`);
      const passwordHash = await hasher.hash(input.password);
      return create(
        () =>
          accountStore.create({
            username: input.username,
            kind: 'user',
            email: input.email ?? null,
            passwordHash,
            isAdmin: input.admin ?? false,
            twoFactorPhone: input.phone ?? null,
            twoFactorEnabled: input.phone !== undefined,
          }),
        `username ${input.username} or e-mail ${input.email ?? ''}`,
      );
    },

    async createOrganization(input) {
      checkName(input.username);
      const owner = input.owner !== undefined ? await account(input.owner, 'user') : undefined;
      const profile = input.profile ?? '';
      const org = await create(
        () => accountStore.create({ username: input.username, kind: 'organization', profileMarkdown: profile, profileHtml: renderMarkdown(profile) }),
        `username ${input.username}`,
      );
      if (owner) await accountStore.addMember(org.id, owner.id, 'owner');
      return org;
    },

    async addMember(input) {
      const org = await account(input.org, 'organization');
      const user = await account(input.user, 'user');
      await accountStore.addMember(org.id, user.id, input.role);
    },

    async removeMember(input) {
      const org = await account(input.org, 'organization');
      const user = await account(input.user, 'user');
      if (!(await accountStore.removeMember(org.id, user.id))) throw new AdminError(`${input.user} is not a member of ${input.org}`);
    },

    async listMembers(org) {
      return accountStore.membersOf((await account(org, 'organization')).id);
    },

    async setBilling(username, state) {
      return accountStore.update((await account(username)).id, { billingState: state });
    },

    async setAdmin(username, admin) {
      return accountStore.update((await account(username, 'user')).id, { isAdmin: admin });
    },

    async setPassword(username, password) {
      if (password.length < 8) throw new AdminError('the password must be at least 8 characters');
      await accountStore.update((await account(username, 'user')).id, { passwordHash: await hasher.hash(password) });
    },

    async setTwoFactor(username, phone) {
      const a = await account(username, 'user');
      if (phone !== null && phone.replace(/\D/g, '').length < 4) throw new AdminError('the phone number needs at least 4 digits');
      return accountStore.update(a.id, { twoFactorEnabled: phone !== null, twoFactorPhone: phone });
    },

    async setMaintenance(enabled, message) {
      await accountStore.setSetting(MAINTENANCE_KEY, serializeMaintenance(enabled, message));
      return parseMaintenance(await accountStore.getSetting(MAINTENANCE_KEY));
    },

    async maintenance() {
      return parseMaintenance(await accountStore.getSetting(MAINTENANCE_KEY));
    },

    async createToken(username, description) {
      return deps.authService.issueToken(await account(username, 'user'), description);
    },

    async outbox(username) {
      return authStore.listOutbox((await account(username, 'user')).id);
    },

    async bootstrap(input) {
      let admin = await accountStore.findByUsername(input.username);
      let created = false;
      if (!admin) {
        checkName(input.username);
        try {
          admin = await accountStore.create({ username: input.username, kind: 'user', email: input.email ?? null, passwordHash: await hasher.hash(input.password), isAdmin: true });
          created = true;
        } catch (err) {
          // Another replica bootstrapped at the same moment.
          if (!(err instanceof DuplicateError)) throw err;
          admin = await account(input.username);
        }
      }
      if (admin.kind !== 'user') throw new AdminError(`bootstrap admin ${input.username} exists and is an organization`);
      if (!admin.isAdmin) admin = await accountStore.update(admin.id, { isAdmin: true });
      if (input.token !== undefined) {
        const tokenHash = hashToken(input.token);
        const existing = await authStore.findToken(tokenHash);
        if (!existing) await authStore.createToken({ accountId: admin.id, tokenHash, description: 'bootstrap admin token (BOXES_BOOTSTRAP_ADMIN_TOKEN)' });
        else if (existing.accountId !== admin.id) throw new AdminError('BOXES_BOOTSTRAP_ADMIN_TOKEN belongs to another account');
      }
      return { created };
    },
  };
}
