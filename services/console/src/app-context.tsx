// What every page needs: the API client for this origin, and navigation that keeps the
// address bar (deep links) in step with the page.
import { createContext, useCallback, useContext, useEffect, useRef, useState, type DependencyList } from 'react';
import type { ApiClient } from './lib/api-client';
import { describeError } from './lib/api-errors';
import { onTokensChanged } from './lib/session';

export const ApiContext = createContext<ApiClient | undefined>(undefined);

export function useApi(): ApiClient {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside ApiContext');
  return api;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === `${location.pathname}${location.search}`) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): { pathname: string; search: string } {
  const [loc, setLoc] = useState({ pathname: location.pathname, search: location.search });
  useEffect(() => {
    const on = () => setLoc({ pathname: location.pathname, search: location.search });
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return loc;
}

/** Re-renders when a token is signed in or out anywhere in the console. */
export function useTokenVersion(): number {
  const [v, setV] = useState(0);
  useEffect(() => onTokensChanged(() => setV((x) => x + 1)), []);
  return v;
}

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string; status?: number } | { state: 'ready'; data: T };

/** Runs `load` when `deps` change (and on reload()), aborting the previous run. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): [Loaded<T>, () => void] {
  const [state, setState] = useState<Loaded<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  const tokens = useTokenVersion();
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastTick = useRef(tick);
  useEffect(() => {
    const ctrl = new AbortController();
    // A reload keeps showing the current data until the new answer arrives; anything
    // else (another key, another token) starts from the loading state.
    const isReload = lastTick.current !== tick;
    lastTick.current = tick;
    setState((s) => (isReload && s.state === 'ready' ? s : { state: 'loading' }));
    loadRef.current(ctrl.signal).then(
      (data) => {
        if (!ctrl.signal.aborted) setState({ state: 'ready', data });
      },
      (err: unknown) => {
        if (!ctrl.signal.aborted) setState({ state: 'error', message: describeError(err), status: (err as { status?: number }).status });
      },
    );
    return () => ctrl.abort();
  }, [...deps, tick, tokens]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [state, reload];
}
