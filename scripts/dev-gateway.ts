// `make dev`'s same-origin gateway (issue 32: one console address that reaches all five
// APIs). It routes by the production gateway's own config (infra/nginx: the port-8080
// server of nginx.conf with selfstack/routes.conf) rather than a copy of its table, so
// what works here works behind nginx: nginx's location selection, `return`, `rewrite ...
// break`, `proxy_pass` to the upstreams by name, and the error_page answers in each API's
// shape when a service is down. Only what routes.conf uses is implemented; it is a
// development tool, not a proxy for production (no TLS, no body limits, no buffering).
// Listens with http-kit's listener, which accepts Vault's LIST method.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createListener, type Listener } from '@selfstack/http-kit';
import { find, loadNginx, one, selectLocation, type Directive } from './nginx-conf';

export type Upstreams = Readonly<Record<string, { host: string; port: number }>>;

export interface GatewayRoute {
  readonly kind: 'return' | 'proxy' | 'none';
  readonly status?: number;
  readonly body?: string;
  readonly location?: string;
  readonly contentType?: string;
  readonly upstream?: string;
  readonly path?: string;
  readonly errorPages?: Readonly<Record<number, string>>;
}

/** The port-8080 server block of infra/nginx/nginx.conf, includes expanded. */
export function gatewayServer(): Directive {
  const http = one(loadNginx(), 'http');
  const server = find(http?.block, 'server').find((s) => find(s.block, 'listen').some((l) => l.args[0] === '8080'));
  if (!server) throw new Error('infra/nginx/nginx.conf has no server listening on 8080');
  return server;
}

/** What nginx would do with `path` (no query string) in `server`. */
export function routeFor(server: Directive, path: string): GatewayRoute {
  const loc = selectLocation(server, path);
  if (!loc) return { kind: 'none' };
  return describe(loc, path);
}

function describe(loc: Directive, path: string): GatewayRoute {
  const contentType = one(loc.block, 'default_type')?.args[0];
  const ret = one(loc.block, 'return');
  if (ret) {
    const status = Number(ret.args[0]);
    const arg = ret.args[1] ?? '';
    return status >= 300 && status < 400 ? { kind: 'return', status, location: arg } : { kind: 'return', status, body: arg, contentType };
  }
  const pass = one(loc.block, 'proxy_pass');
  if (!pass) return { kind: 'none' };
  let upstreamPath = path;
  for (const rw of find(loc.block, 'rewrite')) {
    const [re, to, flag] = rw.args;
    if (!re || to === undefined) continue;
    const m = new RegExp(re).exec(upstreamPath);
    if (!m) continue;
    upstreamPath = to.replace(/\$(\d)/g, (_s, d: string) => m[Number(d)] ?? '');
    if (flag === 'break' || flag === 'last') break;
  }
  const errorPages: Record<number, string> = {};
  for (const ep of find(loc.block, 'error_page')) {
    const target = ep.args.at(-1) ?? '';
    for (const code of ep.args.slice(0, -1)) errorPages[Number(code)] = target;
  }
  return { kind: 'proxy', upstream: (pass.args[0] ?? '').replace(/^http:\/\//, ''), path: upstreamPath, errorPages };
}

function answerReturn(res: ServerResponse, route: GatewayRoute): void {
  res.statusCode = route.status ?? 500;
  if (route.location !== undefined) {
    res.setHeader('Location', route.location);
    res.end();
    return;
  }
  res.setHeader('Content-Type', route.contentType ?? 'text/plain');
  res.end(route.body ?? '');
}

/** Answers nginx's own 502/504 with the named location's page (error-pages.conf). */
function answerError(res: ServerResponse, server: Directive, route: GatewayRoute, status: number): void {
  const named = route.errorPages?.[status];
  const loc = named ? find(server.block, 'location').find((l) => l.args[0] === named) : undefined;
  const page = loc ? describe(loc, '') : undefined;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (page?.kind === 'return') {
    for (const h of find(loc?.block, 'add_header')) if (h.args[0] && h.args[1]) res.setHeader(h.args[0], h.args[1]);
    answerReturn(res, page);
    return;
  }
  res.statusCode = status;
  res.end();
}

export function createGatewayHandler(upstreams: Upstreams, server: Directive = gatewayServer()) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const route = routeFor(server, path);
    if (route.kind === 'return') return answerReturn(res, route);
    if (route.kind !== 'proxy' || !route.upstream) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const target = upstreams[route.upstream];
    if (!target) return answerError(res, server, route, 502);
    const headers = { ...req.headers };
    delete headers.connection;
    const forwardedFor = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = `${forwardedFor ? `${String(forwardedFor)}, ` : ''}${req.socket.remoteAddress ?? ''}`;
    headers['x-forwarded-proto'] = 'http';
    headers['x-forwarded-host'] = req.headers.host ?? '';
    const upstreamReq = httpRequest(
      { host: target.host, port: target.port, method: req.method, path: `${route.path ?? path}${q < 0 ? '' : url.slice(q)}`, headers },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, upstreamRes.headers);
        res.flushHeaders();
        upstreamRes.pipe(res);
      },
    );
    upstreamReq.on('error', () => answerError(res, server, route, 502));
    res.on('close', () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.pipe(upstreamReq);
  };
}

export function startDevGateway(options: { host: string; port: number; upstreams: Upstreams }): Promise<Listener> {
  return createListener(createGatewayHandler(options.upstreams), { host: options.host, port: options.port });
}
