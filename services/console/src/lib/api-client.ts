// One fetch wrapper for the five APIs: the right base and token header per API, query
// strings, JSON bodies, and failures as ApiError with the API's own message.
import { ApiError, apiErrorMessage, type ApiName } from './api-errors';
import { availability, type Reach } from './environment';
import { authHeaders, getToken } from './session';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  readonly method?: string;
  readonly query?: Query;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /** Statuses answered as data instead of thrown (a KV v2 read of a deleted version is a 404 with a body). */
  readonly accept?: readonly number[];
  /** Overrides the stored token (sign-in forms check a token before keeping it). */
  readonly token?: string;
}

export interface ApiResponse<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly data: T;
}

export function buildUrl(base: string, path: string, query?: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return `${base}${path}${s ? `?${s}` : ''}`;
}

export interface ApiClient {
  readonly reach: Reach;
  call<T>(api: ApiName, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
}

export function createApiClient(reach: Reach, fetchImpl: typeof fetch = (...a) => fetch(...a)): ApiClient {
  return {
    reach,
    async call<T>(api: ApiName, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
      const where = availability(reach, api);
      if (!where.ok) throw new ApiError(api, 0, where.reason);
      const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders(api, options.token ?? getToken(api)) };
      let body: string | undefined;
      if (options.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(options.body);
      }
      const res = await fetchImpl(buildUrl(where.base, path, options.query), {
        method: options.method ?? 'GET',
        headers,
        body,
        signal: options.signal,
        cache: 'no-store',
      });
      const text = await res.text();
      if (!res.ok && !(options.accept ?? []).includes(res.status)) {
        throw new ApiError(api, res.status, apiErrorMessage(api, res.status, text), text);
      }
      let data: unknown = undefined;
      if (text !== '') {
        try {
          data = JSON.parse(text) as unknown;
        } catch {
          data = text;
        }
      }
      return { status: res.status, headers: res.headers, data: data as T };
    },
  };
}
