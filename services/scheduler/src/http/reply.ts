// What Nomad-style handlers return and how it is written (reference §0): compact JSON (or
// indented with `pretty`), gzip when accepted, the index headers of reads and writes, and
// plain-text errors through the kit's `nomad` error flavour.
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Response } from 'express';
import { Reply, type FieldMap, type OperationContext } from '@selfstack/http-kit';
import type { Indexed } from '../shared/common.types';
import type { RequestExtra } from './request-context';

const gzipAsync = promisify(gzip);

/** What a read reports in its headers (Nomad's QueryMeta). */
export interface QueryMeta {
  index: number;
  lastContactMs: number;
  knownLeader: boolean;
  nextToken: string;
}

// The one header writer for reads and writes (reference §0.2 `setMeta`/`setIndex`). The
// spec's X-Scheduler-* names are primary; the anchor's X-Nomad-* names are emitted too so
// unmodified Nomad clients work.
export function queryMetaHeaders(meta: QueryMeta): Record<string, string> {
  const h: Record<string, string> = {
    'X-Scheduler-Index': String(meta.index),
    'X-Scheduler-KnownLeader': String(meta.knownLeader),
    'X-Scheduler-LastContact': String(meta.lastContactMs),
    'X-Nomad-Index': String(meta.index),
    'X-Nomad-KnownLeader': String(meta.knownLeader),
    'X-Nomad-LastContact': String(meta.lastContactMs),
  };
  // Absent on the last page (spec "Pagination").
  if (meta.nextToken !== '') {
    h['X-Scheduler-Nexttoken'] = meta.nextToken;
    h['X-Nomad-Nexttoken'] = meta.nextToken;
  }
  return h;
}

/** Writes only carry the index (Nomad's setIndex). */
export function writeIndexHeaders(index: number): Record<string, string> {
  return { 'X-Scheduler-Index': String(index), 'X-Nomad-Index': String(index) };
}
/** A blocking-capable read: X-Scheduler-Index, KnownLeader, LastContact (+ Nexttoken). */
export function readReply<T>(r: Indexed<T> & { nextToken?: string }): Reply {
  return new Reply(200, r.value, queryMetaHeaders({ index: r.index, knownLeader: true, lastContactMs: 0, nextToken: r.nextToken ?? '' }));
}

/** A write: only the index header (Nomad's setIndex). */
export function writeReply(body: unknown, index: number): Reply {
  return new Reply(200, body, writeIndexHeaders(index));
}

/** A body without index headers (agent and status endpoints). */
export function plainReply(body: unknown): Reply {
  return new Reply(200, body);
}

/** A write answering with no body (Nomad handlers returning nil), index header only. */
export function emptyWriteReply(index: number): Reply {
  return new Reply(200, undefined, writeIndexHeaders(index));
}

/** What a handler that wrote its own response (the event stream) answers: nothing more to write. */
export const STREAMED: unique symbol = Symbol('scheduler-streamed');

/**
 * Serialised forms of one body object. Services hand the same object to every request
 * that shares a read (readers woken by one write, snapshot-backed lists), so the JSON text
 * and its gzip are produced once per (body, form) instead of once per response. Bodies are
 * never mutated after a handler returned them; a WeakMap lets them go with their last use.
 */
interface Encoded {
  compact?: Buffer;
  pretty?: Buffer;
  compactGzip?: Promise<Buffer>;
  prettyGzip?: Promise<Buffer>;
}

const encodings = new WeakMap<object, Encoded>();

function encodedOf(body: unknown): Encoded {
  if (typeof body !== 'object' || body === null) return {};
  let e = encodings.get(body);
  if (!e) {
    e = {};
    encodings.set(body, e);
  }
  return e;
}

function jsonText(body: unknown, pretty: boolean, e: Encoded): Buffer {
  if (pretty) return (e.pretty ??= Buffer.from(JSON.stringify(body, null, 4) + '\n'));
  return (e.compact ??= Buffer.from(JSON.stringify(body)));
}

function gzipped(text: Buffer, pretty: boolean, e: Encoded): Promise<Buffer> {
  const key = pretty ? 'prettyGzip' : 'compactGzip';
  let z = e[key];
  if (!z) {
    const p = gzipAsync(text);
    z = p;
    e[key] = p;
    // A failed compression is not cached: the next response tries again.
    p.catch(() => {
      if (e[key] === p) delete e[key];
    });
  }
  return z;
}

const GZIP = /\bgzip\b/i;

export async function respond(ctx: OperationContext<FieldMap, RequestExtra>, result: unknown, res: Response): Promise<void> {
  if (result === STREAMED) return;
  const reply = result instanceof Reply ? result : new Reply(200, result);
  // Statuses come from this module (200 or a handler's own constant): no need for
  // Express's validating res.status() on every response.
  res.statusCode = reply.status;
  const headers = reply.headers;
  for (const k in headers) res.setHeader(k, headers[k] as string);
  if (reply.body === undefined) {
    res.end();
    return;
  }
  // Every route declares `pretty` (READ_QUERY, WRITE_QUERY).
  const pretty = ctx.data['pretty'] === true;
  const e = encodedOf(reply.body);
  const text = jsonText(reply.body, pretty, e);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Vary', 'Accept-Encoding');
  const accept = ctx.req.headers['accept-encoding'];
  if (typeof accept === 'string' && GZIP.test(accept) && ctx.method !== 'HEAD') {
    const zipped = await gzipped(text, pretty, e);
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(zipped.length));
    res.end(zipped);
    return;
  }
  res.setHeader('Content-Length', String(text.length));
  res.end(text);
}
