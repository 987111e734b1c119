// The two figures every run measures first (../shared/ARCHITECTURE.md, "Tests": "each
// run measures a bare Node HTTP server and Postgres point reads in the same run and
// reports our figures as ratios to them"), so results compare across machines.
import http, { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import type { BaselineName, Scenario } from './scenario';

/** Body of the node-http baseline: a small JSON document, like a typical API answer. */
export const BASELINE_BODY = JSON.stringify({ id: 'b7a1c3', name: 'baseline', version: 3, tags: ['a', 'b'], ok: true });

export function listen(server: Server): Promise<string> {
  return new Promise((resolveUrl) =>
    server.listen(0, '127.0.0.1', () => resolveUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
}

const nodeHttp: Scenario = {
  name: 'node-http',
  description: 'bare node:http server answering a small JSON body',
  baseline: 'node-http',
  async setup() {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(BASELINE_BODY) });
      res.end(BASELINE_BODY);
    });
    const url = await listen(server);
    return { target: { kind: 'http', url }, teardown: () => closeServer(server) };
  },
};

const ROWS = 1000;

const pgPointRead: Scenario = {
  name: 'pg-point-read',
  description: `SELECT by primary key on a ${ROWS}-row table (postgres package, prepared), one query per operation`,
  baseline: 'pg-point-read',
  async setup(ctx) {
    // Own table per run, so concurrent runs and real data never meet; unlogged because
    // durability is not what is measured.
    const table = `bench_point_${process.pid}_${Date.now()}`;
    const sql = postgres(ctx.databaseUrl, { max: ctx.connections, onnotice: () => undefined });
    try {
      await sql`CREATE UNLOGGED TABLE ${sql(table)} (id integer PRIMARY KEY, name text NOT NULL, value integer NOT NULL)`;
      await sql`INSERT INTO ${sql(table)} (id, name, value) SELECT g, 'row-' || g, g * 7 FROM generate_series(1, ${ROWS}) AS g`;
      await sql`ANALYZE ${sql(table)}`;
    } catch (err) {
      await sql.end({ timeout: 1 });
      throw err;
    }
    let next = 0;
    return {
      target: {
        kind: 'function',
        run: async () => {
          next = (next % ROWS) + 1;
          const rows = await sql`SELECT id, name, value FROM ${sql(table)} WHERE id = ${next}`;
          if (rows.length !== 1) throw new Error('point read returned no row');
        },
      },
      teardown: async () => {
        await sql`DROP TABLE IF EXISTS ${sql(table)}`;
        await sql.end({ timeout: 5 });
      },
    };
  },
};

export const BASELINES: Readonly<Record<BaselineName, Scenario>> = { 'node-http': nodeHttp, 'pg-point-read': pgPointRead };

/** A sampled response, as a floor server replays it. */
export interface SampledResponse {
  status: number;
  /** As sent, minus the hop-by-hop and per-response ones node:http writes itself. */
  headers: Array<[string, string]>;
  body: Buffer;
}

const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** One response of `url` (for the floors that answer with a service's own bytes). */
export function sampleResponse(url: string, headers: Record<string, string> = {}): Promise<SampledResponse> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const out: Array<[string, string]> = [];
          const raw = res.rawHeaders;
          for (let i = 0; i + 1 < raw.length; i += 2) if (!NOT_REPLAYED.has((raw[i] as string).toLowerCase())) out.push([raw[i] as string, raw[i + 1] as string]);
          resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
