// The web console (services/console, issue 32) served at /ui/ by the services that carry a
// UI path in their anchors (Vault and Nomad both answer `GET /` with 307 -> /ui/). The
// console is a static build (Vite); this module only serves its files:
//   - /ui/assets/<hashed name>: the file, cached for a year (the name changes with the content);
//   - any other /ui/ path: index.html, not cached, so deep links survive a reload;
//   - no build present: a 200 page saying how to build it (the spec's GET / -> 307 ->
//     /ui/ -> 200 holds either way).
// Kept apart from the API routes: the document gets its own helmet profile (a CSP that
// lets the page load its own scripts and call its own origin), the API keeps API_HELMET.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/** Where `make build` and `make dev` put the console (vite.config.ts `outDir`). */
export function consoleDirCandidates(): string[] {
  return [
    // Bundled service: dist/<service>/main.js next to dist/console (scripts/build.ts).
    resolve(__dirname, '..', 'console'),
    // Running from source: libs/http-kit/src -> <repo>/dist/console.
    resolve(__dirname, '..', '..', '..', 'dist', 'console'),
  ];
}

export function defaultConsoleDir(): string | undefined {
  return consoleDirCandidates().find((d) => existsSync(join(d, 'index.html')));
}

/**
 * helmet for the console document: helmet's defaults (the document-oriented headers,
 * X-Frame-Options SAMEORIGIN) with a CSP that allows nothing from another origin — no CDN,
 * no remote font, no third-party connection — and without `upgrade-insecure-requests`,
 * which would send the page's own requests to https on a plain-http gateway.
 */
export const CONSOLE_HELMET: HelmetOptions = {
  strictTransportSecurity: false,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'self'"],
    },
  },
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>selfstack console</title></head>
<body><h1>The console is not built</h1>
<p>This service serves the selfstack web console at <code>/ui/</code>, but no build was found.
Build it with <code>make build</code> (or <code>npm run build -w services/console</code>) and reload.</p>
<p>The API itself is available under <code>/v1/</code>.</p>
</body></html>
`;

export interface MountConsoleOptions {
  /** The built console (index.html + assets/); default: defaultConsoleDir() at each request. */
  readonly dir?: string;
}

/** Mounts GET/HEAD /ui and /ui/... on `app` (after the API routes, before the 404 handler). */
export function mountConsole(app: Express, options: MountConsoleOptions = {}): void {
  const documentHelmet = helmet(CONSOLE_HELMET);
  const dirNow = () => options.dir ?? defaultConsoleDir();
  const assetHandlers = new Map<string, ReturnType<typeof express.static>>();
  const staticFor = (dir: string) => {
    let h = assetHandlers.get(dir);
    if (!h) {
      h = express.static(dir, { index: false, redirect: false, dotfiles: 'ignore', immutable: true, maxAge: '365d', fallthrough: true });
      assetHandlers.set(dir, h);
    }
    return h;
  };

  // One route for /ui and /ui/...: Express matches both either way (non-strict routing),
  // so a separate /ui redirect route would also catch /ui/ and loop.
  app.get(['/ui', '/ui/{*rest}'], documentHelmet, async (req: Request, res: Response, next: NextFunction) => {
    if (req.path === '/ui') {
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(301, '/ui/');
      return;
    }
    const dir = dirNow();
    const sub = req.path.slice('/ui'.length);
    if (dir && sub.startsWith('/assets/')) {
      // Hashed build output: the file or a plain 404, never the HTML page (a script tag
      // that gets HTML back fails with a confusing MIME error).
      req.url = sub;
      staticFor(dir)(req, res, () => {
        res.status(404).setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.setHeader('Cache-Control', 'no-store');
        res.end('not found');
      });
      return;
    }
    try {
      if (dir && /^\/[A-Za-z0-9._-]+\.(svg|ico|png|txt|webmanifest)$/.test(sub)) {
        const file = join(dir, sub);
        if ((await stat(file).catch(() => undefined))?.isFile()) {
          res.sendFile(file, { headers: { 'Cache-Control': 'public, max-age=3600' } });
          return;
        }
      }
      const html = dir ? await readFile(join(dir, 'index.html'), 'utf8').catch(() => undefined) : undefined;
      res.status(200).setHeader('Content-Type', 'text/html; charset=utf-8');
      // The page names hashed assets: a cached copy would point at files of an older build.
      res.setHeader('Cache-Control', 'no-cache');
      res.end(html ?? NOT_BUILT_PAGE);
    } catch (err) {
      next(err);
    }
  });
}
