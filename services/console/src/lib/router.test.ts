import { href, parseRoute, sectionOf, type Route } from './router';

describe('console routes', () => {
  const routes: Route[] = [
    { page: 'home' },
    { page: 'secrets' },
    { page: 'secrets-kv', mount: 'secret', path: '' },
    { page: 'secrets-kv', mount: 'secret', path: 'app/' },
    { page: 'secrets-kv', mount: 'team kv', path: 'a b/c%d?e#f' },
    { page: 'secrets-policies' },
    { page: 'secrets-policy', name: 'ops' },
    { page: 'jobs', filter: 'Status == "running"', namespace: '' },
    { page: 'job', id: 'web/api', namespace: 'default' },
    { page: 'job', id: 'web', namespace: 'prod' },
    { page: 'allocation', id: 'abc' },
    { page: 'nodes' },
    { page: 'node', id: 'n1' },
    { page: 'evaluations' },
    { page: 'boxes', q: 'ubuntu', provider: 'virtualbox', sort: 'created' },
    { page: 'boxes-user', user: 'hashicorp' },
    { page: 'box', user: 'hashicorp', box: 'precise64' },
    { page: 'boxes-account' },
    { page: 'registry', q: 'vpc' },
    { page: 'module', namespace: 'acme', name: 'network', provider: 'aws', version: '' },
    { page: 'module', namespace: 'acme', name: 'network', provider: 'aws', version: '1.2.0' },
    { page: 'controller' },
  ];

  it.each(routes.map((r) => [href(r), r] as const))('%s reads back as the route it was built from', (link, route) => {
    const url = new URL(link, 'http://console.test');
    expect(parseRoute(url.pathname, url.search)).toEqual(route);
  });

  it('encodes every segment so keys with spaces, % and ? stay one path', () => {
    expect(href({ page: 'secrets-kv', mount: 'secret', path: 'a b/c%d?e' })).toBe('/ui/secrets/kv/secret/a%20b/c%25d%3Fe');
  });

  it('treats /ui and /ui/ as the overview and a trailing slash on a page as the same page', () => {
    expect(parseRoute('/ui')).toEqual({ page: 'home' });
    expect(parseRoute('/ui/')).toEqual({ page: 'home' });
    expect(parseRoute('/ui/scheduler/nodes/')).toEqual({ page: 'nodes' });
    expect(parseRoute('/ui/scheduler')).toEqual({ page: 'jobs', filter: '', namespace: '' });
  });

  it('answers not-found for unknown pages, paths outside /ui and malformed escapes', () => {
    expect(parseRoute('/ui/nothing')).toEqual({ page: 'not-found', path: '/ui/nothing' });
    expect(parseRoute('/uix')).toEqual({ page: 'not-found', path: '/uix' });
    expect(parseRoute('/ui/boxes/%E0%A4%A')).toEqual({ page: 'not-found', path: '/ui/boxes/%E0%A4%A' });
    expect(parseRoute('/ui/scheduler/jobs/a/b')).toEqual({ page: 'not-found', path: '/ui/scheduler/jobs/a/b' });
  });

  it('names the section each page belongs to', () => {
    expect(sectionOf({ page: 'allocation', id: 'x' })).toBe('scheduler');
    expect(sectionOf({ page: 'secrets-kv', mount: 's', path: '' })).toBe('secrets');
    expect(sectionOf({ page: 'boxes-account' })).toBe('boxes');
    expect(sectionOf({ page: 'module', namespace: 'a', name: 'b', provider: 'c', version: '' })).toBe('registry');
    expect(sectionOf({ page: 'not-found', path: '/x' })).toBeUndefined();
  });
});
