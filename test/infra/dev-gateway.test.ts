// make dev's same-origin gateway routes by infra/nginx's own config: the decisions it
// takes for the console and the APIs are nginx's (scripts/dev-gateway.ts).
import { gatewayServer, routeFor } from '../../scripts/dev-gateway';

describe('dev gateway routing (infra/nginx port 8080)', () => {
  const server = gatewayServer();
  it.each([
    ['/v1/jobs', 'scheduler', '/v1/jobs'],
    ['/v1/secret/data/app', 'secrets', '/v1/secret/data/app'],
    ['/api/v1/search', 'boxes', '/api/v1/search'],
    ['/v1/modules/search', 'registry', '/v1/modules/search'],
    ['/ui/secrets/kv/secret/app', 'secrets', '/ui/secrets/kv/secret/app'],
    ['/controller/v1/workers', 'controller', '/v1/workers'],
  ])('%s -> %s %s', (path, upstream, upstreamPath) => {
    const r = routeFor(server, path);
    expect(r).toMatchObject({ kind: 'proxy', upstream, path: upstreamPath });
  });
  it('answers what nginx answers itself', () => {
    expect(routeFor(server, '/')).toEqual({ kind: 'return', status: 307, location: '/ui/' });
    expect(routeFor(server, '/_gateway/health')).toMatchObject({ kind: 'return', status: 200, body: 'ok\n' });
    expect(routeFor(server, '/nothing')).toMatchObject({ kind: 'return', status: 404, contentType: 'application/json' });
  });
  it('knows the API-shaped 502 page of each route', () => {
    expect(routeFor(server, '/v1/jobs').errorPages?.[502]).toBe('@scheduler_502');
    expect(routeFor(server, '/controller/v1/sessions').errorPages?.[502]).toBe('@controller_502');
  });
});
