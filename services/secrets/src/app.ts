// buildApp(deps): the Express app of one listener (the supertest target; never listens).
// Per-listener settings (custom response headers, max_request_size, require_request_header)
// live here; the services (and their caches) are shared by every listener of the process.
import type { Express } from 'express';
import type { HelmetOptions } from 'helmet';
import { API_HELMET, createKitApp, mountConsole, recordMountedTable } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import type { ListenerConfig } from './config';
import { AppError } from '@selfstack/errors';
import { createV1Handler, isHelp } from './http/v1-handler';
import { customHeadersMiddleware } from './http/response-headers';
import { withCors } from './http/cors';
import type { SecretsServices } from './services';

export interface SecretsAppDeps {
  services: SecretsServices;
  logger: Logger;
  listener: ListenerConfig;
  /** GET /readyz checks (Postgres, Redis). */
  readiness?: () => Promise<Record<string, boolean>>;
  requestLog?: boolean;
}

const API_HELMET_NO_HSTS = { ...API_HELMET, strictTransportSecurity: false } as HelmetOptions;

export function buildApp(deps: SecretsAppDeps): Express {
  return createKitApp(
    {
      service: 'secrets',
      logger: deps.logger,
      errorFlavour: 'vault',
      maxRequestBytes: deps.listener.maxRequestBytes,
      jsonWithoutContentType: true,
      readiness: deps.readiness,
      requestLog: deps.requestLog,
      // The API answers JSON to programs: helmet's API profile (a CSP that forbids loading
      // or framing anything, X-Frame-Options DENY, nosniff), not the document-oriented
      // headers, which the UI page below gets. No helmet HSTS: Vault's own comes from
      // custom_response_headers and helmet's would fight the configured value.
      helmet: API_HELMET_NO_HSTS,
    },
    (app) => {
      app.use(customHeadersMiddleware(deps.listener.customHeaders));
      // The API first: its requests then pass no other route's pattern on the way.
      const v1 = createV1Handler(deps.services, { requireRequestHeader: deps.listener.requireRequestHeader });
      for (const t of v1.tables) recordMountedTable(app, t);
      app.use('/v1', withCors(deps.services.cors, v1));
      // Reference §7: help outside /v1/ (the root, the UI) is the anchor's 404.
      app.use((req, _res, next) => {
        next(isHelp(req) ? new AppError(404, ['Missing /v1/ prefix in path. Use vault path-help command to retrieve API help for paths']) : undefined);
      });
      // Spec "Response header customization" rule 5: GET / redirects to the UI path.
      app.get('/', (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(307, '/ui/');
      });
      // The web console (issue 32; docs/console.md): static files, document headers of its own.
      mountConsole(app);
    },
  );
}
