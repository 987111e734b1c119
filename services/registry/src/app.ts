// buildApp(deps): the registry's Express app (never listens; the supertest target).
// Order of a request: kit basics (request id, helmet, log, /healthz, /readyz, /metrics)
// -> the kit's guards (spec "Errors"): maintenance (503, except /v1/admin, which switches
// it), load shedding (503), per-client rate limit (429) -> discovery, admin, modules.
import type { Express } from 'express';
import { createKitApp, guardMiddleware, mountPaths, type LoadShedder, type MaintenanceGate, type RateLimiter } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import { adminPaths, authorizeAdmin } from './features/admin/admin.paths';
import type { AdminService } from './features/admin/admin.service';
import type { AuthService } from './features/auth/auth.service';
import { discoveryPaths } from './features/discovery/discovery.paths';
import { downloadsSummaryPaths } from './features/modules/downloads-summary.paths';
import { authorizeModuleRead, modulesPaths, principalExtra } from './features/modules/modules.paths';
import type { ModuleService } from './features/modules/modules.service';
import type { PublishService } from './features/publish/publish.service';

export interface RegistryAppDeps {
  logger: Logger;
  auth: AuthService;
  modules: ModuleService;
  publish: PublishService;
  admin: AdminService;
  maxArchiveBytes: number;
  guards?: {
    limiter: RateLimiter<'api'>;
    maintenance: MaintenanceGate;
    shedder?: LoadShedder;
  };
  trustProxy?: boolean;
  /** JSON bodies (admin API); archives have their own limit. */
  maxRequestBytes?: number;
  readiness?: () => Promise<Record<string, boolean>>;
  /** One log line per request (default true; benchmarks turn it off). */
  requestLog?: boolean;
}

export function buildApp(deps: RegistryAppDeps): Express {
  return createKitApp(
    {
      service: 'registry',
      logger: deps.logger,
      errorFlavour: 'registry',
      maxRequestBytes: deps.maxRequestBytes ?? 1024 * 1024,
      ...(deps.readiness ? { readiness: deps.readiness } : {}),
      ...(deps.requestLog === undefined ? {} : { requestLog: deps.requestLog }),
    },
    (app) => {
      if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
      if (deps.guards) {
        const { limiter, maintenance, shedder } = deps.guards;
        app.use(
          guardMiddleware({
            maintenance,
            maintenanceExempt: (req) => req.path === '/v1/admin' || req.path.startsWith('/v1/admin/'),
            ...(shedder ? { shedder } : {}),
            rateLimit: { limiter, bucket: 'api' },
          }),
        );
      }
      const extra = principalExtra(deps.auth);
      const common = { extra, logger: deps.logger };
      mountPaths(app, discoveryPaths(), { prefix: '/.well-known', logger: deps.logger, help: false });
      mountPaths(app, adminPaths({ admin: deps.admin, auth: deps.auth }), { ...common, prefix: '/v1/admin', authorize: authorizeAdmin(deps.auth) });
      mountPaths(app, modulesPaths({ modules: deps.modules, publish: deps.publish, auth: deps.auth, maxArchiveBytes: deps.maxArchiveBytes }), {
        ...common,
        prefix: '/v1/modules',
        authorize: authorizeModuleRead(deps.auth),
      });
      mountPaths(app, downloadsSummaryPaths({ modules: deps.modules }), { ...common, prefix: '/v2/modules', authorize: authorizeModuleRead(deps.auth) });
    },
  );
}
