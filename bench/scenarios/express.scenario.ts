// Framework overhead: Express 5 answering the same body as the node-http baseline, so
// the ratio is what Express costs before any of our code runs. `express-json` is Express
// as usually deployed (node:http hands it plain objects, Express re-prototypes each
// request and response); `express-json-born` is the same app behind a node:http server
// that creates them with the app's prototypes (what @selfstack/http-kit's listener does;
// see prototypeClassesFor).
import express from 'express';
import { createServer } from 'node:http';
import { prototypeClassesFor } from '@selfstack/http-kit';
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
];
