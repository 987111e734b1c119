// Cross-origin requests to /v1 (issue 28, item 4; Vault's http/cors.go): with CORS enabled
// and an Origin header, a disallowed origin is 403 `origin not allowed`; an allowed one gets
// `Access-Control-Allow-Origin` (and `Vary: Origin`); a preflight `OPTIONS` is answered
// here with the allowed methods and headers. Without CORS, or without an Origin (every
// non-browser client), nothing changes and no Access-Control-* header is sent.
import type { RequestHandler } from 'express';
import { AppError } from '@selfstack/errors';
import { CORS_METHODS, type CorsService } from '../features/cors/cors.service';

const METHODS = CORS_METHODS.join(',');

/**
 * `handler` behind the CORS rules. With CORS off or no Origin (every non-browser client)
 * the request goes straight to `handler`: no extra Express layer on the hot path.
 */
export function withCors(cors: CorsService, handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const config = cors.current();
    const origin = req.headers.origin;
    if (config === null || origin === undefined || origin === '') return handler(req, res, next);
    res.setHeader('Cache-Control', 'no-store');
    if (!cors.isAllowedOrigin(config, origin)) {
      next(new AppError(403, ['origin not allowed']));
      return;
    }
    if (req.method === 'OPTIONS') {
      const wanted = req.headers['access-control-request-method'];
      if (typeof wanted !== 'string' || !CORS_METHODS.includes(wanted.toUpperCase())) {
        next(new AppError(405, [], { headers: { Allow: METHODS.replace(/,/g, ', ') } }));
        return;
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Allow-Methods', METHODS);
      res.setHeader('Access-Control-Allow-Headers', config.allowedHeaders.join(','));
      res.setHeader('Access-Control-Max-Age', '300');
      res.statusCode = 200;
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    return handler(req, res, next);
  };
}
