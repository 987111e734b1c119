// How registry handlers describe responses that are not plain 200 JSON (204 with the
// download headers, 302 for "download latest", 201 on publish, a streamed archive),
// while the kit still writes every response (shared ARCHITECTURE "Routes are data").
import type { Readable } from 'node:stream';
import type { Response } from 'express';

export class HttpReply {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string> = {},
    /** JSON-encoded when an object; a Readable is piped; undefined: no body. */
    readonly body?: unknown,
  ) {}
}

function isReadable(v: unknown): v is Readable {
  return typeof v === 'object' && v !== null && typeof (v as Readable).pipe === 'function' && typeof (v as Readable).on === 'function';
}

/** MountOptions.respond for every registry table. */
export function registryRespond(ctx: { method: string }, result: unknown, res: Response): void {
  if (!(result instanceof HttpReply)) {
    if (result === undefined) {
      res.status(204).end();
      return;
    }
    res.status(200).setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(result));
    return;
  }
  res.status(result.status);
  for (const [k, v] of Object.entries(result.headers)) res.setHeader(k, v);
  const body = result.body;
  if (isReadable(body)) {
    if (ctx.method === 'HEAD') {
      body.destroy();
      res.end();
      return;
    }
    body.on('error', () => res.destroy());
    res.on('close', () => body.destroy());
    body.pipe(res);
    return;
  }
  if (body === undefined) {
    res.end();
    return;
  }
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/json');
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}
