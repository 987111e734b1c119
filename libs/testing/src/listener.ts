// Real sockets for tests that need them (real clients such as node-vault or the vagrant
// CLI, streaming, keep-alive): the app listens on an ephemeral port on 127.0.0.1 through
// the production listener of @selfstack/http-kit, so tests see what clients see (the
// LIST method, keep-alive handling, connection-level size limits).
import type { RequestListener } from 'node:http';
import { createListener, type Listener } from '@selfstack/http-kit';

export interface TestListener {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  /** The underlying http-kit listener (inFlight(), the servers). */
  listener: Listener;
  /** Stops listening; idle keep-alive connections end at once, in-flight ones get a short grace. */
  close(): Promise<void>;
}

export interface StartTestListenerOptions {
  /** Connection-level body cap, as in production. Default: none. */
  maxRequestBytes?: number;
  /** How long close() lets in-flight requests (streams, blocking queries) finish. Default 500 ms. */
  drainTimeoutMs?: number;
}

export async function startTestListener(app: RequestListener, options: StartTestListenerOptions = {}): Promise<TestListener> {
  const listener = await createListener(app, {
    port: 0,
    host: '127.0.0.1',
    ...(options.maxRequestBytes !== undefined ? { maxRequestBytes: options.maxRequestBytes } : {}),
  });
  const drainTimeoutMs = options.drainTimeoutMs ?? 500;
  return {
    url: listener.url,
    port: listener.port,
    listener,
    close: () => listener.close({ drainTimeoutMs }),
  };
}
