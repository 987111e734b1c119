// The AppRole auth method (issue 28, item 5; reference §5.5). Storage, under the mount's
// `auth/<uuid>/` prefix, as Vault lays it out:
//   role/<name>                              the role (role ID, secret-ID rules, token settings)
//   role_id/<hmac(role id)>                  -> role name (the login's lookup)
//   secret_id/<hmac(role)>/<hmac(secret id)>  one secret ID: accessor, expiry, uses left, metadata
//   accessor/<hmac(accessor)>                -> the secret ID's storage path
// Secret IDs and role IDs appear only as HMACs under the install's salt (behind the
// barrier); the secret ID itself is returned once, when generated. A login consumes a
// use in a transaction that row-locks the secret ID, so a secret ID with N uses admits
// exactly N logins however many race for it.
import { z } from 'zod';
import { badRequest } from '../../core/errors';
import { uuid } from '../../core/random';
import type { Storage, StorageTx } from '../barrier/storage.types';
import { authStoragePrefix, type AuthMountEntry } from '../auth/auth-mounts.types';
import { DEFAULT_TOKEN_SETTINGS, tokenSettingsSchema, type TokenSettings } from '../auth/token-settings';

const roleSchema = z.object({
  name: z.string(),
  roleId: z.string(),
  bindSecretId: z.boolean(),
  secretIdNumUses: z.number().int(),
  secretIdTtl: z.number().int(),
  token: tokenSettingsSchema,
});
export type RoleEntry = z.output<typeof roleSchema>;

const secretIdSchema = z.object({
  accessor: z.string(),
  creationMs: z.number(),
  lastUpdatedMs: z.number(),
  /** null: never expires. */
  expirationMs: z.number().nullable(),
  /** Uses left; 0 = unlimited. */
  numUses: z.number().int(),
  ttl: z.number().int(),
  metadata: z.record(z.string(), z.string()),
});
export type SecretIdEntry = z.output<typeof secretIdSchema>;

export interface RoleUpdate {
  roleId?: string;
  bindSecretId?: boolean;
  secretIdNumUses?: number;
  secretIdTtl?: number;
  token: (current: TokenSettings) => TokenSettings;
}

export interface AppRoleService {
  listRoles(mount: AuthMountEntry): Promise<string[]>;
  getRole(mount: AuthMountEntry, name: string): Promise<RoleEntry | null>;
  writeRole(mount: AuthMountEntry, name: string, update: RoleUpdate): Promise<void>;
  deleteRole(mount: AuthMountEntry, name: string): Promise<void>;
  setRoleId(mount: AuthMountEntry, name: string, roleId: string): Promise<void>;
  generateSecretId(
    mount: AuthMountEntry,
    name: string,
    input: { secretId?: string; ttl?: number; numUses?: number; metadata: Record<string, string> },
  ): Promise<{ secretId: string; entry: SecretIdEntry }>;
  listSecretIdAccessors(mount: AuthMountEntry, name: string): Promise<string[]>;
  lookupSecretId(mount: AuthMountEntry, name: string, secretId: string): Promise<SecretIdEntry | null>;
  lookupAccessor(mount: AuthMountEntry, name: string, accessor: string): Promise<SecretIdEntry | null>;
  destroySecretId(mount: AuthMountEntry, name: string, secretId: string): Promise<void>;
  destroyAccessor(mount: AuthMountEntry, name: string, accessor: string): Promise<void>;
  /** Validates role ID and secret ID and consumes one use; the role, or null for bad credentials. */
  login(mount: AuthMountEntry, roleId: string, secretId: string | undefined): Promise<RoleEntry | null>;
  /** Deletes expired secret IDs of every role; returns how many. */
  tidy(mount: AuthMountEntry): Promise<number>;
}

export function createAppRoleService(deps: { storage: Storage; hash: (value: string) => string; now: () => number }): AppRoleService {
  const { storage, hash, now } = deps;
  const base = (m: AuthMountEntry): string => authStoragePrefix(m);
  const rolePath = (m: AuthMountEntry, name: string): string => `${base(m)}role/${name}`;
  const roleIdPath = (m: AuthMountEntry, roleId: string): string => `${base(m)}role_id/${hash(roleId)}`;
  const secretDir = (m: AuthMountEntry, name: string): string => `${base(m)}secret_id/${hash(name)}/`;
  const secretPath = (m: AuthMountEntry, name: string, secretId: string): string => `${secretDir(m, name)}${hash(secretId)}`;
  const accessorPath = (m: AuthMountEntry, accessor: string): string => `${base(m)}accessor/${hash(accessor)}`;
  const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
  const parseRole = (raw: Buffer): RoleEntry => roleSchema.parse(JSON.parse(raw.toString('utf8')));
  const parseSecret = (raw: Buffer): SecretIdEntry => secretIdSchema.parse(JSON.parse(raw.toString('utf8')));
  const expired = (e: SecretIdEntry): boolean => e.expirationMs !== null && e.expirationMs <= now();

  const getRole = async (m: AuthMountEntry, name: string): Promise<RoleEntry | null> => {
    const raw = await storage.get(rolePath(m, name));
    return raw ? parseRole(raw) : null;
  };
  const requireRole = async (m: AuthMountEntry, name: string): Promise<RoleEntry> => {
    const role = await getRole(m, name);
    if (!role) throw badRequest(`role ${JSON.stringify(name)} does not exist`);
    return role;
  };
  /** Removes a secret ID and its accessor index inside `tx`. */
  const removeSecret = async (tx: StorageTx, m: AuthMountEntry, path: string, entry: SecretIdEntry): Promise<void> => {
    await tx.delete(path);
    await tx.delete(accessorPath(m, entry.accessor));
  };
  const secretPathOfAccessor = async (m: AuthMountEntry, name: string, accessor: string): Promise<string | null> => {
    const raw = await storage.get(accessorPath(m, accessor));
    if (!raw) return null;
    const { path } = JSON.parse(raw.toString('utf8')) as { path: string };
    // An accessor of another role's secret ID is not this role's.
    return path.startsWith(secretDir(m, name)) ? path : null;
  };

  return {
    async listRoles(m) {
      const prefix = `${base(m)}role/`;
      return (await storage.list(prefix)).map((p) => p.slice(prefix.length)).sort();
    },
    getRole,

    async writeRole(m, name, update) {
      if (name === '') throw badRequest('missing role_name');
      await storage.transaction(async (tx) => {
        const raw = await tx.get(rolePath(m, name), { forUpdate: true });
        const current = raw ? parseRole(raw) : null;
        const roleId = update.roleId ?? current?.roleId ?? uuid();
        if (roleId === '') throw badRequest('role_id must not be empty');
        const next: RoleEntry = {
          name,
          roleId,
          bindSecretId: update.bindSecretId ?? current?.bindSecretId ?? true,
          secretIdNumUses: update.secretIdNumUses ?? current?.secretIdNumUses ?? 0,
          secretIdTtl: update.secretIdTtl ?? current?.secretIdTtl ?? 0,
          token: update.token(current?.token ?? DEFAULT_TOKEN_SETTINGS),
        };
        // Vault: a role must keep at least one constraint; CIDR bindings are not supported here.
        if (!next.bindSecretId) throw badRequest('at least one constraint should be enabled on the role');
        if (next.secretIdNumUses < 0) throw badRequest('secret_id_num_uses cannot be negative');
        if (!current || current.roleId !== roleId) {
          const owner = await tx.get(roleIdPath(m, roleId), { forUpdate: true });
          if (owner && JSON.parse(owner.toString('utf8')).name !== name) throw badRequest('role_id already in use');
          if (current) await tx.delete(roleIdPath(m, current.roleId));
          await tx.put(roleIdPath(m, roleId), json({ name }));
        }
        await tx.put(rolePath(m, name), json(next));
      });
    },

    async deleteRole(m, name) {
      await storage.transaction(async (tx) => {
        const raw = await tx.get(rolePath(m, name), { forUpdate: true });
        if (!raw) return;
        const role = parseRole(raw);
        for (const path of await tx.list(secretDir(m, name))) {
          const s = await tx.get(path);
          if (s) await removeSecret(tx, m, path, parseSecret(s));
        }
        await tx.delete(roleIdPath(m, role.roleId));
        await tx.delete(rolePath(m, name));
      });
    },

    async setRoleId(m, name, roleId) {
      await requireRole(m, name);
      await this.writeRole(m, name, { roleId, token: (t) => t });
    },

    async generateSecretId(m, name, input) {
      const role = await requireRole(m, name);
      const ttl = input.ttl ?? role.secretIdTtl;
      if (role.secretIdTtl > 0 && (ttl === 0 || ttl > role.secretIdTtl)) throw badRequest("ttl cannot be longer than the role's secret_id_ttl");
      const numUses = input.numUses ?? role.secretIdNumUses;
      if (numUses < 0) throw badRequest('num_uses cannot be negative');
      if (role.secretIdNumUses > 0 && (numUses === 0 || numUses > role.secretIdNumUses)) {
        throw badRequest("num_uses cannot be higher than the role's secret_id_num_uses");
      }
      const secretId = input.secretId ?? uuid();
      if (secretId === '') throw badRequest('secret_id must not be empty');
      const t = now();
      const entry: SecretIdEntry = {
        accessor: uuid(),
        creationMs: t,
        lastUpdatedMs: t,
        expirationMs: ttl > 0 ? t + ttl * 1000 : null,
        numUses,
        ttl,
        metadata: input.metadata,
      };
      const path = secretPath(m, name, secretId);
      try {
        await storage.transaction(async (tx) => {
          await tx.insert(path, json(entry));
          await tx.insert(accessorPath(m, entry.accessor), json({ path }));
        });
      } catch (err) {
        if (err instanceof Error && err.name === 'EntryConflictError') throw badRequest('SecretID is already registered');
        throw err;
      }
      return { secretId, entry };
    },

    async listSecretIdAccessors(m, name) {
      await requireRole(m, name);
      const paths = await storage.list(secretDir(m, name));
      const rows = await storage.getMany(paths);
      return [...rows.values()].map(parseSecret).filter((e) => !expired(e)).map((e) => e.accessor).sort();
    },

    async lookupSecretId(m, name, secretId) {
      await requireRole(m, name);
      const raw = await storage.get(secretPath(m, name, secretId));
      if (!raw) return null;
      const e = parseSecret(raw);
      return expired(e) ? null : e;
    },

    async lookupAccessor(m, name, accessor) {
      await requireRole(m, name);
      const path = await secretPathOfAccessor(m, name, accessor);
      const raw = path ? await storage.get(path) : null;
      if (!raw) return null;
      const e = parseSecret(raw);
      return expired(e) ? null : e;
    },

    async destroySecretId(m, name, secretId) {
      await requireRole(m, name);
      const path = secretPath(m, name, secretId);
      await storage.transaction(async (tx) => {
        const raw = await tx.get(path, { forUpdate: true });
        if (raw) await removeSecret(tx, m, path, parseSecret(raw));
      });
    },

    async destroyAccessor(m, name, accessor) {
      await requireRole(m, name);
      const path = await secretPathOfAccessor(m, name, accessor);
      if (!path) return;
      await storage.transaction(async (tx) => {
        const raw = await tx.get(path, { forUpdate: true });
        if (raw) await removeSecret(tx, m, path, parseSecret(raw));
      });
    },

    async login(m, roleId, secretId) {
      const owner = await storage.get(roleIdPath(m, roleId));
      if (!owner) return null;
      const role = await getRole(m, (JSON.parse(owner.toString('utf8')) as { name: string }).name);
      if (!role || role.roleId !== roleId) return null;
      if (!role.bindSecretId) return role;
      if (secretId === undefined || secretId === '') throw badRequest('missing secret_id');
      const path = secretPath(m, role.name, secretId);
      // One transaction holds the row lock from the read to the write: a concurrent login
      // waits, then finds the row as this one left it (one use fewer, or gone).
      const ok = await storage.transaction(async (tx) => {
        const raw = await tx.get(path, { forUpdate: true });
        if (!raw) return false;
        const e = parseSecret(raw);
        if (expired(e)) {
          await removeSecret(tx, m, path, e);
          return false;
        }
        if (e.numUses === 1) await removeSecret(tx, m, path, e);
        else if (e.numUses > 1) await tx.put(path, json({ ...e, numUses: e.numUses - 1, lastUpdatedMs: now() }));
        return true;
      });
      return ok ? role : null;
    },

    async tidy(m) {
      let removed = 0;
      const prefix = `${base(m)}secret_id/`;
      for (const path of await storage.list(prefix)) {
        await storage.transaction(async (tx) => {
          const raw = await tx.get(path, { forUpdate: true });
          if (!raw) return;
          const e = parseSecret(raw);
          if (!expired(e)) return;
          await removeSecret(tx, m, path, e);
          removed++;
        });
      }
      return removed;
    },
  };
}
