// The slice of a logger libs/db needs. Structural on purpose: a winston logger from
// @selfstack/logger satisfies it, and so does a test spy, without libs/db depending on
// the logger package.
export interface DbLogger {
  info(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  error(message: string, meta?: Record<string, unknown>): unknown;
  debug?(message: string, meta?: Record<string, unknown>): unknown;
}

/** A logger that drops everything: the default when the caller passes none. */
export const silentDbLogger: DbLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
