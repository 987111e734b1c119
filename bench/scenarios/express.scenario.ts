// Framework overhead: Express 5 answering the same body as the node-http baseline, so
// the ratio is what Express costs before any of our code runs.
import express from 'express';
import { createServer } from 'node:http';
import { BASELINE_BODY, closeServer, listen } from '../baselines';
import type { Scenario } from '../scenario';

export const scenarios: Scenario[] = [
  {
    name: 'express-json',
    description: 'Express 5 app, one GET route returning the baseline body',
    baseline: 'node-http',
    async setup() {
      const app = express();
      app.disable('x-powered-by');
      app.get('/', (_req, res) => {
        res.type('application/json').send(BASELINE_BODY);
      });
      const server = createServer(app);
      const url = await listen(server);
      return { target: { kind: 'http', url }, teardown: () => closeServer(server) };
    },
  },
];
