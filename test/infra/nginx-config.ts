// Helpers for the gateway tests: a small parser for nginx's config syntax (directives,
// blocks, quoted strings, comments) and a renderer that copies infra/nginx into a temp
// prefix with upstreams and listen ports pointed at local test servers.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, renderError, type ErrorFlavour, type RenderedError } from '@selfstack/errors';
import { NGINX_DIR, find, loadNginx, one } from '../../scripts/nginx-conf';

export { NGINX_DIR, find, loadNginx, one, parseNginx, selectLocation, type Directive } from '../../scripts/nginx-conf';

export type UpstreamName = 'secrets' | 'scheduler' | 'boxes' | 'registry' | 'controller';

export interface RenderOptions {
  /** Where to write `conf/`, temp dirs and the pid file. */
  readonly prefix: string;
  /** upstream name -> `127.0.0.1:port` */
  readonly upstreams: Readonly<Record<UpstreamName, string>>;
  /** production listen port -> test port (every `listen` must be mapped). */
  readonly ports: Readonly<Record<number, number>>;
  /** Directory holding tls.crt and tls.key. */
  readonly tlsDir: string;
  /**
   * Replaces every `proxy_read_timeout` (http level, streaming.conf, box uploads) with
   * this value, so a test can see the gateway's 504 without waiting minutes.
   */
  readonly readTimeout?: string;
}

/**
 * Copies infra/nginx into `<prefix>/conf`, changing only what differs outside a
 * container: upstream addresses, listen ports, pid/temp paths and the worker user (and
 * read timeouts when `readTimeout` is given).
 * Returns the path of the rendered nginx.conf.
 */
export function renderNginx(options: RenderOptions): string {
  const conf = join(options.prefix, 'conf');
  mkdirSync(join(conf, 'selfstack'), { recursive: true });
  mkdirSync(join(conf, 'tls'), { recursive: true });
  const cache = join(options.prefix, 'cache');
  mkdirSync(cache, { recursive: true });
  // Workers may run as nobody (we are root in CI): they must write request bodies here.
  chmodSync(cache, 0o777);
  chmodSync(options.prefix, 0o755);
  copyFileSync(join(options.tlsDir, 'tls.crt'), join(conf, 'tls', 'tls.crt'));
  copyFileSync(join(options.tlsDir, 'tls.key'), join(conf, 'tls', 'tls.key'));

  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const rewrite = (text: string): string =>
    text
      .replace(/^user nginx;$/m, isRoot ? 'user nobody nogroup;' : '')
      .replace(/^pid .*;$/m, `pid ${join(options.prefix, 'nginx.pid')};`)
      .replace(/\/var\/cache\/nginx\//g, `${cache}/`)
      .replace(/\/var\/log\/nginx\//g, `${options.prefix}/`)
      .replace(/^(\s*)server (\w+):\d+;/gm, (m, indent: string, name: string) => {
        const addr = options.upstreams[name as UpstreamName];
        if (!addr) throw new Error(`no test address for upstream ${name}`);
        return `${indent}server ${addr};`;
      })
      .replace(/^(\s*)listen (\d+)( ssl)?;/gm, (m, indent: string, port: string, ssl: string | undefined) => {
        const mapped = options.ports[Number(port)];
        if (mapped === undefined) throw new Error(`no test port for listen ${port}`);
        return `${indent}listen 127.0.0.1:${mapped}${ssl ?? ''};`;
      })
      .replace(/^(\s*)proxy_read_timeout \S+;/gm, (m, indent: string) =>
        options.readTimeout === undefined ? m : `${indent}proxy_read_timeout ${options.readTimeout};`,
      );

  writeFileSync(join(conf, 'nginx.conf'), rewrite(readFileSync(join(NGINX_DIR, 'nginx.conf'), 'utf8')));
  for (const f of readdirSync(join(NGINX_DIR, 'selfstack'))) {
    writeFileSync(join(conf, 'selfstack', f), rewrite(readFileSync(join(NGINX_DIR, 'selfstack', f), 'utf8')));
  }
  return join(conf, 'nginx.conf');
}

/** Every `listen` port in infra/nginx/nginx.conf. */
export function listenPorts(): number[] {
  const http = one(loadNginx(), 'http');
  return find(http?.block, 'server').flatMap((s) => find(s.block, 'listen').map((l) => Number(l.args[0])));
}

// The error shape of each API (services/*/src/app.ts `errorFlavour`).
export const FLAVOURS: Record<UpstreamName, ErrorFlavour> = {
  secrets: 'vault',
  scheduler: 'nomad',
  boxes: 'boxes',
  registry: 'registry',
  controller: 'registry',
};
export const GATEWAY_ERRORS = [413, 502, 504] as const;

/**
 * What the service itself would send (libs/errors render-error.ts) for an error nginx
 * answers in its place (infra/nginx/selfstack/error-pages.conf).
 */
export function gatewayError(api: UpstreamName, status: (typeof GATEWAY_ERRORS)[number]): RenderedError {
  const err =
    status === 413
      ? { type: 'entity.too.large', status: 413 } // body-parser's error, as the services see it
      : new AppError(status, `${api} service unavailable (gateway: ${status === 502 ? 'upstream connection failed' : 'upstream timed out'})`);
  return renderError(FLAVOURS[api], err, 'unused');
}
