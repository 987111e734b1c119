// Static checks of the gateway config (infra/nginx): routing table, method pass-through,
// body limits, streaming, keep-alive and the errors the gateway answers itself.
// test/infra/nginx.itest.ts runs the real binary.
import { FLAVOURS, GATEWAY_ERRORS, find, gatewayError, listenPorts, loadNginx, one, parseNginx, selectLocation, type Directive, type UpstreamName } from './nginx-config';

const http = one(loadNginx(), 'http')!;
const servers = find(http.block, 'server');
const serverOn = (port: number) => servers.find((s) => find(s.block, 'listen').some((l) => Number(l.args[0]) === port))!;

function upstreamFor(server: Directive, path: string): string {
  const loc = selectLocation(server, path);
  if (!loc) return '(none)';
  const pass = one(loc.block, 'proxy_pass');
  if (pass) return pass.args[0]!.replace(/^http:\/\//, '');
  const ret = one(loc.block, 'return');
  return ret ? `return ${ret.args[0]}` : '(none)';
}

const directiveIn = (loc: Directive | undefined, name: string) => one(loc?.block, name)?.args;

function toSeconds(v: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(v);
  if (!m) throw new Error(`bad nginx time ${v}`);
  const n = Number(m[1]);
  return { ms: n / 1000, s: n, m: n * 60, h: n * 3600 }[m[2] ?? 's'] as number;
}

describe('nginx config: parser', () => {
  it('rejects unbalanced braces and unterminated directives', () => {
    expect(() => parseNginx('http { server { }')).toThrow(/unbalanced/);
    expect(() => parseNginx('worker_processes 1')).toThrow(/not terminated/);
    expect(() => parseNginx('}')).toThrow(/unexpected }/);
  });
  it('keeps quoted strings as single arguments', () => {
    expect(parseNginx(`return 200 "a b; {c}";`)[0]?.args).toEqual(['200', 'a b; {c}']);
  });
  it("reads nginx's escapes in quoted strings and keeps other backslashes", () => {
    expect(parseNginx(`return 200 'x\\n\\'y\\' \\d';`)[0]?.args).toEqual(['200', "x\n'y' \\d"]);
  });
});

describe('nginx config: path-prefix gateway on 8080 (and 443)', () => {
  const table: [string, string][] = [
    ['/api/v1/box/hashicorp/precise64', 'boxes'],
    ['/api/v1/boxes', 'boxes'],
    ['/api/v1/authenticate', 'boxes'],
    ['/api/v1/uploads/abc123', 'boxes'],
    ['/api/v1/box/u/b/version/1.0.0/provider/virtualbox/upload', 'boxes'],
    ['/.well-known/terraform.json', 'registry'],
    ['/v1/modules/hashicorp/consul/aws/versions', 'registry'],
    ['/v1/modules/search?q=x', 'registry'],
    ['/v2/modules/hashicorp/consul/aws/downloads/summary', 'registry'],
    ['/v1/jobs', 'scheduler'],
    ['/v1/job/example/allocations', 'scheduler'],
    ['/v1/nodes', 'scheduler'],
    ['/v1/node/abc', 'scheduler'],
    ['/v1/allocations', 'scheduler'],
    ['/v1/allocation/abc', 'scheduler'],
    ['/v1/evaluations', 'scheduler'],
    ['/v1/deployments', 'scheduler'],
    ['/v1/event/stream', 'scheduler'],
    ['/v1/agent/members', 'scheduler'],
    ['/v1/status/leader', 'scheduler'],
    ['/v1/namespaces', 'scheduler'],
    ['/v1/acl/tokens', 'scheduler'],
    ['/v1/regions', 'scheduler'],
    ['/v1/operator/raft/configuration', 'scheduler'],
    ['/v1/sys/health', 'secrets'],
    ['/v1/sys/init', 'secrets'],
    ['/v1/secret/data/foo', 'secrets'],
    ['/v1/auth/token/lookup-self', 'secrets'],
    ['/v1/kv/jobsite', 'secrets'],
    ['/v1/jobsx/a', 'secrets'],
    ['/v1/', 'secrets'],
    ['/', 'return 307'],
    ['/ui/', 'secrets'],
    ['/ui/scheduler/jobs/web', 'secrets'],
    ['/controller/v1/workers', 'controller'],
    ['/controller/', 'return 404'],
    ['/hashicorp/precise64', 'return 404'],
    ['/_gateway/health', 'return 200'],
  ];

  it.each(table)('%s -> %s', (path, target) => {
    expect(upstreamFor(serverOn(8080), path.split('?')[0]!)).toBe(target);
  });

  it('serves the same routes over TLS on 443 with configurable certificate paths', () => {
    const tls = serverOn(443);
    expect(find(tls.block, 'listen')[0]?.args).toEqual(['443', 'ssl']);
    expect(one(tls.block, 'ssl_certificate')?.args[0]).toMatch(/\.crt$/);
    expect(one(tls.block, 'ssl_certificate_key')?.args[0]).toMatch(/\.key$/);
    for (const [path, target] of table) expect(upstreamFor(tls, path)).toBe(target);
  });
});

describe('nginx config: one port per API', () => {
  it.each([
    [8200, '/v1/jobs', 'secrets'],
    [4646, '/v1/sys/health', 'scheduler'],
    [3100, '/hashicorp/precise64', 'boxes'],
    [3100, '/api/v1/uploads/x', 'boxes'],
    [3200, '/.well-known/terraform.json', 'registry'],
    [9200, '/v1/scopes', 'controller'],
  ])('port %d: %s -> %s', (port, path, target) => {
    expect(upstreamFor(serverOn(port), path)).toBe(target);
  });

  it('listen ports are unique', () => {
    const ports = listenPorts();
    expect(new Set(ports).size).toBe(ports.length);
    expect(ports.sort((a, b) => a - b)).toEqual([443, 3100, 3200, 4646, 8080, 8200, 9200]);
  });
});

describe('nginx config: proxy behaviour', () => {
  it('never restricts or rewrites methods (LIST must pass)', () => {
    const all = JSON.stringify(loadNginx());
    expect(all).not.toContain('"limit_except"');
    expect(all).not.toContain('"proxy_method"');
    expect(all).not.toMatch(/"name":"if"/);
  });

  it('passes the request URI unchanged (proxy_pass without a URI part)', () => {
    const passes = JSON.stringify(loadNginx()).match(/"name":"proxy_pass","args":\["[^"]+"\]/g) ?? [];
    expect(passes.length).toBeGreaterThan(10);
    for (const p of passes) expect(p).toMatch(/\["http:\/\/(secrets|scheduler|boxes|registry|controller)"\]/);
    expect(one(http.block, 'merge_slashes')?.args).toEqual(['off']);
  });

  it('limits bodies to 32m except box uploads (unlimited, streamed)', () => {
    expect(one(http.block, 'client_max_body_size')?.args).toEqual(['32m']);
    for (const port of [8080, 443, 3100]) {
      for (const path of ['/api/v1/uploads/token', '/api/v1/box/u/b/version/1/provider/p/upload', '/api/v1/box/u/b/version/1/provider/p/upload/direct']) {
        const loc = selectLocation(serverOn(port), path);
        expect(directiveIn(loc, 'client_max_body_size')).toEqual(['0']);
        expect(directiveIn(loc, 'proxy_request_buffering')).toEqual(['off']);
      }
      // A non-upload API path keeps the 32m default.
      expect(directiveIn(selectLocation(serverOn(port), '/api/v1/boxes'), 'client_max_body_size')).toBeUndefined();
    }
  });

  it('does not buffer scheduler responses and outlasts the longest blocking query', () => {
    for (const [port, path] of [
      [8080, '/v1/event/stream'],
      [8080, '/v1/jobs'],
      [443, '/v1/event/stream'],
      [4646, '/v1/event/stream'],
    ] as const) {
      const loc = selectLocation(serverOn(port), path);
      expect(directiveIn(loc, 'proxy_buffering')).toEqual(['off']);
      // 10 min maximum wait + wait/16 jitter = 10m37.5s.
      expect(toSeconds(directiveIn(loc, 'proxy_read_timeout')![0]!)).toBeGreaterThanOrEqual(11 * 60);
    }
  });

  it('uses HTTP/1.1 keep-alive connections to every upstream', () => {
    expect(one(http.block, 'proxy_http_version')?.args).toEqual(['1.1']);
    expect(find(http.block, 'proxy_set_header').some((d) => d.args[0] === 'Connection' && d.args[1] === '')).toBe(true);
    const upstreams = find(http.block, 'upstream');
    expect(upstreams.map((u) => u.args[0]).sort()).toEqual(['boxes', 'controller', 'registry', 'scheduler', 'secrets']);
    for (const u of upstreams) {
      expect(Number(one(u.block, 'keepalive')?.args[0])).toBeGreaterThan(0);
      expect(one(u.block, 'server')?.args[0]).toMatch(/^[a-z]+:\d+$/);
    }
    // No location may override the http-level headers (nginx would drop them all).
    const locs = servers.flatMap((s) => find(s.block, 'location'));
    for (const l of locs) expect(one(l.block, 'proxy_set_header')).toBeUndefined();
  });
});

describe('nginx config: errors the gateway answers itself (413/502/504)', () => {
  const proxied = servers.flatMap((s) =>
    find(s.block, 'location')
      .filter((l) => one(l.block, 'proxy_pass'))
      .map((l) => ({
        port: Number(one(s.block, 'listen')!.args[0]),
        location: l.args.join(' '),
        api: one(l.block, 'proxy_pass')!.args[0]!.replace(/^http:\/\//, '') as UpstreamName,
        loc: l,
      })),
  );

  it('finds every proxied location (11 on 8080 and 443, 3 on 3100, 1 on the other API ports)', () => {
    const perPort = new Map<number, number>();
    for (const p of proxied) perPort.set(p.port, (perPort.get(p.port) ?? 0) + 1);
    expect(Object.fromEntries(perPort)).toEqual({ 8080: 11, 443: 11, 8200: 1, 4646: 1, 3100: 3, 3200: 1, 9200: 1 });
  });

  it.each(proxied.map((p) => [p.port, p.location, p.api, p.loc] as const))(
    'port %d, location %s: error_page -> @%s_<status>',
    (port, location, api, loc) => {
      const pages = find(loc.block, 'error_page').map((d) => d.args);
      // No `=code`: the client gets nginx's status (413/502/504), only the body changes.
      const unlimited = directiveIn(loc, 'client_max_body_size')?.[0] === '0';
      const expected = (unlimited ? [502, 504] : [413, 502, 504]).map((s) => [String(s), `@${api}_${s}`]);
      expect(pages).toEqual(expected);
    },
  );

  it('every named location an error_page names exists in the same server', () => {
    for (const s of servers) {
      const named = new Set(find(s.block, 'location').map((l) => l.args[0]).filter((a) => a?.startsWith('@')));
      const used = find(s.block, 'location').flatMap((l) => find(l.block, 'error_page').map((d) => d.args.at(-1)!));
      expect(used.length).toBeGreaterThan(0);
      // nginx -t does not check this; a missing one is a 500 at run time.
      expect({ listen: one(s.block, 'listen')?.args, missing: used.filter((u) => !named.has(u)) }).toEqual({ listen: one(s.block, 'listen')?.args, missing: [] });
    }
  });

  it.each((Object.keys(FLAVOURS) as UpstreamName[]).flatMap((api) => GATEWAY_ERRORS.map((status) => [api, status] as const)))(
    '@%s_%d answers exactly what the service would (libs/errors render-error.ts)',
    (api, status) => {
      const want = gatewayError(api, status);
      expect(want.status).toBe(status);
      for (const s of servers) {
        const loc = find(s.block, 'location').find((l) => l.args[0] === `@${api}_${status}`);
        expect(loc).toBeDefined();
        expect(one(loc!.block, 'return')?.args).toEqual([String(status), want.body]);
        expect(one(loc!.block, 'default_type')?.args).toEqual([want.headers['Content-Type']]);
        // An empty MIME map: default_type applies whatever the URI's extension.
        expect(one(loc!.block, 'types')?.block).toEqual([]);
        const addHeaders = find(loc!.block, 'add_header').map((d) => d.args);
        const extra = Object.entries(want.headers).filter(([name]) => name !== 'Content-Type');
        expect(addHeaders).toEqual(extra.map(([name, value]) => [name, value, 'always']));
      }
    },
  );

  it('the Vault pages send Cache-Control: no-store and a trailing newline; Nomad plain text without one', () => {
    expect(gatewayError('secrets', 413)).toEqual({
      status: 413,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
      body: '{"errors":["failed to parse JSON input: http: request body too large"]}\n',
    });
    expect(gatewayError('scheduler', 502)).toEqual({
      status: 502,
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      body: 'scheduler service unavailable (gateway: upstream connection failed)',
    });
    expect(gatewayError('boxes', 504).body).toBe('{"errors":["boxes service unavailable (gateway: upstream timed out)"],"success":false}');
  });

  it("never intercepts the services' own errors", () => {
    expect(one(http.block, 'proxy_intercept_errors')?.args).toEqual(['off']);
    expect(JSON.stringify(servers)).not.toContain('"proxy_intercept_errors"');
    // error_page only at location level (a server-level one would also cover the 404 catch-all).
    for (const s of servers) expect(find(s.block, 'error_page')).toEqual([]);
    expect(find(http.block, 'error_page')).toEqual([]);
  });

  it('leaves the catch-all 404 and the health check alone', () => {
    for (const port of [8080, 443]) {
      for (const path of ['/nothing', '/_gateway/health']) expect(find(selectLocation(serverOn(port), path)?.block, 'error_page')).toEqual([]);
    }
  });
});
