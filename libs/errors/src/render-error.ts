import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler } from 'express';
import type { Logger } from '@selfstack/logger';
import { AppError, BadRequestError, PayloadTooLargeError } from './app-error';
import { StorageUnavailableError, isStorageUnavailable } from './storage-unavailable';

/** The error body shape of each API (docs/architecture.md "Errors, one shape per API"). */
export type ErrorFlavour = 'vault' | 'nomad' | 'boxes' | 'registry' | 'empty';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Vault's wording when the listener's max_request_size is exceeded (reference 8.3). */
export function bodyTooLargeMessage(flavour: ErrorFlavour): string {
  return flavour === 'vault' ? 'failed to parse JSON input: http: request body too large' : 'request body too large';
}

/** Vault says `failed to parse JSON input: <go error>` (reference 8.3); we reuse it everywhere. */
export function jsonParseMessage(detail: string): string {
  return `failed to parse JSON input: ${detail}`;
}

interface HttpishError {
  type?: unknown;
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  message?: unknown;
}

/**
 * Turns anything thrown into an AppError. body-parser / raw-body / http-errors errors are
 * recognised by their `type` and `status`; a storage backend that cannot be reached is a
 * 503 (storage-unavailable.ts); every other non-AppError becomes an unexposed 500 so internal
 * detail never reaches a client.
 */
export function toAppError(err: unknown, flavour: ErrorFlavour): AppError {
  if (err instanceof AppError) return err;
  if (typeof err === 'object' && err !== null) {
    const e = err as HttpishError;
    const message = typeof e.message === 'string' ? e.message : '';
    if (e.type === 'entity.too.large') return new PayloadTooLargeError(bodyTooLargeMessage(flavour), { cause: err });
    if (e.type === 'entity.parse.failed') return new BadRequestError(jsonParseMessage(message), { cause: err });
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
    // http-errors marks client errors whose message is safe to show with expose=true.
    if (status !== undefined && status >= 400 && status < 500 && e.expose === true) {
      return new AppError(status, message, { cause: err });
    }
    if (isStorageUnavailable(err)) return new StorageUnavailableError(err);
  }
  return new AppError(500, [], { expose: false, cause: err });
}

const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain; charset=utf-8';

/** Renders an error in the wire shape of `flavour`. Pure: no logging, no I/O. */
export function renderError(flavour: ErrorFlavour, err: unknown, requestId: string): RenderedError {
  const appErr = toAppError(err, flavour);
  const status = appErr.status;
  const messages = !appErr.expose
    ? [`internal error (request id ${requestId})`]
    : appErr.withRequestId
      ? appErr.messages.map((m) => `${m} (request id ${requestId})`)
      : appErr.messages;
  const headers: Record<string, string> = {};
  let body: string;

  if (appErr.body !== undefined && appErr.expose) {
    const raw = appErr.body;
    body = typeof raw === 'string' ? raw : JSON.stringify(raw) + (flavour === 'vault' ? '\n' : '');
    const type = appErr.contentType ?? (flavour === 'nomad' && typeof raw === 'string' ? TEXT_TYPE : JSON_TYPE);
    if (body.length > 0 || appErr.contentType !== undefined) headers['Content-Type'] = type;
  } else {
    switch (flavour) {
      case 'vault':
        // Go's json.Encoder appends a newline; Vault sends no-store on every response (reference 0.10).
        body = JSON.stringify({ errors: messages }) + '\n';
        headers['Content-Type'] = JSON_TYPE;
        headers['Cache-Control'] = 'no-store';
        break;
      case 'registry':
        body = JSON.stringify({ errors: messages });
        headers['Content-Type'] = JSON_TYPE;
        break;
      case 'boxes':
        body = JSON.stringify({ errors: messages, success: false });
        headers['Content-Type'] = JSON_TYPE;
        break;
      case 'nomad':
        // Nomad writes err.Error() as plain text, no trailing newline.
        body = messages.join('; ');
        headers['Content-Type'] = TEXT_TYPE;
        break;
      case 'empty':
        body = '';
        break;
    }
  }
  if (appErr.headers) Object.assign(headers, appErr.headers);
  return { status, headers, body };
}

export interface ErrorMiddlewareOptions {
  flavour: ErrorFlavour;
  logger: Logger;
}

/**
 * The Express error handler for one flavour. 5xx details are logged with the same request
 * id the client sees; client errors are left to the per-request log line.
 */
export function errorMiddleware({ flavour, logger }: ErrorMiddlewareOptions): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    const locals = res.locals as { requestId?: unknown };
    const requestId = typeof locals.requestId === 'string' ? locals.requestId : randomUUID();
    // A handler that stopped because its client went away (a blocking query or a stream
    // whose request's AbortSignal fired on close): nobody to answer and nothing failed.
    if (isAbortError(err) && (res.destroyed || req.socket?.destroyed === true)) {
      logger.debug('request ended: the client went away', { request_id: requestId, method: req.method });
      return;
    }
    const rendered = renderError(flavour, err, requestId);
    if (rendered.status >= 500) {
      const detail = err instanceof Error ? { error: err.message, stack: err.stack, name: err.name } : { error: String(err) };
      logger.error('request failed', { request_id: requestId, method: req.method, status: rendered.status, ...detail });
    }
    if (res.headersSent) {
      // Too late for a clean error response: let Express close the connection.
      next(err);
      return;
    }
    res.status(rendered.status);
    for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
    if (rendered.status === 413) {
      // The rest of an oversized body is never read: close instead of draining it.
      res.setHeader('Connection', 'close');
    }
    res.setHeader('Content-Length', Buffer.byteLength(rendered.body));
    res.end(rendered.body);
  };
}

/** An AbortError (a DOMException from an AbortSignal, or an Error named so), whatever its realm. */
function isAbortError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError';
}
