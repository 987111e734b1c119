// Administration: namespaces and API tokens (docs/registry.md "Tokens and namespaces").
// Every operation needs the admin token (REGISTRY_ADMIN_TOKEN), the bootstrap credential
// CI uses to create namespaces and publish tokens (terralist#725, terrareg#32).
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError } from '@selfstack/errors';
import { MAINTENANCE_KEY, parseMaintenance, serializeMaintenance, type MaintenanceState } from '@selfstack/http-kit';
import { isValidNamespaceOrName } from '../modules/names';
import { generateToken, hashToken } from '../auth/tokens';
import { NamespaceExistsError, NamespaceInUseError, NamespaceMissingError, type AdminStore } from './admin.store';
import type { ModuleStore } from '../modules/modules.store';
import type { NamespaceRecord, NamespaceView, TokenRecord, TokenView } from './admin.types';

// Path segments of /v1/modules/ that a namespace would shadow.
const RESERVED_NAMESPACES = new Set(['search']);

export interface AdminService {
  createNamespace(input: { name: string; owner?: string }): Promise<NamespaceView>;
  listNamespaces(): Promise<{ namespaces: NamespaceView[] }>;
  deleteNamespace(name: string): Promise<void>;
  createToken(input: { description?: string; namespace?: string; ttl_seconds?: number }): Promise<TokenView & { token: string }>;
  listTokens(): Promise<{ tokens: TokenView[] }>;
  deleteToken(id: string): Promise<void>;
  setVerified(namespace: string, name: string, provider: string, verified: boolean): Promise<{ namespace: string; name: string; provider: string; verified: boolean }>;
  /** Maintenance mode (spec "Errors": 503): every replica answers 503 within its check interval. */
  maintenance(): Promise<MaintenanceState>;
  setMaintenance(enabled: boolean, message?: string): Promise<MaintenanceState>;
}

export function namespaceView(n: NamespaceRecord): NamespaceView {
  return { name: n.name, owner: n.owner, created_at: n.createdAt.toISOString() };
}

export function tokenView(t: TokenRecord): TokenView {
  return {
    id: t.id,
    description: t.description,
    namespace: t.namespace,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt ? t.expiresAt.toISOString() : null,
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createAdminService(deps: { store: AdminStore; modules: Pick<ModuleStore, 'setVerified'>; clock?: () => Date }): AdminService {
  const clock = deps.clock ?? (() => new Date());
  const { store } = deps;
  return {
    async createNamespace({ name, owner }) {
      if (!isValidNamespaceOrName(name)) {
        throw new BadRequestError(`invalid namespace ${JSON.stringify(name)}: 1-64 letters, digits, "-" or "_", starting and ending with a letter or digit`);
      }
      if (RESERVED_NAMESPACES.has(name.toLowerCase())) throw new BadRequestError(`namespace ${JSON.stringify(name)} is reserved`);
      try {
        return namespaceView(await store.createNamespace(name, owner ?? ''));
      } catch (err) {
        if (err instanceof NamespaceExistsError) throw new ConflictError(err.message);
        throw err;
      }
    },
    async listNamespaces() {
      return { namespaces: (await store.listNamespaces()).map(namespaceView) };
    },
    async deleteNamespace(name) {
      try {
        if (!(await store.deleteNamespace(name))) throw new NotFoundError(`namespace ${name} does not exist`);
      } catch (err) {
        if (err instanceof NamespaceInUseError) throw new ConflictError(err.message);
        throw err;
      }
    },
    async createToken({ description, namespace, ttl_seconds }) {
      if (namespace !== undefined && !(await store.findNamespace(namespace))) {
        throw new BadRequestError(`namespace ${namespace} does not exist; create it first`);
      }
      const token = generateToken();
      let record;
      try {
        record = await store.createToken({
          id: randomUUID(),
          tokenHash: hashToken(token),
          description: description ?? '',
          namespace: namespace ?? null,
          expiresAt: ttl_seconds === undefined ? null : new Date(clock().getTime() + ttl_seconds * 1000),
        });
      } catch (err) {
        if (err instanceof NamespaceMissingError) throw new BadRequestError(err.message);
        throw err;
      }
      // The only time the secret is shown.
      return { ...tokenView(record), token };
    },
    async listTokens() {
      return { tokens: (await store.listTokens()).map(tokenView) };
    },
    async deleteToken(id) {
      if (!UUID_RE.test(id) || !(await store.deleteToken(id))) throw new NotFoundError(`token ${id} does not exist`);
    },
    async setVerified(namespace, name, provider, verified) {
      if (!(await deps.modules.setVerified(namespace, name, provider, verified))) throw new NotFoundError(`module ${namespace}/${name}/${provider} not found`);
      return { namespace, name, provider, verified };
    },
    async maintenance() {
      return parseMaintenance(await store.getSetting(MAINTENANCE_KEY));
    },
    async setMaintenance(enabled, message) {
      await store.setSetting(MAINTENANCE_KEY, serializeMaintenance(enabled, message));
      return parseMaintenance(await store.getSetting(MAINTENANCE_KEY));
    },
  };
}
