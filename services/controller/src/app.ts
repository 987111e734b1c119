// buildApp(deps): the controller's API listener as an Express app (never listens itself).
import type { Express } from 'express';
import { createKitApp, mountPaths } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import { bearerAuthorizer, sessionPaths } from './features/sessions/sessions.paths';
import type { SessionService } from './features/sessions/sessions.service';

export interface AppDeps {
  sessions: SessionService;
  logger: Logger;
  apiToken?: string | undefined;
  maxRequestBytes?: number | undefined;
}

export function buildApp(deps: AppDeps): Express {
  return createKitApp(
    {
      service: 'controller',
      logger: deps.logger,
      errorFlavour: 'registry',
      ...(deps.maxRequestBytes ? { maxRequestBytes: deps.maxRequestBytes } : {}),
    },
    (app) => {
      const authorize = bearerAuthorizer(deps.apiToken);
      mountPaths(app, sessionPaths(deps.sessions), { prefix: '/', ...(authorize ? { authorize } : {}), help: { title: 'Gateway controller API', version: '1' } });
    },
  );
}
