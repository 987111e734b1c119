import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import {
  BadRequestError,
  PayloadTooLargeError,
  bodyTooLargeMessage,
  jsonParseMessage,
  type ErrorFlavour,
} from '@selfstack/errors';
import { DEFAULT_MAX_REQUEST_BYTES, kitSettingsOf } from './kit-settings';

export interface BodyOptions {
  maxBytes: number;
  /** Parse as JSON when Content-Type is absent, or is anything but form/multipart (Vault). */
  jsonWithoutContentType: boolean;
  flavour: ErrorFlavour;
}

function mediaTypeOf(req: IncomingMessage): string {
  const ct = req.headers['content-type'];
  if (ct === undefined) return '';
  const semi = ct.indexOf(';');
  return (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase();
}

function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const cl = req.headers['content-length'];
  return cl !== undefined && cl !== '0';
}

type BodyKind = 'json' | 'form' | 'none';

function bodyKind(req: IncomingMessage, jsonWithoutContentType: boolean): BodyKind {
  const mt = mediaTypeOf(req);
  if (mt === 'application/json' || mt.endsWith('+json')) return 'json';
  if (mt === 'application/x-www-form-urlencoded') return 'form';
  if (!jsonWithoutContentType) return 'none';
  if (mt === '' || !mt.startsWith('multipart/')) return 'json';
  return 'none';
}

/**
 * Reads the whole body up to `maxBytes`. The declared Content-Length is checked before a
 * byte is read; chunked bodies are counted while reading. Over the limit -> 413 in the
 * flavour's wording (the error middleware then closes the connection rather than drain).
 */
export function readRawBody(req: IncomingMessage, maxBytes: number, flavour: ErrorFlavour): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && maxBytes >= 0 && Number(declared) > maxBytes) {
    return Promise.reject(new PayloadTooLargeError(bodyTooLargeMessage(flavour)));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (maxBytes >= 0 && total > maxBytes) {
        cleanup();
        // Stop reading; the 413 response closes the connection.
        req.pause();
        reject(new PayloadTooLargeError(bodyTooLargeMessage(flavour)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new BadRequestError('error reading request body', { cause: err }));
    };
    const onAborted = () => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

function parseForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Go's r.PostForm.Get returns the first value of a repeated key.
  for (const [k, v] of new URLSearchParams(text)) if (!(k in out)) out[k] = v;
  return out;
}

/**
 * Reads and decodes the request body: JSON (or form, as Vault accepts for POST/PUT) into a
 * value; `undefined` when there is no body or the media type is not one the kit parses.
 */
export async function readBody(req: IncomingMessage, options: BodyOptions): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  const kind = bodyKind(req, options.jsonWithoutContentType);
  if (kind === 'none') return undefined;
  const raw = await readRawBody(req, options.maxBytes, options.flavour);
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  // Vault treats a form-typed body that starts like JSON as JSON.
  const first = text.trimStart()[0];
  if (kind === 'form' && first !== '{' && first !== '[') return parseForm(text);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BadRequestError(jsonParseMessage(err instanceof Error ? err.message : String(err)));
  }
}

/** Express middleware form of readBody for hand-written routes (sets `req.body`). */
export function jsonBody(overrides: Partial<BodyOptions> = {}): RequestHandler {
  return (req, _res, next) => {
    if (req.body !== undefined) {
      next();
      return;
    }
    const settings = kitSettingsOf(req);
    const options: BodyOptions = {
      maxBytes: overrides.maxBytes ?? settings?.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
      jsonWithoutContentType: overrides.jsonWithoutContentType ?? settings?.jsonWithoutContentType ?? false,
      flavour: overrides.flavour ?? settings?.flavour ?? 'registry',
    };
    readBody(req, options).then(
      (body) => {
        req.body = body;
        next();
      },
      (err: unknown) => next(err),
    );
  };
}
