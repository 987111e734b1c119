// Builds every store and service of the secrets server from its clients. Shared by
// main.ts (the composition root) and the integration tests, so both run the same graph.
import type { Bus } from '@selfstack/bus';
import type { PrismaClient } from '@selfstack/db';
import type { Pool } from 'pg';
import { entryCacheOptions, envSchema } from './config';
import { systemClock, type Clock } from './core/clock';
import { createBarrier, type Barrier } from './features/barrier/barrier.service';
import { createBarrierStore, createEntryStore } from './features/barrier/barrier.store';
import { createCachedStore, type CachedStore, type EntryCacheOptions } from './features/barrier/entry-cache';
import type { BarrierStore } from './features/barrier/barrier.types';
import type { Storage } from './features/barrier/storage.types';
import { createSalt, type Salt } from './features/barrier/salt';
import { createKvService, type KvService } from './features/kv/kv.service';
import { createMountService, type MountService } from './features/mounts/mounts.service';
import { createPolicyService, type PolicyService } from './features/policies/policies.service';
import { createSysService, type SysService } from './features/sys/sys.service';
import { createTokenService, type TokenService } from './features/tokens/tokens.service';
import { createAuthMountService, type AuthMountService } from './features/auth/auth-mounts.service';
import { createPasswordHasher, type PasswordHasher } from '@selfstack/password';
import { createLoginIssuer, type LoginIssuer } from './features/auth/token-settings';
import { createUserpassService, type UserpassService } from './features/userpass/userpass.service';
import { createAppRoleService, type AppRoleService } from './features/approle/approle.service';
import { createCorsService, type CorsService } from './features/cors/cors.service';
import { createLoginRenewalCheck, type LoginRenewalCheck } from './features/auth/login-renewal';
import { createNamespaceService, type NamespaceService } from './features/namespaces/namespaces.service';
import { ROOT_NAMESPACE } from './features/namespaces/namespaces.types';

/** The top-level namespace of the hosted mode (spec "Authentication" 4). */
export const HOSTED_NAMESPACE = 'admin';

/** The physical cache as SECRETS_CACHE_MB / SECRETS_CACHE_TTL configure it by default. */
export const DEFAULT_ENTRY_CACHE: EntryCacheOptions = entryCacheOptions(envSchema.parse({}));

export interface SecretsServices {
  barrier: Barrier;
  /** The physical cache in front of the entry store (its stats are for tests and operators). */
  physicalCache: Pick<CachedStore, 'stats' | 'purge'>;
  salt: Salt;
  sys: SysService;
  tokens: TokenService;
  policies: PolicyService;
  mounts: MountService;
  kv: KvService;
  /** Auth methods (issue 28, item 5): the table and the two method types. */
  auth: AuthMountService;
  userpass: UserpassService;
  approle: AppRoleService;
  loginIssuer: LoginIssuer;
  loginRenewal: LoginRenewalCheck;
  /** sys/config/cors (issue 28, item 4). */
  cors: CorsService;
  /** Namespaces and their tables (issue 28, item 1). */
  namespaces: NamespaceService;
  /**
   * The hosted mode (spec "Authentication" 4): the `admin` namespace exists from the first
   * unseal on and a request that names no namespace (the root namespace) is refused.
   */
  hosted: boolean;
  clock: Clock;
  /** Subscribes the caches to the bus (invalidation across replicas). */
  start(): Promise<void>;
  /** Stops the physical cache's heartbeat (before the bus closes). */
  stop(): void;
}

export function createSecretsServices(deps: {
  prisma?: PrismaClient;
  /** node-postgres pool for the entry store (the hot path); required with `prisma`. */
  pool?: Pool;
  /** The entry store (any `Storage` of ciphertext: the in-memory one in unit tests) and the barrier row's store. */
  stores?: { entryStore: Storage; barrierStore: BarrierStore };
  bus: Bus;
  clock?: Clock;
  /** The physical cache of KV data reads; default DEFAULT_ENTRY_CACHE, `maxBytes: 0` disables it. */
  cache?: EntryCacheOptions;
  /** userpass password hashing (tests may pass cheaper argon2id parameters). */
  passwordHasher?: PasswordHasher;
  /** The hosted mode (SECRETS_HOSTED / HCL `hosted`); default false. */
  hosted?: boolean;
}): SecretsServices {
  const clock = deps.clock ?? systemClock;
  const stores =
    deps.stores ??
    (deps.prisma && deps.pool
      ? { entryStore: createEntryStore({ pool: deps.pool }), barrierStore: createBarrierStore({ prisma: deps.prisma }) }
      : undefined);
  if (!stores) throw new Error('createSecretsServices needs prisma and pool, or stores');
  // The physical cache wraps the entry store. Only KV data reads go through its cached
  // view (and only the KV v2 read path gets its synchronous fast path); everything else
  // reads the database through its uncached view, whose writes invalidate it all the same.
  const entryStore = createCachedStore(stores.entryStore, { bus: deps.bus, ...(deps.cache ?? DEFAULT_ENTRY_CACHE) });
  const barrier = createBarrier({ storage: entryStore.uncached, barrierStore: stores.barrierStore });
  // Nothing cached survives a seal; an unseal starts empty (writes made meanwhile by other
  // replicas were invalidated by messages this process may have applied or not).
  barrier.onSeal(() => entryStore.purge());
  barrier.onUnseal(async () => entryStore.purge());
  const salt = createSalt({ barrier });
  const hash = (v: string): string => salt.hash(v);
  const tokens = createTokenService({ storage: barrier, salt, clock, bus: deps.bus });
  const policies = createPolicyService({ storage: barrier, bus: deps.bus });
  const mounts = createMountService({ storage: barrier, bus: deps.bus, now: () => clock.now(), hash });
  const kv = createKvService({ storage: barrier, dataReads: barrier.cachedView(entryStore), clock, bus: deps.bus, hash });
  const sys = createSysService({ barrier, salt, mounts, policies, tokens, kv, clock });
  const auth = createAuthMountService({ storage: barrier, bus: deps.bus });
  barrier.onUnseal(() => auth.load());
  barrier.onSeal(() => auth.clear());
  const userpass = createUserpassService({ storage: barrier, hasher: deps.passwordHasher ?? createPasswordHasher() });
  const approle = createAppRoleService({ storage: barrier, hash, now: () => clock.now() });
  const loginIssuer = createLoginIssuer({ tokens });
  const loginRenewal = createLoginRenewalCheck({ auth, userpass, approle });
  const cors = createCorsService({ storage: barrier, bus: deps.bus });
  barrier.onUnseal(() => cors.load());
  barrier.onSeal(() => cors.clear());
  const namespaces = createNamespaceService({ storage: barrier, bus: deps.bus, tokens, now: () => clock.now(), hash, root: { ns: ROOT_NAMESPACE, mounts, policies, auth } });
  const hosted = deps.hosted ?? false;
  barrier.onUnseal(async () => {
    await namespaces.load();
    if (hosted) await namespaces.ensure(HOSTED_NAMESPACE);
  });
  barrier.onSeal(() => namespaces.clear());
  return {
    barrier,
    physicalCache: entryStore,
    salt,
    sys,
    tokens,
    policies,
    mounts,
    kv,
    auth,
    userpass,
    approle,
    loginIssuer,
    loginRenewal,
    cors,
    namespaces,
    hosted,
    clock,
    async start() {
      await entryStore.start();
      await tokens.start();
      await policies.start();
      await mounts.start();
      await kv.start();
      await auth.start();
      await cors.start();
      await namespaces.start();
    },
    stop() {
      entryStore.stop();
    },
  };
}

/**
 * Starts `services` on an uninitialised database as a one-share install (as dev mode does)
 * and unseals it: for benchmarks and tests that drive the services directly. Returns the
 * root token and the storage prefix (`logical/<uuid>/`) of the default `secret/` KV mount.
 */
export async function startOneShareInstall(services: SecretsServices): Promise<{ rootToken: string; secretPrefix: string }> {
  await services.start();
  const init = await services.sys.initialize(1, 1);
  await services.sys.unseal(init.keys[0] as string, false);
  const mount = services.mounts.match('secret/data/x');
  if (!mount) throw new Error('secret/ is not mounted');
  return { rootToken: init.root_token, secretPrefix: `logical/${mount.uuid}/` };
}
