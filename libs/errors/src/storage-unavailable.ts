// A request that failed because a storage backend could not be reached is a 503 with
// Retry-After, not a 500: nothing is wrong with the request or the service, and the
// clients reconnect by themselves (docs/operations.md "Failure behaviour"). Mostly that is
// PostgreSQL (refused, reset, ended by a restart or a shutdown, still starting up, out of
// connections, the pool timing out); a blob store's endpoint (S3: the AWS SDK passes the
// socket's error on) is recognised by the same socket codes. Recognised structurally, so
// this library needs neither pg nor Prisma: node-postgres errors by their `code` (a system
// error or a SQLSTATE) or, when they carry none, their message; Prisma's by its connection
// error codes or the driver adapter's error it carries in `meta.driverAdapterError` (its
// `cause.kind`, or the SQLSTATE in `cause.originalCode`).
import { ServiceUnavailableError } from './app-error';

/** Seconds a client is asked to wait before retrying (a restart takes about that long). */
export const STORAGE_RETRY_AFTER_SECONDS = 1;

// System errors of a socket to the backend.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// SQLSTATEs: class 08 (connection exception) is matched by prefix; admin_shutdown,
// crash_shutdown, cannot_connect_now (starting up) and too_many_connections.
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
// Prisma: can't reach the server, timed out reaching it, the server closed the connection,
// timed out waiting for a pooled connection.
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024']);
// @prisma/adapter-pg's error kinds for the same.
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
// node-postgres' errors that carry no code: the connection ended under a query, a client
// used after its connection failed, the pool's connection timeout.
const CODELESS_MESSAGE = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended)/;

function isUnavailableCode(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  return SOCKET_CODES.has(code) || SQLSTATES.has(code) || PRISMA_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/** Whether `err` (or what it wraps, a few levels down) says a storage backend could not be reached. */
export function isStorageUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): boolean => {
    if (typeof value !== 'object' || value === null || depth > 4 || seen.has(value)) return false;
    seen.add(value);
    const e = value as { code?: unknown; kind?: unknown; originalCode?: unknown; cause?: unknown; errors?: unknown; meta?: { driverAdapterError?: unknown } };
    if (isUnavailableCode(e.code) || isUnavailableCode(e.originalCode)) return true;
    if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
    if (e.code === undefined && value instanceof Error && CODELESS_MESSAGE.test(value.message)) return true;
    // An AggregateError: every address of the backend's host refused.
    if (Array.isArray(e.errors) && e.errors.some((inner) => visit(inner, depth + 1))) return true;
    return visit(e.cause, depth + 1) || visit(e.meta?.driverAdapterError, depth + 1);
  };
  return visit(err, 0);
}

/**
 * What a request that met an unreachable storage backend answers: 503 with Retry-After, in
 * the API's own error shape; the message names the request id of the log line (as a
 * 500's does), which has the driver's error.
 */
export class StorageUnavailableError extends ServiceUnavailableError {
  constructor(cause: unknown) {
    super(['a storage backend cannot be reached; retry later'], { cause, withRequestId: true, headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_SECONDS) } });
  }
}
