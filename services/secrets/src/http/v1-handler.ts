// The /v1 request pipeline (issue 3, items 1, 3, 4, 7): raw sys handlers first (they
// work unauthenticated and while sealed), then init/seal checks (501/503), the client
// token, the period rule, and routing by mount to the engine's path table. The kit's
// dispatcher then runs the method table, the existence check, `authorize` (the ACL) and
// validation; `respond` writes the envelope. The method table, the path decoding and the
// help test are the kit's (issue 31, item 3): this file only adds what is Vault's.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '@selfstack/errors';
import { createDispatcher, decodePath, methodOperation, parseBool, requestToken, type Dispatcher, type HelpOptions, type MountedTable, type MountOptions } from '@selfstack/http-kit';
import {
  invalidToken,
  missingToken,
  notInitializedError,
  permissionDenied,
  sealedError,
  unsupportedOperation,
  unsupportedPath,
} from '../core/errors';
import { CAP, type CapabilityName } from '../features/policies/acl';
import { createKvV1Paths, createKvV2Paths, KV_V1_HELP, KV_V2_HELP } from '../features/kv/kv.paths';
import { createSysPaths, createSysRawPaths, SYS_HELP } from '../features/sys/sys.paths';
import { createTokenPaths, TOKEN_HELP } from '../features/tokens/tokens.paths';
import { createAuthMountPaths } from '../features/auth/auth-mounts.paths';
import { createCorsPaths } from '../features/cors/cors.paths';
import type { AuthMountEntry, AuthType } from '../features/auth/auth-mounts.types';
import { createUserpassPaths, USERPASS_HELP } from '../features/userpass/userpass.paths';
import { APPROLE_HELP, createAppRolePaths } from '../features/approle/approle.paths';
import { createOpenApiPaths, type ApiTables } from '../features/openapi/openapi.paths';
import { API_INFO, type ApiTag } from '../features/openapi/openapi.service';
import type { SecretsServices } from '../services';
import { createLoginIssuer } from '../features/auth/token-settings';
import { createLoginRenewalCheck } from '../features/auth/login-renewal';
import { createNamespacePaths } from '../features/namespaces/namespaces.paths';
import { namespaceNotFound } from '../features/namespaces/namespaces.service';
import { ROOT_NAMESPACE, tokenNamespaceId, type NamespaceEntry, type NamespaceScope } from '../features/namespaces/namespaces.types';
import { StaleMountError } from '../features/mounts/mounts.service';
import type { MountEntry } from '../features/mounts/mounts.types';
import type { TokenEntry } from '../features/tokens/tokens.types';
import { API_METHODS } from './client-errors';
import { writeLogical, writeRaw } from './envelope';
import { aclPath, type SecretsExtra, type SecretsRequestContext } from './request-context';

const RAW_SYS = new Set(['init', 'seal-status', 'unseal', 'health', 'leader']);
const EXTRA_KEY = 'secretsExtra';
const RETRIED_KEY = 'secretsNamespaceRetried';
const MERGE_PATCH = 'application/merge-patch+json';

/** Help of one table: the API's info, the table's root help and tag; OpenAPI paths
 * relative to the queried path (spec "Help response"). */
const helpOf = (backendHelp: string, tag: ApiTag): HelpOptions => ({ ...API_INFO, backendHelp, tags: [tag], pathsRelativeToQuery: true });

/**
 * Vault's help request (reference §7; the anchor's wrapHelpHandler): a `help` query on any
 * method. Only a true value (`1`, `true`, `t`), so `?help=0` stays an ordinary read; the
 * method `HELP` is not one (unknown methods are 405, issue 28 item 4).
 */
export const isHelp = (req: Request): boolean => {
  // Most requests have no help key: no query parsing for them (Express 5 parses
  // req.query on every read).
  if (!req.url.includes('help=')) return false;
  const v = (req.query as Record<string, unknown>).help;
  return v !== undefined && parseBool(Array.isArray(v) ? v[0] : v) === true;
};

/** The spec's X-Secrets-Token, the anchor's X-Vault-Token, then `Authorization: Bearer`. */
const TOKEN_HEADERS = ['x-secrets-token', 'x-vault-token', 'authorization'] as const;

/** The capability a request needs: the kit's method table, a write being an update (no existence check has run). */
function operationOf(req: Request): CapabilityName {
  const op = methodOperation(req.method, req.query.list);
  return op === undefined || op === 'write' ? 'update' : op;
}

/** Whether a `/`-separated segment of `path` ends in a period (`split('/')` without the
 * per-request array). */
function hasPeriodSegment(path: string): boolean {
  let i = path.indexOf('.');
  while (i !== -1) {
    if (i + 1 === path.length || path.charCodeAt(i + 1) === 47) return true;
    i = path.indexOf('.', i + 1);
  }
  return false;
}

/** The spec's X-Secrets-Namespace, else the anchor's X-Vault-Namespace ('' when neither). */
function namespaceHeader(req: Request): string {
  const value = req.headers['x-secrets-namespace'] ?? req.headers['x-vault-namespace'];
  return typeof value === 'string' ? value.trim() : '';
}

const noRoute = (path: string): AppError => new AppError(404, [`no handler for route ${JSON.stringify(path)}. route entry not found.`]);

/** Help needs some capability on the path, none of them `deny` (reference §7). */
function helpAllowed(acl: NonNullable<SecretsExtra['acl']>, fullPath: string): boolean {
  if (acl.root) return true;
  const bits = acl.capabilities(fullPath);
  return bits !== 0 && (bits & CAP.deny) === 0;
}

const extraOf = (res: Response): SecretsExtra => (res.locals as Record<string, unknown>)[EXTRA_KEY] as SecretsExtra;

/** sys/internal/ui/mounts and sys/internal/specs/openapi answer every token by what its
 * policies reach (acl.ts `hasMountAccess`): no capability on the path itself. */
const needsNoCapability = (x: SecretsExtra, path: string): boolean =>
  x.mountPath === 'sys/' && (path.startsWith('internal/ui/mounts') || path === 'internal/specs/openapi');

/** The dispatchers of one namespace: its sys, token, KV v1 (mount checks) and auth-method tables. */
interface ScopeDispatchers {
  sys: Dispatcher<SecretsExtra>;
  /** The sys table and the raw sys handlers, for help requests only. */
  sysHelp: Dispatcher<SecretsExtra>;
  token: Dispatcher<SecretsExtra>;
  kv1: Dispatcher<SecretsExtra>;
  authMethods: Record<AuthType, Dispatcher<SecretsExtra>>;
}

/** What a request resolved before its table runs: the token, its ACL, the namespace. */
interface Caller {
  token: SecretsExtra['token'];
  tokenId: string;
  acl: SecretsExtra['acl'];
  namespace: NamespaceEntry;
  aclPrefix: string;
}

export function createV1Handler(services: SecretsServices, options: { requireRequestHeader: boolean }): RequestHandler & { tables: MountedTable[] } {
  const { barrier, tokens, namespaces } = services;

  const respond: MountOptions<SecretsExtra>['respond'] = (ctx, result, res) => {
    writeLogical(res, { requestId: ctx.requestId, mountType: ctx.extra.mountType, unknownParams: ctx.unknownParams }, result);
  };

  // Synchronous unless the token has limited uses (the dispatcher awaits only a promise).
  const authorize = (ctx: SecretsRequestContext): Promise<void> | undefined => {
    const x = ctx.extra;
    const acl = x.acl;
    // A login (issue 28, item 5): routed here without a token only for specs that say so.
    if (ctx.spec.unauthenticated && x.token === null) return;
    if (!acl) throw permissionDenied();
    if (needsNoCapability(x, ctx.path)) return;
    const full = aclPath(ctx);
    if (!acl.allows(full, ctx.operation)) throw permissionDenied();
    if (ctx.spec.sudo && !acl.allows(full, 'sudo')) throw permissionDenied();
    if (x.token && x.token.numUses > 0) return useToken(x);
  };
  // Reference §7: help needs a token allowed on the path, with any capability (the kit's
  // Dispatcher.help runs this before it looks for the path: a caller without a capability
  // learns nothing, not even whether the path exists).
  const authorizeHelp = (_req: Request, path: string, res: Response): void => {
    const x = extraOf(res);
    if (!x.acl) throw permissionDenied();
    if (needsNoCapability(x, path)) return;
    if (!helpAllowed(x.acl, x.aclPrefix + x.mountPath + path)) throw permissionDenied();
  };
  const useToken = async (x: SecretsExtra): Promise<void> => {
    x.token = await tokens.use(x.token as NonNullable<SecretsExtra['token']>);
  };

  const common: MountOptions<SecretsExtra> = {
    respond,
    authorize,
    authorizeHelp,
    extra: (_req, res) => extraOf(res),
    // Help is asked of the tables below that carry help options (Dispatcher.help).
    help: false,
    unsupportedPath: () => unsupportedPath(),
    unsupportedOperation: () => unsupportedOperation(),
    invalidRequest: (messages) => new AppError(400, messages),
  };

  const rawSpecs = createSysRawPaths({ sys: services.sys });
  const raw = createDispatcher(rawSpecs, {
    prefix: '/v1/sys',
    respond: (_ctx, result, res) => writeRaw(res, result),
    extra: (_req, res) => extraOf(res),
    help: false,
    unsupportedOperation: () => new AppError(405, []),
    invalidRequest: () => new AppError(400, []),
  });
  const kv2 = createDispatcher(createKvV2Paths({ kv: services.kv }), { ...common, prefix: '/v1/:mount', help: helpOf(KV_V2_HELP, 'secrets') });
  const namespacePaths = createNamespacePaths({ namespaces });

  /**
   * The tables of one namespace, over its mounts, policies and auth methods. Root-only
   * APIs (sys/config/cors; the raw sys routes, served before namespaces are resolved) are
   * in the root namespace's tables only ("Some APIs exist only in limited namespaces").
   */
  const buildDispatchers = (scope: NamespaceScope): ScopeDispatchers => {
    const root = scope.ns.path === '';
    const namespaceId = tokenNamespaceId(scope.ns);
    const issuer = root ? services.loginIssuer : createLoginIssuer({ tokens, namespaceId });
    const sysSpecs = [
      ...createSysPaths({ sys: services.sys, mounts: scope.mounts, policies: scope.policies, auth: scope.auth, namespaces }),
      ...createAuthMountPaths({ auth: scope.auth, tokens }),
      ...(root ? createCorsPaths({ cors: services.cors }) : []),
      ...namespacePaths,
      ...createOpenApiPaths({ mounts: scope.mounts, auth: scope.auth, tables: () => apiTables }),
    ];
    const sys = createDispatcher(sysSpecs, { ...common, prefix: '/v1/sys' });
    // Help on sys/ covers the raw handlers too (spec: help on every path, sys/health
    // included): one help table of both, used for help only (the raw ones answer themselves).
    const sysHelp = createDispatcher([...rawSpecs, ...sysSpecs], { ...common, prefix: '/v1/sys', help: helpOf(SYS_HELP, 'system') });
    const token = createDispatcher(
      createTokenPaths({ tokens, policies: scope.policies, now: () => services.clock.now(), checkRenewal, namespacePathOf: (id) => namespaces.pathOf(id) }),
      { ...common, prefix: '/v1/auth/token', help: helpOf(TOKEN_HELP, 'auth') },
    );
    const kv1 = createDispatcher(createKvV1Paths({ kv: services.kv, mounts: scope.mounts }), { ...common, prefix: '/v1/:mount', help: helpOf(KV_V1_HELP, 'secrets') });
    // Auth methods by type (issue 28, item 5), served under `auth/<path>/`.
    const authMethods: Record<AuthType, Dispatcher<SecretsExtra>> = {
      userpass: createDispatcher(createUserpassPaths({ userpass: services.userpass, issuer }), { ...common, prefix: '/v1/auth/:mount', help: helpOf(USERPASS_HELP, 'auth') }),
      approle: createDispatcher(createAppRolePaths({ approle: services.approle, issuer }), { ...common, prefix: '/v1/auth/:mount', help: helpOf(APPROLE_HELP, 'auth') }),
    };
    // What sys/internal/specs/openapi describes: this namespace's tables.
    const apiTables: ApiTables = {
      sys: sysHelp.table as ApiTables['sys'],
      token: token.table as ApiTables['token'],
      kv: (m) => (m.options.version === '2' ? kv2 : kv1).table as ApiTables['sys'],
      auth: (m) => authMethods[m.type].table as ApiTables['sys'],
    };
    return { sys, sysHelp, token, kv1, authMethods };
  };
  // A login token's renewal asks the auth method that issued it, in the token's namespace
  // (which may be an ancestor of the request's).
  const checkRenewal = async (entry: TokenEntry): Promise<void> => {
    if (entry.namespaceId === undefined) return services.loginRenewal(entry);
    const ns = await namespaces.lookupById(entry.namespaceId);
    if (!ns) throw invalidToken();
    const scope = await namespaces.scope(ns);
    return createLoginRenewalCheck({ auth: scope.auth, userpass: services.userpass, approle: services.approle })(entry);
  };
  const rootScope: NamespaceScope = { ns: ROOT_NAMESPACE, mounts: services.mounts, policies: services.policies, auth: services.auth };
  const rootDispatchers = buildDispatchers(rootScope);
  // Made on a namespace's first request; dropped with its scope (a deleted namespace).
  const scoped = new WeakMap<NamespaceScope, ScopeDispatchers>();
  const dispatchersOf = (scope: NamespaceScope): ScopeDispatchers => {
    if (scope.ns.path === '') return rootDispatchers;
    let d = scoped.get(scope);
    if (!d) scoped.set(scope, (d = buildDispatchers(scope)));
    return d;
  };
  const scopeOf = (ns: NamespaceEntry): NamespaceScope | Promise<NamespaceScope> => namespaces.cachedScope(ns) ?? namespaces.scope(ns);

  const serveAuth = (d: ScopeDispatchers, am: AuthMountEntry, x: Caller, req: Request, res: Response, done: NextFunction, path: string) =>
    run(d.authMethods[am.type], { ...x, mount: null, authMount: am, mountPath: `auth/${am.path}`, mountType: am.type }, req, res, done, path.slice(5 + am.path.length));
  /** Whether a request may be a login (a write under an auth method other than token). */
  const mayBeLogin = (req: Request, path: string): boolean =>
    (req.method === 'POST' || req.method === 'PUT') && path.startsWith('auth/') && !path.startsWith('auth/token/');
  /** The auth method of a login request (a write to a path its table marks unauthenticated). */
  const loginMethod = async (scope: NamespaceScope, d: ScopeDispatchers, path: string): Promise<AuthMountEntry | undefined> => {
    const am = await scope.auth.resolve(path);
    if (!am) return undefined;
    return d.authMethods[am.type].table.match(path.slice(5 + am.path.length))?.spec.unauthenticated ? am : undefined;
  };

  const run = (d: Dispatcher<SecretsExtra>, extra: SecretsExtra, req: Request, res: Response, next: NextFunction, rel: string): Promise<void> => {
    (res.locals as Record<string, unknown>)[EXTRA_KEY] = extra;
    return isHelp(req) ? d.help(req, res, next, rel) : d.decoded(req, res, next, rel);
  };
  // (Functions of the handler, not closures made per request.)
  const serveKv = (d: ScopeDispatchers, m: MountEntry, x: Caller, req: Request, res: Response, done: NextFunction, path: string) =>
    run(
      m.options.version === '2' ? kv2 : d.kv1,
      { token: x.token, tokenId: x.tokenId, acl: x.acl, namespace: x.namespace, aclPrefix: x.aclPrefix, mount: m, mountPath: m.path, mountType: 'kv' },
      req,
      res,
      done,
      path.length >= m.path.length ? path.slice(m.path.length) : '',
    );

  // The tables this handler dispatches to (recorded on the app so tests can walk them).
  const tables = [
    { prefix: '/v1/sys', table: raw.table, label: 'sys-raw' },
    { prefix: '/v1/sys', table: rootDispatchers.sys.table, label: 'sys' },
    { prefix: '/v1/auth/token', table: rootDispatchers.token.table, label: 'token' },
    { prefix: '/v1/:mount', table: rootDispatchers.kv1.table, label: 'kv-v1' },
    { prefix: '/v1/:mount', table: kv2.table, label: 'kv-v2' },
    { prefix: '/v1/auth/:mount', table: rootDispatchers.authMethods.userpass.table, label: 'auth-userpass' },
    { prefix: '/v1/auth/:mount', table: rootDispatchers.authMethods.approle.table, label: 'auth-approle' },
  ] as MountedTable[];

  /** Whether re-reading the namespace table resolves `fullPath` to a namespace other than `ns` (checked once per request). */
  const namespaceJustCreated = async (header: string, fullPath: string, ns: NamespaceEntry, res: Response): Promise<boolean> => {
    const locals = res.locals as Record<string, unknown>;
    if (locals[RETRIED_KEY] === true || fullPath.indexOf('/') <= 0) return false;
    locals[RETRIED_KEY] = true;
    await namespaces.refresh();
    const again = await namespaces.resolve(header, fullPath);
    return again !== null && again.ns.path !== ns.path;
  };

  const handler: RequestHandler = async (req, res, next) => {
    // Every /v1 answer (envelopes, help, errors) is no-store; envelope.ts's writers rely on it.
    res.setHeader('Cache-Control', 'no-store');
    try {
      // Reference §9: an HTTP method Vault does not know (not in the kit's method table) is
      // 405 with an empty error list.
      if (methodOperation(req.method) === undefined) throw new AppError(405, [], { headers: { Allow: API_METHODS } });
      // Spec "General request rules" 6: the header's value is `true` (Vault Agent compares
      // it exactly); `false`, `0` or `yes` do not pass.
      if (options.requireRequestHeader && (req.headers['x-secrets-request'] ?? req.headers['x-vault-request']) !== 'true') {
        throw new AppError(412, ["missing 'X-Secrets-Request' header: it must be sent with the value true"]);
      }
      // Decoded once, here (routing needs the mount): the dispatcher takes it as it is.
      const fullPath = decodePath(req.path.slice(1));
      if (req.method === 'PATCH') {
        const ct = req.headers['content-type'] ?? '';
        const media = ct.split(';')[0]?.trim().toLowerCase() ?? '';
        if (media !== MERGE_PATCH) throw new AppError(415, [`PATCH requires Content-Type of ${MERGE_PATCH}, provided ${ct}`]);
      }

      // The raw sys routes belong to the whole server, not to a namespace: served whatever
      // the namespace header says (hashi-vault-js sends one, empty, on sys/health).
      const help = isHelp(req);
      if (!help && fullPath.startsWith('sys/') && RAW_SYS.has(fullPath.slice(4).replace(/\/$/, ''))) {
        const extra: SecretsExtra = { token: null, tokenId: '', acl: null, mount: null, mountPath: 'sys/', mountType: 'system', namespace: ROOT_NAMESPACE, aclPrefix: '' };
        await run(raw, extra, req, res, next, fullPath.slice(4));
        return;
      }
      // Unsealed implies initialized: only a sealed barrier needs the stored answer.
      if (barrier.isSealed()) {
        if (!(await barrier.isInitialized())) throw notInitializedError();
        throw sealedError();
      }

      // Spec "Authentication" 3: the namespace from the header, then from leading path
      // segments; `ns1/` + `ns2/secret/x` is `ns1/ns2/secret/x` either way.
      const header = namespaceHeader(req);
      let ns = ROOT_NAMESPACE;
      let path = fullPath;
      if (header !== '' || namespaces.any()) {
        const resolved = namespaces.resolveCached(header, fullPath) ?? (await namespaces.resolve(header, fullPath));
        if (!resolved) throw namespaceNotFound();
        ns = resolved.ns;
        path = resolved.path;
      }
      // Spec "Authentication" 4: a hosted server serves namespaces only.
      if (services.hosted && ns.path === '') throw permissionDenied();
      const scope = namespaces.cachedScope(ns) ?? (await namespaces.scope(ns));
      const d = dispatchersOf(scope);

      // Logins need no token (spec "Authentication" 2): served before the token check.
      const login = !help && mayBeLogin(req, path) ? await loginMethod(scope, d, path) : undefined;
      if (login) {
        if (hasPeriodSegment(path)) throw unsupportedPath();
        await serveAuth(d, login, { token: null, tokenId: '', acl: null, namespace: ns, aclPrefix: '' }, req, res, next, path);
        return;
      }
      // Cached tokens and ACLs are taken without waiting; the rest is loaded.
      const tokenId = requestToken(req.headers, TOKEN_HEADERS) ?? '';
      if (tokenId === '') {
        // sys routes declared unauthenticated (sys/internal/specs/openapi) answer without one.
        if (!help && path.startsWith('sys/') && d.sys.table.match(path.slice(4))?.spec.unauthenticated) {
          await run(d.sys, { token: null, tokenId: '', acl: null, mount: null, mountPath: 'sys/', mountType: 'system', namespace: ns, aclPrefix: '' }, req, res, next, path.slice(4));
          return;
        }
        throw missingToken();
      }
      const entry = tokens.lookupCached(tokenId) ?? (await tokens.lookup(tokenId));
      if (!entry) throw invalidToken();
      // A token works in its own namespace and below it, with its own namespace's
      // policies, whose paths are relative to that namespace (Vault's semantics).
      let tokenScope = scope;
      if (entry.namespaceId !== tokenNamespaceId(ns)) {
        const tokenNs = entry.namespaceId === undefined ? ROOT_NAMESPACE : await namespaces.lookupById(entry.namespaceId);
        if (!tokenNs) throw invalidToken();
        if (!ns.path.startsWith(tokenNs.path)) throw permissionDenied();
        tokenScope = await scopeOf(tokenNs);
      }
      const policies = tokenScope.policies;
      const acl = policies.cachedAcl(entry.policies) ?? (await policies.aclFor(entry.policies));
      const aclPrefix = ns.path.slice(tokenScope.ns.path.length);
      // Spec: a path parameter must not end in a period (also rejects `.` and `..`).
      if (hasPeriodSegment(path)) throw unsupportedPath();

      const base: Caller = { token: entry, tokenId, acl, namespace: ns, aclPrefix };
      if (path === 'sys' || path.startsWith('sys/')) {
        await run(help ? d.sysHelp : d.sys, { ...base, mount: null, mountPath: 'sys/', mountType: 'system' }, req, res, next, path.slice(4));
        return;
      }
      if (path === 'auth/token' || path.startsWith('auth/token/')) {
        await run(d.token, { ...base, mount: null, mountPath: 'auth/token/', mountType: 'token' }, req, res, next, path.slice('auth/token/'.length));
        return;
      }
      if (path.startsWith('auth/')) {
        let am = scope.auth.match(path);
        if (!am) {
          if (!(help ? helpAllowed(acl, aclPrefix + path) : acl.allows(aclPrefix + path, operationOf(req)))) throw permissionDenied();
          am = await scope.auth.resolve(path);
          if (!am) throw noRoute(path);
        }
        await serveAuth(d, am, base, req, res, next, path);
        return;
      }
      const mounts = scope.mounts;
      let mount = mounts.match(path);
      if (!mount) {
        // A namespace another replica created a moment ago, before the bus told this one,
        // named by the path-prefix form? Once (the table read is after this request came).
        if (await namespaceJustCreated(header, fullPath, ns, res)) return handler(req, res, next);
        if (!(help ? helpAllowed(acl, aclPrefix + path) : acl.allows(aclPrefix + path, operationOf(req)))) throw permissionDenied();
        // Enabled on another replica a moment ago, before the bus told this one?
        mount = await mounts.resolve(path);
        if (!mount) throw noRoute(path);
      }
      let stale = false;
      await serveKv(d, mount, base, req, res, (err?: unknown) => {
        if (err instanceof StaleMountError) stale = true;
        else next(err);
      }, path);
      if (!stale) return;
      // Another replica disabled or upgraded the mount and this one had not heard yet;
      // nothing was written. Once more with the table as stored (no second retry).
      await mounts.refresh();
      const again = mounts.match(path);
      if (!again) throw noRoute(path);
      await serveKv(d, again, base, req, res, next, path);
    } catch (err) {
      next(err);
    }
  };
  return Object.assign(handler, { tables });
}
