import winston from 'winston';
import { DEFAULT_REDACT_PATTERN, redactInfo } from './redact';

export type Logger = winston.Logger;
export type LogLevel = 'error' | 'warn' | 'info' | 'http' | 'verbose' | 'debug' | 'silly';

export interface CreateLoggerOptions {
  service: string;
  level?: LogLevel;
  silent?: boolean;
  /** Where the JSON lines go; stdout unless a test captures them. */
  destination?: NodeJS.WritableStream;
  /** Keys whose values are replaced by "[REDACTED]" (default: DEFAULT_REDACT_PATTERN). */
  redactPattern?: RegExp;
}

/**
 * One JSON object per line: `{"level","message","service","timestamp",...meta}`, with secret
 * values redacted before formatting.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const pattern = options.redactPattern ?? DEFAULT_REDACT_PATTERN;
  const redaction = winston.format((info) => {
    redactInfo(info as unknown as Record<string, unknown>, pattern);
    return info;
  });
  const destination = options.destination ?? process.stdout;
  const transport = new winston.transports.Stream({ stream: destination });
  const logger = winston.createLogger({
    level: options.level ?? 'info',
    silent: options.silent ?? false,
    defaultMeta: { service: options.service },
    format: winston.format.combine(redaction(), winston.format.timestamp(), jsonLine()),
    transports: [transport],
  });
  installFastPath(logger, transport, destination);
  return logger;
}

type Info = Record<string | symbol, unknown>;

// The symbols winston's formats use (triple-beam's LEVEL and MESSAGE are registered symbols).
const LEVEL = Symbol.for('level');
const MESSAGE = Symbol.for('message');

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * One JSON object per line. logform's json() configures safe-stable-stringify on every
 * call (and sorts keys); after redaction the entry is a cycle-free copy, so plain
 * JSON.stringify does, with a replacer only for the rare BigInt.
 */
const jsonLine = winston.format((info) => {
  const entry = info as unknown as Info;
  let text: string;
  try {
    text = JSON.stringify(entry);
  } catch {
    try {
      text = JSON.stringify(entry, bigintSafe);
    } catch {
      text = JSON.stringify({ level: info.level, message: String(info.message), log_error: 'entry not serialisable' });
    }
  }
  entry[MESSAGE] = text;
  return info;
});

/**
 * winston pushes every entry through a Transform and a piped transport stream, which
 * costs several times the formatting itself; the request log line is written on every
 * request. While the logger still has exactly its own stream transport, entries are
 * formatted by the same format and written straight to the destination, with the same
 * level and silent semantics. Any other configuration falls back to winston's path.
 */
function installFastPath(logger: Logger, transport: winston.transport, destination: NodeJS.WritableStream): void {
  const slowWrite = logger.write.bind(logger);
  const fastWrite = (chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean => {
    const info = chunk as Info;
    if (logger.transports.length !== 1 || logger.transports[0] !== transport || transport.format || transport.level || transport.silent) {
      return (slowWrite as (c: unknown, e?: unknown, f?: unknown) => boolean)(chunk, encodingOrCb, cb);
    }
    const done = typeof encodingOrCb === 'function' ? encodingOrCb : typeof cb === 'function' ? cb : undefined;
    if (!logger.silent) {
      const levelName = (info[LEVEL] as string | undefined) ?? (info.level as string);
      info[LEVEL] = levelName;
      const wanted = logger.levels[levelName];
      const threshold = logger.levels[logger.level];
      if (wanted !== undefined && threshold !== undefined && wanted <= threshold) {
        const out = logger.format.transform(info as winston.Logform.TransformableInfo, logger.format.options) as Info | false;
        if (out) destination.write(`${String(out[MESSAGE])}\n`);
      }
    }
    if (done) (done as () => void)();
    return true;
  };
  logger.write = fastWrite as typeof logger.write;
}
