import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import {
  BadRequestError,
  PayloadTooLargeError,
  bodyTooLargeMessage,
  type ErrorFlavour,
} from '@selfstack/errors';
import { DEFAULT_MAX_REQUEST_BYTES, kitSettingsOf } from './kit-settings';
import { DEFAULT_MAX_BODY_DEPTH, decodeUtf8, parseJsonBody, unstorableStringReason } from './json-policy';

export interface BodyOptions {
  maxBytes: number;
  /** Parse as JSON when Content-Type is absent, or is anything but form/multipart (Vault). */
  jsonWithoutContentType: boolean;
  flavour: ErrorFlavour;
  /** Nesting levels a JSON body may have (json-policy.ts; default DEFAULT_MAX_BODY_DEPTH). */
  maxDepth?: number;
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
 * One body being read: its listeners are this object's methods, bound once, rather than
 * closures made per request (under tsx and the production bundle, which keep function
 * names, every named closure also costs a defineProperty: ~1 % of a KV write's CPU).
 */
class RawBodyRead {
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onError = this.error.bind(this);
  private readonly onAborted = this.aborted.bind(this);

  constructor(
    private readonly req: IncomingMessage,
    private readonly maxBytes: number,
    private readonly flavour: ErrorFlavour,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onError);
    req.on('aborted', this.onAborted);
  }

  private cleanup(): void {
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('error', this.onError);
    this.req.off('aborted', this.onAborted);
  }

  private data(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.maxBytes >= 0 && this.total > this.maxBytes) {
      this.cleanup();
      // Stop reading; the 413 response closes the connection.
      this.req.pause();
      this.reject(new PayloadTooLargeError(bodyTooLargeMessage(this.flavour)));
      return;
    }
    this.chunks.push(chunk);
  }

  private end(): void {
    this.cleanup();
    this.resolve(this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.total));
  }

  private error(err: Error): void {
    this.cleanup();
    this.reject(new BadRequestError('error reading request body', { cause: err }));
  }

  private aborted(): void {
    this.error(new Error('request aborted'));
  }
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
  return new Promise<Buffer>((resolve, reject) => void new RawBodyRead(req, maxBytes, flavour, resolve, reject));
}

function parseForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Go's r.PostForm.Get returns the first value of a repeated key.
  for (const [k, v] of new URLSearchParams(text)) {
    // The same rule as JSON bodies: a NUL cannot be stored (json-policy.ts).
    const reason = unstorableStringReason(k) ?? unstorableStringReason(v);
    if (reason) throw new BadRequestError(`form field ${JSON.stringify(k)} ${reason}`);
    if (!Object.hasOwn(out, k)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
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
  const text = decodeUtf8(raw);
  // Vault treats a form-typed body that starts like JSON as JSON.
  const first = text.trimStart()[0];
  if (kind === 'form' && first !== '{' && first !== '[') return parseForm(text);
  return parseJsonBody(text, { maxDepth: options.maxDepth ?? DEFAULT_MAX_BODY_DEPTH });
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
      maxDepth: overrides.maxDepth ?? settings?.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH,
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
