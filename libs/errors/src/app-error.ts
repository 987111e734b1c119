// One error class hierarchy for every service. Handlers and libraries throw these; the
// per-flavour renderer (render-error.ts) turns them into the wire shape of each API
// (docs/architecture.md "Errors, one shape per API").

export interface AppErrorOptions {
  /** Extra response headers (e.g. `Allow` on a 405, `Retry-After` on a 429). */
  headers?: Record<string, string>;
  /**
   * Replaces the flavour's error body entirely, for the few anchors that answer an error
   * status with a non-error body (Vault's 404 for a destroyed KV v2 version carries a full
   * envelope). A string is written verbatim; anything else is JSON-encoded.
   */
  body?: unknown;
  /** Content-Type for `body` (defaults to the flavour's type). */
  contentType?: string;
  /**
   * Whether `messages` may reach the client. Defaults to true except for 500, whose detail
   * only goes to the log (the client sees "internal error (request id ...)").
   */
  expose?: boolean;
  /** Each exposed message ends with ` (request id <id>)`, naming the log line with the detail. */
  withRequestId?: boolean;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  /** Client-facing messages; an empty list is legal (Vault's `{"errors":[]}`). */
  readonly messages: string[];
  readonly headers: Record<string, string> | undefined;
  readonly body: unknown;
  readonly contentType: string | undefined;
  readonly expose: boolean;
  readonly withRequestId: boolean;

  constructor(status: number, messages: string | readonly string[] = [], options: AppErrorOptions = {}) {
    const list = typeof messages === 'string' ? [messages] : [...messages];
    super(list.length > 0 ? list.join('; ') : `HTTP ${status}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.messages = list;
    this.headers = options.headers;
    this.body = options.body;
    this.contentType = options.contentType;
    this.expose = options.expose ?? status !== 500;
    this.withRequestId = options.withRequestId === true;
  }
}

// Subclasses only fix the status; they exist so call sites read as intent and so
// `instanceof NotFoundError` works in tests and services.
type Messages = string | readonly string[];

export class BadRequestError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(400, messages, options); }
}
export class UnauthorizedError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(401, messages, options); }
}
export class PaymentRequiredError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(402, messages, options); }
}
export class ForbiddenError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(403, messages, options); }
}
export class NotFoundError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(404, messages, options); }
}
export class MethodNotAllowedError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(405, messages, options); }
}
export class NotAcceptableError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(406, messages, options); }
}
export class ConflictError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(409, messages, options); }
}
export class PreconditionFailedError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(412, messages, options); }
}
export class PayloadTooLargeError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(413, messages, options); }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(415, messages, options); }
}
export class UnprocessableEntityError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(422, messages, options); }
}
export class TooManyRequestsError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(429, messages, options); }
}
export class InternalError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(500, messages, options); }
}
export class NotImplementedError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(501, messages, options); }
}
export class ServiceUnavailableError extends AppError {
  constructor(messages: Messages = [], options?: AppErrorOptions) { super(503, messages, options); }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/**
 * go-multierror's text, which Vault puts in many error bodies (reference section 9):
 * `1 error occurred:\n\t* permission denied\n\n`.
 */
export function formatMultiError(errors: readonly string[]): string {
  const head = errors.length === 1 ? '1 error occurred:' : `${errors.length} errors occurred:`;
  return `${head}\n${errors.map((e) => `\t* ${e}`).join('\n')}\n\n`;
}
