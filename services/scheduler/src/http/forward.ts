// Region forwarding (spec: `region` "the request is forwarded transparently"): a request
// naming another region is proxied to that region's configured peer, or answered with
// Nomad's `No path to region` when none is configured.
import type { NextFunction, Request, Response } from 'express';
import { BadRequestError } from '@selfstack/errors';

const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'accept-encoding']);

async function readAll(req: Request): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export function regionForwarder(ownRegion: string, peers: Readonly<Record<string, string>>) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const region = typeof req.query['region'] === 'string' ? req.query['region'] : '';
    if (region === '' || region === ownRegion) {
      next();
      return;
    }
    try {
      const peer = peers[region];
      if (!peer) throw new BadRequestError('No path to region');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (!HOP_HEADERS.has(k) && typeof v === 'string') headers[k] = v;
      }
      const body = ['GET', 'HEAD'].includes(req.method) ? undefined : await readAll(req);
      const upstream = await fetch(new URL(req.originalUrl, peer), { method: req.method, headers, ...(body ? { body: new Uint8Array(body) } : {}) });
      res.status(upstream.status);
      upstream.headers.forEach((value, key) => {
        if (!HOP_HEADERS.has(key) && key !== 'content-encoding') res.setHeader(key, value);
      });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch (err) {
      next(err instanceof BadRequestError ? err : new BadRequestError(`failed to forward request to region ${JSON.stringify(region)}: ${err instanceof Error ? err.message : String(err)}`));
    }
  };
}
