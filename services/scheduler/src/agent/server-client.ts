// The agent's side of the server API: plain HTTP to the configured servers, trying the
// next one when a server cannot be reached (issue 26 item 1: the agent survives a server
// restart). Only fetch; no client library.

export class ServerUnavailableError extends Error {}

export interface ServerResponse {
  status: number;
  text: string;
  headers: Headers;
  json<T>(): T;
}

export function createServerClient(servers: readonly string[]) {
  let current = 0;
  return {
    async request(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ServerResponse> {
      let lastError: unknown;
      for (let i = 0; i < servers.length; i++) {
        const base = servers[(current + i) % servers.length] as string;
        const timeout = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
        const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
        try {
          const res = await fetch(`${base}${path}`, {
            method,
            headers: { ...(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...opts.headers },
            ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
            signal,
          });
          const text = await res.text();
          current = (current + i) % servers.length;
          return { status: res.status, text, headers: res.headers, json: <T>() => JSON.parse(text) as T };
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          lastError = err;
        }
      }
      current = (current + 1) % servers.length;
      throw new ServerUnavailableError(`no server reachable (${servers.join(', ')}): ${lastError instanceof Error ? lastError.message : String(lastError)}`);
    },
  };
}

export type ServerClient = ReturnType<typeof createServerClient>;
