// The `ops` listener: GET /health (and /metrics). Spec (gateway controller health):
// 200 with an empty body while the controller's API server is up; 5xx when it is not;
// 503 while a graceful shutdown wait is running; with `worker_info=1` a worker adds
// {"worker_process_info": {state, active_session_count, upstream_connection_state}}.
// The endpoint takes no other input. Methods other than GET and HEAD are answered with
// status 501 and `Allow: GET, HEAD`, as the anchor's gateway answers them.
import http from 'node:http';
import type { Registry } from 'prom-client';
import { parseGoBool } from '@selfstack/config';
import type { ConnectionStateName } from '../cluster/worker-upstream';

export type WorkerOperationalState = 'active' | 'shutdown' | 'unknown';

export interface HealthSources {
  /** Present when the process runs a controller. */
  controller?: {
    apiServerUp(): boolean;
    shuttingDown(): boolean;
  };
  /** Present when the process runs a worker. */
  worker?: {
    state(): WorkerOperationalState;
    activeSessionCount(): number;
    upstreamConnectionState(): ConnectionStateName;
  };
}

export interface OpsOptions {
  /** The spec's precondition (see healthExposed); when false, /health answers 404. */
  healthExposed: boolean;
  sources: HealthSources;
  metrics?: Registry;
}

function truthy(value: string | null): boolean {
  return value !== null && parseGoBool(value) === true;
}

export function createOpsHandler(options: OpsOptions): http.RequestListener {
  return (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://ops.invalid');
    } catch {
      // An unparsable request target (`//[`, `http://[`): a throw here would escape the
      // request listener and crash the process.
      res.writeHead(400, { 'Content-Length': 0 }).end();
      return;
    }
    if (url.pathname === '/health') {
      if (!options.healthExposed) {
        res.writeHead(404).end();
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(501, { Allow: 'GET, HEAD' }).end();
        return;
      }
      const { controller, worker } = options.sources;
      let status = 200;
      if (controller) {
        if (controller.shuttingDown()) status = 503;
        else if (!controller.apiServerUp()) status = 500;
      }
      if (worker && truthy(url.searchParams.get('worker_info'))) {
        const body = JSON.stringify({
          worker_process_info: {
            state: worker.state(),
            active_session_count: worker.activeSessionCount(),
            upstream_connection_state: worker.upstreamConnectionState(),
          },
        });
        res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      res.writeHead(status, { 'Content-Length': 0 }).end();
      return;
    }
    if (url.pathname === '/metrics' && options.metrics && (req.method === 'GET' || req.method === 'HEAD')) {
      const registry = options.metrics;
      registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'Content-Type': registry.contentType });
          res.end(req.method === 'HEAD' ? undefined : text);
        })
        .catch(() => res.writeHead(500).end());
      return;
    }
    res.writeHead(404, { 'Content-Length': 0 }).end();
  };
}
