// buildApp(deps): the box-hosting service as an Express app (never listens itself).
// Order of a request: kit basics (request id, helmet, log, /healthz, /readyz, /metrics)
// -> the kit's guards: maintenance gate (503), load shedding (503), per-client rate limit (429) -> the API table under /api/v1
// -> the root table (catalog and downloads) -> 404/405 in the boxes error shape.
import type { Express, Request } from 'express';
import type { BlobStore } from '@selfstack/blob';
import { NotFoundError } from '@selfstack/errors';
import { createKitApp, guardMiddleware, mountPaths, type LoadShedder, type MaintenanceGate, type MountOptions } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import { createAccountPaths } from './features/accounts/accounts.paths';
import { createAuthPaths } from './features/auth/auth.paths';
import type { AuthService } from './features/auth/auth.service';
import { extractToken } from './features/auth/token-source';
import { createBoxPaths } from './features/boxes/boxes.paths';
import type { BoxService } from './features/boxes/boxes.service';
import { createDownloadPaths } from './features/downloads/downloads.paths';
import type { DownloadService } from './features/downloads/downloads.service';
import type { BoxesRateLimiter } from './features/guards/rate-limit';
import { createUploadPaths } from './features/uploads/uploads.paths';
import type { UploadService } from './features/uploads/uploads.service';
import { invalidRequest, type BoxesExtra } from './shared/request-context';

export interface AppDeps {
  authService: AuthService;
  boxService: BoxService;
  uploadService: UploadService;
  downloadService: DownloadService;
  blobs: BlobStore;
  limiter: BoxesRateLimiter;
  maintenance: MaintenanceGate;
  /** Load shedding (503) above a number of requests in flight; none when unset. */
  shedder?: LoadShedder | undefined;
  logger: Logger;
  /** Public base URL (BOXES_PUBLIC_URL); default: derived from each request's Host. */
  publicUrl?: string | undefined;
  /** Express `trust proxy` (behind nginx: X-Forwarded-For/-Proto). */
  trustProxy?: boolean | string | number | undefined;
  /** Largest JSON body (uploads are streamed and not subject to it). */
  maxRequestBytes?: number | undefined;
  readiness?: () => Promise<Record<string, boolean>>;
}

export function buildApp(deps: AppDeps): Express {
  const publicUrl = deps.publicUrl?.replace(/\/+$/, '');
  return createKitApp(
    {
      service: 'boxes',
      logger: deps.logger,
      errorFlavour: 'boxes',
      // vagrant sends Content-Type: application/json on every request; a body without one
      // is still read as JSON.
      jsonWithoutContentType: true,
      ...(deps.maxRequestBytes ? { maxRequestBytes: deps.maxRequestBytes } : {}),
      ...(deps.readiness ? { readiness: deps.readiness } : {}),
    },
    (app) => {
      if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);

      app.use(
        guardMiddleware({
          maintenance: deps.maintenance,
          ...(deps.shedder ? { shedder: deps.shedder } : {}),
          rateLimit: { limiter: deps.limiter, bucket: 'api' },
        }),
      );

      const extra = async (req: Request): Promise<BoxesExtra> => {
        const resolved = await deps.authService.resolve(extractToken(req.headers, req.query as Record<string, unknown>));
        const base = publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
        return { caller: { actor: resolved.actor, tokenState: resolved.state, base }, clientKey: req.ip ?? 'unknown' };
      };
      const common: MountOptions<BoxesExtra> = {
        extra,
        invalidRequest: invalidRequest,
        help: { title: 'Box-hosting API', version: '1' },
      };

      mountPaths<BoxesExtra>(
        app,
        [
          ...createAuthPaths({ authService: deps.authService }),
          ...createAccountPaths({ boxService: deps.boxService }),
          ...createBoxPaths({ boxService: deps.boxService }),
          ...createUploadPaths({ uploadService: deps.uploadService, limiter: deps.limiter }),
        ],
        { ...common, prefix: '/api/v1', unsupportedPath: (path) => new NotFoundError(`Resource not found: /api/v1/${path}`) },
      );
      mountPaths<BoxesExtra>(app, createDownloadPaths({ downloadService: deps.downloadService, blobs: deps.blobs }), { ...common, prefix: '/' });
    },
  );
}
