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
  /**
   * How long lines may wait to be written together (createLineBatch): DEFAULT_BATCH_MS;
   * 0 writes each event-loop turn's lines right after that turn (tests that read the lines
   * back at once use it).
   */
  batchMs?: number;
}

/** Default of CreateLoggerOptions.batchMs. */
export const DEFAULT_BATCH_MS = 20;

/**
 * One JSON object per line: `{"level","message","service","timestamp",...meta}`, with secret
 * values redacted before formatting.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const pattern = options.redactPattern ?? DEFAULT_REDACT_PATTERN;
  // One format doing what combine(redaction, timestamp(), json) did: three formats cost a
  // cascade and logform's timestamp a Date per line (issue 30, item 2).
  const line = winston.format((info) => {
    redactInfo(info as unknown as Record<string, unknown>, pattern);
    (info as unknown as Info).timestamp = isoNow();
    return jsonLine(info);
  });
  const destination = options.destination ?? process.stdout;
  const transport = new winston.transports.Stream({ stream: destination });
  const logger = winston.createLogger({
    level: options.level ?? 'info',
    silent: options.silent ?? false,
    defaultMeta: { service: options.service },
    format: line(),
    transports: [transport],
  });
  installFastPath(logger, transport, destination, options.batchMs ?? DEFAULT_BATCH_MS);
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
let lastMs = -1;
let lastIso = '';

/** The time as ISO 8601 with milliseconds (logform's timestamp), one Date per millisecond. */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

function jsonLine(info: winston.Logform.TransformableInfo): winston.Logform.TransformableInfo {
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
}

/**
 * winston pushes every entry through a Transform and a piped transport stream, which
 * costs several times the formatting itself; the request log line is written on every
 * request. While the logger still has exactly its own stream transport, entries are
 * formatted by the same format and written straight to the destination, with the same
 * level and silent semantics. Any other configuration falls back to winston's path.
 */
function installFastPath(logger: Logger, transport: winston.transport, destination: NodeJS.WritableStream, batchMs: number): void {
  const lines = createLineBatch(destination, batchMs);
  const slowWrite = logger.write.bind(logger);
  const ownTransportOnly = () => logger.transports.length === 1 && logger.transports[0] === transport && !transport.format && !transport.level && !transport.silent;
  recordWriters.set(logger, (message, fields) => {
    if (!ownTransportOnly()) return false;
    if (logger.silent) return true;
    const wanted = logger.levels['info'];
    const threshold = logger.levels[logger.level];
    if (wanted === undefined || threshold === undefined || wanted > threshold) return true;
    // The line winston's path writes for logger.info(message, fields): defaultMeta, the
    // fields, level and message, then the timestamp (no key of `fields` is redacted:
    // callers pass only fields that carry no secret, see writeInfoRecord).
    // Written key by key: an object built by spreading two others and then stringified cost
    // ~8 µs per line on the bench box, this ~1 µs.
    const meta = (logger.defaultMeta ?? {}) as Record<string, unknown>;
    let text = '{';
    for (const key in meta) if (!(key in fields) && !RESERVED_KEYS.has(key)) text = withMember(text, key, meta[key]);
    for (const key in fields) if (!RESERVED_KEYS.has(key)) text = withMember(text, key, fields[key]);
    lines.push(`${text}${text.length > 1 ? ',' : ''}"level":"info","message":${JSON.stringify(message)},"timestamp":"${isoNow()}"}\n`);
    return true;
  });
  const fastWrite = (chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean => {
    const info = chunk as Info;
    if (!ownTransportOnly()) {
      lines.flush();
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
        if (out) {
          lines.push(`${String(out[MESSAGE])}\n`);
          // An error may be the last thing the process says: out at once, with what is before it.
          if (wanted <= ERROR_LEVEL) lines.flush();
        }
      }
    }
    if (done) (done as () => void)();
    return true;
  };
  logger.write = fastWrite as typeof logger.write;
}

const ERROR_LEVEL = 0;

/** `text` (an open JSON object) with one more member. */
function withMember(text: string, key: string, value: unknown): string {
  return `${text}${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`;
}

/** Keys a record's line sets itself (winston's info object has them last). */
const RESERVED_KEYS = new Set(['level', 'message', 'timestamp']);

type RecordWriter = (message: string, fields: Readonly<Record<string, string | number | boolean | null>>) => boolean;
const recordWriters = new WeakMap<Logger, RecordWriter>();

/**
 * logger.info(message, fields) for a record written on every request (the request log):
 * the same JSON line, built directly (one object, one JSON.stringify) instead of through
 * winston's logger, its info object and its format pipeline, which cost the request line
 * several times as much. `fields` are flat JSON values whose keys carry no secret (they
 * are not passed through redaction: name none of them like a secret). A logger not made by
 * createLogger, or reconfigured since (another transport), takes winston's path.
 */
export function writeInfoRecord(logger: Logger, message: string, fields: Readonly<Record<string, string | number | boolean | null>>): void {
  const write = recordWriters.get(logger);
  if (write && write(message, fields)) return;
  logger.info(message, { ...fields });
}

/** Lines written together (createLineBatch). */
export interface LineBatch {
  push(line: string): void;
  /** Writes what is pending now, in one write. */
  flush(): void;
}

/** Above this many pending characters a batch is written at once, whatever the turn. */
const MAX_PENDING_CHARS = 256 * 1024;
const pendingBatches = new Set<LineBatch>();
let exitHooked = false;

/**
 * Log lines written together (issue 30, item 2). A request line per request used to be a
 * write(2) of its own on stdout, which Node makes synchronously to pipes and files, and a
 * wake-up of the reader (a log collector, `make dev`) per line: on two cores that cost a
 * KV v2 read a fifth of its CPU. Lines now wait up to `batchMs` (0: the end of the current
 * event-loop turn) and go out in one write, in order. Bounded: past MAX_PENDING_CHARS the
 * batch is written at once. Errors flush at once (the caller), and whatever is pending is
 * written when the process exits. The timer is unref'd: it never keeps a process alive.
 */
export function createLineBatch(destination: NodeJS.WritableStream, batchMs = 0): LineBatch {
  let pending: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  const flush = () => {
    if (timer !== undefined) {
      if (batchMs > 0) clearTimeout(timer as NodeJS.Timeout);
      else clearImmediate(timer as NodeJS.Immediate);
      timer = undefined;
    }
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join('');
    pending = [];
    chars = 0;
    pendingBatches.delete(batch);
    destination.write(text);
  };
  const batch: LineBatch = {
    push(line) {
      pending.push(line);
      chars += line.length;
      if (chars >= MAX_PENDING_CHARS) {
        flush();
        return;
      }
      if (timer === undefined) {
        pendingBatches.add(batch);
        timer = batchMs > 0 ? setTimeout(flush, batchMs).unref() : setImmediate(flush);
      }
    },
    flush,
  };
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const b of [...pendingBatches]) b.flush();
    });
  }
  return batch;
}
