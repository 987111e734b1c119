// What a handler returns when its answer is not a plain 200 JSON body (shared ARCHITECTURE
// "Routes are data": handlers return data, the kit writes the response). One type for
// every service: registry's 204/302 with download headers and its streamed archives, boxes'
// 201 Created, the scheduler's index headers, the secrets service's raw sys bodies and its
// "404 with an envelope".
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export class Reply<B = unknown> {
  constructor(
    readonly status: number,
    /** Undefined: no body. The default writer sends a Readable as a stream, a string as
     * it is, anything else as JSON; a service's respond hook may give bodies its own form. */
    readonly body?: B,
    readonly headers: Readonly<Record<string, string>> = NO_HEADERS,
  ) {}
}

/** Writes a JSON text with an explicit Content-Length (also what the request log reports). */
export function sendJson(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

function isReadable(v: unknown): v is Readable {
  return typeof v === 'object' && v !== null && typeof (v as Readable).pipe === 'function' && typeof (v as Readable).on === 'function';
}

/**
 * The kit's response writer (mounts without a respond hook): undefined -> 204, a Reply as
 * it says, anything else -> 200 JSON. A streamed body is piped (destroyed unread for HEAD,
 * and when the client goes away).
 */
export function writeResult(res: ServerResponse, method: string, result: unknown): void {
  if (!(result instanceof Reply)) {
    if (result === undefined) {
      res.statusCode = 204;
      res.end();
      return;
    }
    sendJson(res, 200, JSON.stringify(result));
    return;
  }
  res.statusCode = result.status;
  const headers = result.headers;
  for (const k in headers) res.setHeader(k, headers[k] as string);
  const body: unknown = result.body;
  if (body === undefined) {
    res.end();
    return;
  }
  if (isReadable(body)) {
    if (method === 'HEAD') {
      body.destroy();
      res.end();
      return;
    }
    body.on('error', () => res.destroy());
    res.on('close', () => body.destroy());
    body.pipe(res);
    return;
  }
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json');
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}
