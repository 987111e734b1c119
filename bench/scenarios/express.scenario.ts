// Framework overhead: Express 5 answering the same body as the node-http baseline, so
// the ratio is what Express costs before any of our code runs. `express-json` is Express
// as usually deployed (node:http hands it plain objects, Express re-prototypes each
// request and response); `express-json-born` is the same app behind a node:http server
// that creates them with the app's prototypes (what @selfstack/http-kit's listener does;
// see prototypeClassesFor). `kit-json` is the stack every service shares, before any
// service logic: createKitApp (request id, helmet's API profile, metrics, the request-log
// hook) and the declarative dispatcher with one route, behind createListener, as the
// secrets service runs it; the layers between the bare server and a service's figures.
import express from 'express';
import { createServer } from 'node:http';
import { API_HELMET, createKitApp, createListener, definePath, mountPaths, prototypeClassesFor } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
import { BASELINE_BODY, closeServer, listen } from '../baselines';
import type { Scenario } from '../scenario';

function helloApp(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/', (_req, res) => {
    res.type('application/json').send(BASELINE_BODY);
  });
  return app;
}

export const scenarios: Scenario[] = [
  {
    name: 'express-json',
    description: 'Express 5 app, one GET route returning the baseline body',
    baseline: 'node-http',
    async setup() {
      const server = createServer(helloApp());
      const url = await listen(server);
      return { target: { kind: 'http', url }, teardown: () => closeServer(server) };
    },
  },
  {
    name: 'express-json-born',
    description: 'the same Express app, requests and responses created with its prototypes (no per-request setPrototypeOf)',
    baseline: 'node-http',
    async setup() {
      const app = helloApp();
      const server = createServer({ ...prototypeClassesFor(app) }, app);
      const url = await listen(server);
      return { target: { kind: 'http', url }, teardown: () => closeServer(server) };
    },
  },
  {
    name: 'kit-json',
    description: 'createKitApp + one declarative route (dispatcher) behind createListener, returning the baseline body: the shared service stack before any service logic',
    baseline: 'node-http',
    async setup() {
      const body = JSON.parse(BASELINE_BODY) as Record<string, unknown>;
      const hello = definePath({ pattern: 'hello', summary: 'the baseline body', operations: { read: () => body } });
      const logger = createLogger({ service: 'bench', level: 'error' });
      // As the secrets service configures it (jsonWithoutContentType, API helmet profile, metrics on, request log off in the bench).
      const app = createKitApp({ service: 'bench', logger, errorFlavour: 'vault', jsonWithoutContentType: true, requestLog: false, helmet: API_HELMET }, (a) => {
        mountPaths(a, [hello], { prefix: '/v1' });
      });
      const listener = await createListener(app, { port: 0, host: '127.0.0.1' });
      return { target: { kind: 'http', url: `${listener.url}/v1/hello` }, teardown: () => listener.close({ drainTimeoutMs: 100 }) };
    },
  },
];
