// The console's URLs, all under /ui/ (issue 32, item 7: deep links survive a reload; the
// servers answer index.html for every /ui/ path). One parser and one printer, so a link
// the console builds is the link it reads back (router.test.ts checks the round trip).
export const BASE = '/ui';

export type Route =
  | { readonly page: 'home' }
  | { readonly page: 'secrets' }
  | { readonly page: 'secrets-kv'; readonly mount: string; readonly path: string }
  | { readonly page: 'secrets-policies' }
  | { readonly page: 'secrets-policy'; readonly name: string }
  | { readonly page: 'jobs'; readonly filter: string; readonly namespace: string }
  | { readonly page: 'job'; readonly id: string; readonly namespace: string }
  | { readonly page: 'allocation'; readonly id: string }
  | { readonly page: 'nodes' }
  | { readonly page: 'node'; readonly id: string }
  | { readonly page: 'evaluations' }
  | { readonly page: 'boxes'; readonly q: string; readonly provider: string; readonly sort: string }
  | { readonly page: 'boxes-user'; readonly user: string }
  | { readonly page: 'box'; readonly user: string; readonly box: string }
  | { readonly page: 'boxes-account' }
  | { readonly page: 'registry'; readonly q: string }
  | { readonly page: 'module'; readonly namespace: string; readonly name: string; readonly provider: string; readonly version: string }
  | { readonly page: 'controller' }
  | { readonly page: 'not-found'; readonly path: string };

const enc = encodeURIComponent;

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Reads a location (pathname + search) into a route; anything unknown is `not-found`. */
export function parseRoute(pathname: string, search = ''): Route {
  const params = new URLSearchParams(search);
  const q = (name: string) => params.get(name) ?? '';
  if (pathname !== BASE && !pathname.startsWith(`${BASE}/`)) return { page: 'not-found', path: pathname };
  const rest = pathname.slice(BASE.length + 1);
  const raw = rest === '' ? [] : rest.split('/');
  const parts = raw.map(decode);
  if (parts.some((p) => p === undefined)) return { page: 'not-found', path: pathname };
  const seg = parts as string[];
  const [a, b, c, d, e] = seg;
  const n = seg.length - (seg.at(-1) === '' ? 1 : 0);
  switch (a) {
    case undefined:
    case '':
      return { page: 'home' };
    case 'secrets':
      if (n === 1) return { page: 'secrets' };
      if (b === 'kv' && c) {
        // Everything after the mount is the key path; a trailing "/" marks a folder.
        return { page: 'secrets-kv', mount: c, path: seg.slice(3).join('/') };
      }
      if (b === 'policies' && n === 2) return { page: 'secrets-policies' };
      if (b === 'policies' && c && n === 3) return { page: 'secrets-policy', name: c };
      break;
    case 'scheduler':
      if (n === 1 || (b === 'jobs' && n === 2)) return { page: 'jobs', filter: q('filter'), namespace: q('namespace') };
      if (b === 'jobs' && c && n === 3) return { page: 'job', id: c, namespace: q('namespace') || 'default' };
      if (b === 'allocations' && c && n === 3) return { page: 'allocation', id: c };
      if (b === 'nodes' && n === 2) return { page: 'nodes' };
      if (b === 'nodes' && c && n === 3) return { page: 'node', id: c };
      if (b === 'evaluations' && n === 2) return { page: 'evaluations' };
      break;
    case 'boxes':
      if (n === 1) return { page: 'boxes', q: q('q'), provider: q('provider'), sort: q('sort') };
      if (b === 'account' && n === 2) return { page: 'boxes-account' };
      if (b && n === 2) return { page: 'boxes-user', user: b };
      if (b && c && n === 3) return { page: 'box', user: b, box: c };
      break;
    case 'registry':
      if (n === 1) return { page: 'registry', q: q('q') };
      if (b && c && d && (n === 4 || (n === 5 && e))) return { page: 'module', namespace: b, name: c, provider: d, version: e ?? '' };
      break;
    case 'controller':
      if (n === 1) return { page: 'controller' };
      break;
  }
  return { page: 'not-found', path: pathname };
}

function withQuery(path: string, query: Record<string, string>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) qs.set(k, v);
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

/** The /ui/... link of a route. */
export function href(route: Route): string {
  switch (route.page) {
    case 'home':
      return `${BASE}/`;
    case 'secrets':
      return `${BASE}/secrets`;
    case 'secrets-kv':
      return `${BASE}/secrets/kv/${enc(route.mount)}/${route.path.split('/').map(enc).join('/')}`;
    case 'secrets-policies':
      return `${BASE}/secrets/policies`;
    case 'secrets-policy':
      return `${BASE}/secrets/policies/${enc(route.name)}`;
    case 'jobs':
      return withQuery(`${BASE}/scheduler/jobs`, { filter: route.filter, namespace: route.namespace });
    case 'job':
      return withQuery(`${BASE}/scheduler/jobs/${enc(route.id)}`, { namespace: route.namespace === 'default' ? '' : route.namespace });
    case 'allocation':
      return `${BASE}/scheduler/allocations/${enc(route.id)}`;
    case 'nodes':
      return `${BASE}/scheduler/nodes`;
    case 'node':
      return `${BASE}/scheduler/nodes/${enc(route.id)}`;
    case 'evaluations':
      return `${BASE}/scheduler/evaluations`;
    case 'boxes':
      return withQuery(`${BASE}/boxes`, { q: route.q, provider: route.provider, sort: route.sort });
    case 'boxes-account':
      return `${BASE}/boxes/account`;
    case 'boxes-user':
      return `${BASE}/boxes/${enc(route.user)}`;
    case 'box':
      return `${BASE}/boxes/${enc(route.user)}/${enc(route.box)}`;
    case 'registry':
      return withQuery(`${BASE}/registry`, { q: route.q });
    case 'module':
      return `${BASE}/registry/${[route.namespace, route.name, route.provider, ...(route.version ? [route.version] : [])].map(enc).join('/')}`;
    case 'controller':
      return `${BASE}/controller`;
    case 'not-found':
      return route.path;
  }
}

/** The top-level section a route belongs to (the highlighted navigation entry). */
export function sectionOf(route: Route): 'home' | 'secrets' | 'scheduler' | 'boxes' | 'registry' | 'controller' | undefined {
  if (route.page === 'home') return 'home';
  if (route.page.startsWith('secrets')) return 'secrets';
  if (['jobs', 'job', 'allocation', 'nodes', 'node', 'evaluations'].includes(route.page)) return 'scheduler';
  if (route.page.startsWith('box')) return 'boxes';
  if (route.page === 'registry' || route.page === 'module') return 'registry';
  if (route.page === 'controller') return 'controller';
  return undefined;
}
