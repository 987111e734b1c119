import { randomUUID } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MethodNotAllowedError, NotFoundError, errorMiddleware, type ErrorFlavour } from '@selfstack/errors';
import { writeInfoRecord, type Logger } from '@selfstack/logger';
import { jsonBody } from './body';
import { DEFAULT_MAX_BODY_DEPTH } from './json-policy';
import { DEFAULT_MAX_REQUEST_BYTES, KIT_SETTINGS_KEY, type KitSettings } from './kit-settings';
import { onResponseClose } from './response-close';

export interface KitMetricsOptions {
  /** Node process metrics (event loop lag, GC, heap). Off by default: tests build many apps. */
  defaultMetrics?: boolean;
  /** Histogram buckets in seconds. */
  buckets?: number[];
}

export interface KitAppOptions {
  service: string;
  logger: Logger;
  errorFlavour: ErrorFlavour;
  /** Largest request body the kit reads (default 32 MiB, Vault's max_request_size). */
  maxRequestBytes?: number;
  /** Parse bodies without Content-Type (and any non-form, non-multipart type) as JSON. */
  jsonWithoutContentType?: boolean;
  /** Nesting levels a JSON body may have (default DEFAULT_MAX_BODY_DEPTH, 128; json-policy.ts). */
  maxBodyDepth?: number;
  helmet?: false | HelmetOptions;
  /** GET /metrics with a per-app registry (default true). */
  metrics?: boolean | KitMetricsOptions;
  /** GET /readyz: 200 when every check is true, else 503. */
  readiness?: () => Promise<Record<string, boolean>>;
  /** Replaces the default 404/405 handler. */
  notFound?: RequestHandler;
  /** One JSON log line per request (default true). */
  requestLog?: boolean;
}

/**
 * helmet for services that answer only JSON to programs (no pages, no browser UI): the
 * headers that still mean something for an API response (OWASP REST Security Cheat Sheet,
 * "Security headers") — a CSP that forbids loading or framing anything, X-Frame-Options
 * DENY, nosniff and HSTS — and none of the document-oriented ones (cross-origin policies,
 * DNS prefetch, download options, XSS filter, Origin-Agent-Cluster, Referrer-Policy).
 * Every header costs each response its formatting and bytes; a blocking query woken for
 * 1,000 clients pays it 1,000 times.
 */
export const API_HELMET: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: { action: 'deny' },
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

export interface KitTools {
  /** Body reader for hand-written routes (PathSpec routes read bodies themselves). */
  jsonBody: RequestHandler;
  settings: KitSettings;
  /** The app's metrics registry, for service-specific metrics. */
  metrics: Registry | undefined;
}

/** Incoming X-Request-Id values we are willing to echo (no header injection, bounded). */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,127}$/;
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'LIST']);
const UNMATCHED = '<unmatched>';

interface RouteLayer {
  route?: { methods?: Record<string, boolean> };
  match?: (path: string) => boolean;
}

/** Methods of the app's own routes that match `path` (for 405 vs 404). Not on hot paths. */
function methodsFor(app: Express, path: string): string[] {
  const stack = (app.router as unknown as { stack?: RouteLayer[] }).stack ?? [];
  const out = new Set<string>();
  for (const layer of stack) {
    if (!layer.route?.methods || typeof layer.match !== 'function') continue;
    if (!layer.match(path)) continue;
    for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') out.add(m.toUpperCase());
  }
  // Express answers HEAD from GET routes.
  if (out.has('GET')) out.add('HEAD');
  return [...out];
}

function hasFunction(value: unknown, depth = 0): boolean {
  if (typeof value === 'function') return true;
  if (depth > 6 || typeof value !== 'object' || value === null) return false;
  return Object.values(value).some((v) => hasFunction(v, depth + 1));
}

/**
 * helmet's headers depend only on its options unless a CSP directive is a function, so
 * they are computed once and set in a loop (helmet per request costs several times more):
 * `headers` has them, and the app's first middleware sets them (no router layer of its
 * own). Otherwise `middleware` is helmet itself, run per request.
 */
function helmetHeaders(helmetOptions: HelmetOptions | undefined): { headers: [string, string][] } | { middleware: RequestHandler } {
  const real = helmet(helmetOptions);
  if (hasFunction(helmetOptions)) return { middleware: real };
  const names: string[] = [];
  const values: string[] = [];
  let dynamic = false;
  const recorder = {
    setHeader(name: string, value: unknown) {
      if (typeof value !== 'string') dynamic = true;
      names.push(name);
      values.push(String(value));
    },
    removeHeader(name: string) {
      if (name.toLowerCase() !== 'x-powered-by') dynamic = true;
    },
  };
  let called = false;
  try {
    (real as unknown as (req: unknown, res: unknown, next: () => void) => void)({ headers: {} }, recorder, () => {
      called = true;
    });
  } catch {
    dynamic = true;
  }
  if (dynamic || !called) return { middleware: real };
  return { headers: names.map((n, i) => [n, values[i] as string]) };
}

function routeLabel(req: Request, res: Response): string {
  const fromKit = (res.locals as Record<string, unknown>).routePattern;
  if (typeof fromKit === 'string') return fromKit;
  const route = req.route as { path?: unknown } | undefined;
  if (route?.path !== undefined) return `${req.baseUrl}${String(route.path)}`;
  return UNMATCHED;
}

/**
 * The Express app every service uses: request id, helmet, request log and metrics,
 * /healthz, /readyz, /metrics, then the service's routes, then 404/405 and the flavour's
 * error handler.
 */
export function createKitApp(options: KitAppOptions, register: (app: Express, kit: KitTools) => void): Express {
  const app = express();
  app.disable('x-powered-by');
  // ETags hash every body; API clients here do not use them.
  app.set('etag', false);

  const settings: KitSettings = {
    service: options.service,
    flavour: options.errorFlavour,
    logger: options.logger,
    maxRequestBytes: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
    jsonWithoutContentType: options.jsonWithoutContentType ?? false,
    maxBodyDepth: options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH,
  };
  app.locals[KIT_SETTINGS_KEY] = settings;
  const logger = options.logger;
  const requestLog = options.requestLog ?? true;

  let registry: Registry | undefined;
  let histogram: Histogram<'method' | 'route' | 'status'> | undefined;
  if (options.metrics !== false) {
    const metricsOptions = typeof options.metrics === 'object' ? options.metrics : {};
    registry = new Registry();
    histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration in seconds, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: metricsOptions.buckets ?? [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    if (metricsOptions.defaultMetrics) collectDefaultMetrics({ register: registry });
  }
  // Label lookups hash their values; caching the child per label set keeps observe() cheap.
  const children = new Map<string, { observe(v: number): void }>();

  const security = options.helmet === false ? { headers: [] } : helmetHeaders(options.helmet);
  const fixedHeaders = 'headers' in security ? security.headers : [];
  const fixedCount = fixedHeaders.length;

  app.use((req: Request, res: Response, next: NextFunction) => {
    const start = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    for (let i = 0; i < fixedCount; i++) {
      const header = fixedHeaders[i] as [string, string];
      res.setHeader(header[0], header[1]);
    }
    onResponseClose(res, () => {
      const durationMs = performance.now() - start;
      const route = routeLabel(req, res);
      const status = res.statusCode;
      if (histogram) {
        const method = KNOWN_METHODS.has(req.method) ? req.method : 'OTHER';
        const key = `${method} ${status} ${route}`;
        let child = children.get(key);
        if (!child) {
          child = histogram.labels(method, route, String(status));
          children.set(key, child);
        }
        child.observe(durationMs / 1000);
      }
      // The record is built only when it will be written (a service logging at `warn` or
      // above pays nothing per request for it).
      if (requestLog && logger.isInfoEnabled()) {
        const length = res.getHeader('content-length');
        writeInfoRecord(logger, 'request', {
          method: req.method,
          route,
          status,
          duration_ms: Math.round(durationMs * 1000) / 1000,
          request_id: requestId,
          bytes: length === undefined ? null : Number(length),
          ...(res.writableFinished ? {} : { aborted: true }),
        });
      }
    });
    next();
  });

  if ('middleware' in security) app.use(security.middleware);

  app.get('/healthz', (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    let checks: Record<string, boolean> = {};
    let ok = true;
    if (options.readiness) {
      try {
        checks = await options.readiness();
        ok = Object.values(checks).every(Boolean);
      } catch (err) {
        logger.warn('readiness check failed', { request_id: res.locals.requestId, error: err instanceof Error ? err.message : String(err) });
        ok = false;
      }
    }
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', checks });
  });
  if (registry) {
    const reg = registry;
    app.get('/metrics', async (_req, res) => {
      const text = await reg.metrics();
      res.status(200).setHeader('Content-Type', reg.contentType);
      res.end(text);
    });
  }

  register(app, { jsonBody: jsonBody(), settings, metrics: registry });

  app.use(
    options.notFound ??
      ((req: Request, _res: Response, next: NextFunction) => {
        if (!KNOWN_METHODS.has(req.method)) {
          next(new MethodNotAllowedError([]));
          return;
        }
        const allowed = methodsFor(app, req.path);
        if (allowed.length > 0) {
          next(new MethodNotAllowedError([`method ${req.method} not allowed`], { headers: { Allow: allowed.join(', ') } }));
          return;
        }
        next(new NotFoundError(options.errorFlavour === 'vault' ? [] : ['not found']));
      }),
  );
  app.use(errorMiddleware({ flavour: options.errorFlavour, logger }));
  return app;
}
