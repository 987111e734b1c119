// The console's shell: detects which APIs this origin reaches, renders the navigation and
// the page of the current /ui/ address, and catches render errors so nothing ever shows
// a blank page or a stack trace (issue 32).
import { Component, useEffect, useMemo, useState, type ErrorInfo, type ReactNode } from 'react';
import { ApiContext, useApi, useLoad, useLocation } from './app-context';
import { createApiClient } from './lib/api-client';
import { API_NAMES, API_TITLES, describeError, type ApiName } from './lib/api-errors';
import { availability, detectReach, type Reach } from './lib/environment';
import { href, parseRoute, sectionOf, type Route } from './lib/router';
import { ErrorMessage, Link, Loading, StatusBadge, Unavailable } from './components/ui';
import { KvPage, PoliciesPage, PolicyPage, SecretsPage } from './pages/secrets-pages';
import { AllocationPage, EvaluationsPage, JobPage, JobsPage, NodePage, NodesPage } from './pages/scheduler-pages';
import { BoxesAccountPage, BoxesPage, BoxesUserPage, BoxPage } from './pages/boxes-pages';
import { ModulePage, RegistryPage } from './pages/registry-pages';
import { ControllerPage } from './pages/controller-page';

class ErrorBoundary extends Component<{ children: ReactNode; resetKey: string }, { error?: string }> {
  override state: { error?: string } = {};
  static getDerivedStateFromError(err: unknown) {
    return { error: describeError(err) };
  }
  override componentDidCatch(err: unknown, info: ErrorInfo) {
    console.error('console page failed', err, info.componentStack);
  }
  override componentDidUpdate(prev: { resetKey: string }) {
    if (prev.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: undefined });
  }
  override render() {
    if (this.state.error) return <ErrorMessage title="This page failed to render" message={`${this.state.error}. Other pages still work; reload to try again.`} />;
    return this.props.children;
  }
}

const NAV: [ApiName | 'home', string][] = [
  ['home', href({ page: 'home' })],
  ['secrets', href({ page: 'secrets' })],
  ['scheduler', href({ page: 'jobs', filter: '', namespace: '' })],
  ['boxes', href({ page: 'boxes', q: '', provider: '', sort: '' })],
  ['registry', href({ page: 'registry', q: '' })],
  ['controller', href({ page: 'controller' })],
];

function apiOf(route: Route): ApiName | undefined {
  const s = sectionOf(route);
  return s === 'home' ? undefined : s;
}

function PageFor({ route }: { route: Route }) {
  switch (route.page) {
    case 'home':
      return <HomePage />;
    case 'secrets':
      return <SecretsPage />;
    case 'secrets-kv':
      return <KvPage mount={route.mount} path={route.path} />;
    case 'secrets-policies':
      return <PoliciesPage />;
    case 'secrets-policy':
      return <PolicyPage name={route.name} />;
    case 'jobs':
      return <JobsPage filter={route.filter} namespace={route.namespace} />;
    case 'job':
      return <JobPage id={route.id} namespace={route.namespace} />;
    case 'allocation':
      return <AllocationPage id={route.id} />;
    case 'nodes':
      return <NodesPage />;
    case 'node':
      return <NodePage id={route.id} />;
    case 'evaluations':
      return <EvaluationsPage />;
    case 'boxes':
      return <BoxesPage q={route.q} provider={route.provider} sort={route.sort} />;
    case 'boxes-user':
      return <BoxesUserPage user={route.user} />;
    case 'box':
      return <BoxPage user={route.user} box={route.box} />;
    case 'boxes-account':
      return <BoxesAccountPage />;
    case 'registry':
      return <RegistryPage q={route.q} />;
    case 'module':
      return <ModulePage namespace={route.namespace} name={route.name} provider={route.provider} version={route.version} />;
    case 'controller':
      return <ControllerPage />;
    case 'not-found':
      return (
        <div className="page">
          <h1>Not found</h1>
          <p>
            The console has no page at <code>{route.path}</code>. <Link href={href({ page: 'home' })}>Go to the overview</Link>.
          </p>
        </div>
      );
  }
}

/** One cheap read per API: is it there, and what does it say about itself. */
const HEALTH: Record<ApiName, { path: string; read: (status: number, body: unknown) => string }> = {
  secrets: {
    path: '/v1/sys/health',
    read: (status, body) => {
      const b = body as { initialized?: boolean; sealed?: boolean; version?: string } | undefined;
      if (status === 501 || b?.initialized === false) return 'not initialised';
      if (status === 503 || b?.sealed) return 'sealed';
      return `unsealed${b?.version ? `, version ${b.version}` : ''}`;
    },
  },
  scheduler: { path: '/v1/status/leader', read: (_s, body) => `leader ${String(body)}` },
  boxes: { path: '/api/v1/search', read: (_s, body) => `${(body as { boxes?: unknown[] }).boxes?.length ?? 0} box(es) on the first page` },
  registry: { path: '/v1/modules', read: (_s, body) => `${(body as { modules?: unknown[] }).modules?.length ?? 0} module(s) on the first page` },
  controller: { path: '/v1/workers', read: (_s, body) => `${(body as { items?: { connected?: boolean }[] }).items?.filter((w) => w.connected).length ?? 0} worker(s) connected` },
};

function HealthRow({ api: name }: { api: ApiName }) {
  const api = useApi();
  const where = availability(api.reach, name);
  const [health, reload] = useLoad(async (signal) => {
    const r = await api.call<unknown>(name, HEALTH[name].path, { signal, accept: [429, 472, 473, 501, 503] });
    return { ok: r.status < 500, text: HEALTH[name].read(r.status, r.data) };
  }, [name]);
  return (
    <tr>
      <th scope="row">
        <Link href={NAV.find(([n]) => n === name)?.[1] ?? '#'}>{API_TITLES[name]}</Link>
      </th>
      <td>
        {!where.ok ? (
          <StatusBadge status="unavailable here" />
        ) : health.state === 'loading' ? (
          <Loading what="status" />
        ) : health.state === 'error' ? (
          <>
            <StatusBadge status="error" /> <span className="error-text">{health.message}</span>{' '}
            <button type="button" className="link-button" onClick={reload}>
              Retry
            </button>
          </>
        ) : (
          <>
            <StatusBadge status={health.data.ok ? 'up' : 'attention'} /> {health.data.text}
          </>
        )}
      </td>
    </tr>
  );
}

function HomePage() {
  const api = useApi();
  return (
    <div className="page">
      <h1>Overview</h1>
      <p>{describeReach(api.reach)}</p>
      <table aria-label="Services">
        <thead>
          <tr>
            <th scope="col">API</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {API_NAMES.map((n) => (
            <HealthRow key={n} api={n} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function describeReach(reach: Reach): string {
  if (reach.mode === 'gateway') return 'Served through the gateway: all five APIs are reachable from this page.';
  if (reach.mode === 'single') return `Served by the ${reach.service} service on its own port: only the ${reach.service} API is reachable from this page. Use the gateway for the others.`;
  return 'Could not tell which service serves this page.';
}

export function App() {
  const [reach, setReach] = useState<Reach | undefined>();
  useEffect(() => {
    void detectReach().then(setReach);
  }, []);
  const loc = useLocation();
  const route = useMemo(() => parseRoute(loc.pathname, loc.search), [loc.pathname, loc.search]);
  const client = useMemo(() => (reach ? createApiClient(reach) : undefined), [reach]);
  const section = sectionOf(route);
  useEffect(() => {
    const title = section && section !== 'home' ? API_TITLES[section] : 'Overview';
    document.title = `${title} · selfstack console`;
  }, [section]);
  useEffect(() => {
    // Move focus to the new page's heading so keyboard and screen-reader users land on it.
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [loc.pathname]);
  const api = apiOf(route);
  const where = api && reach ? availability(reach, api) : undefined;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href={href({ page: 'home' })} className="brand">
          selfstack
        </Link>
        <nav aria-label="Main">
          {NAV.slice(1).map(([name, link]) => (
            <Link key={name} href={link} aria-current={section === name ? 'page' : undefined} className={reach && name !== 'home' && !availability(reach, name).ok ? 'dim' : undefined}>
              {API_TITLES[name as ApiName]}
            </Link>
          ))}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {!client ? (
          <Loading what="the console" />
        ) : (
          <ApiContext.Provider value={client}>
            <ErrorBoundary resetKey={loc.pathname + loc.search}>
              {where && !where.ok ? (
                <div className="page">
                  <h1 tabIndex={-1}>{api ? API_TITLES[api] : ''}</h1>
                  <Unavailable reason={where.reason} />
                </div>
              ) : (
                <PageFor route={route} />
              )}
            </ErrorBoundary>
          </ApiContext.Provider>
        )}
      </main>
    </>
  );
}


