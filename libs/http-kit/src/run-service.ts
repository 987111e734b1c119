// The start-up every service's main.ts shares (issue 31, item 2): parse the configuration
// once, refuse to start without DATABASE_URL, create the logger, choose the bus (Redis when
// REDIS_URL is set, else in memory), optionally fork node:cluster workers, start the
// service, drain and close everything on SIGTERM/SIGINT, and turn a failed start into a
// message on stderr and an exit code. main.ts keeps only what is its own: the clients,
// composition and listeners of its service.
import cluster from 'node:cluster';
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { ConfigError, type EnvSource } from '@selfstack/config';
import { createLogger, type Logger, type LogLevel } from '@selfstack/logger';
import type { Listener } from './listener';
import { installShutdown, type Closer, type ShutdownHandle } from './shutdown';
import { CONFIG_ERROR_EXIT_CODE, followPrimary, superviseWorkers } from './workers';

/** What runService reads from a service's parsed configuration. */
export interface ServiceSettings {
  logLevel: LogLevel;
  /** PostgreSQL URL; start-up stops with the DATABASE_URL message when it is undefined,
   * unless the service sets `requiresDatabase: false`. */
  databaseUrl?: string | undefined;
  /** Redis URL: the bus runs on Redis when set, in memory (one process) when not. */
  redisUrl?: string | undefined;
  /** node:cluster processes serving the port (default 1: no cluster). */
  workers?: number;
}

export interface ServiceRuntime<C> {
  readonly config: C;
  readonly logger: Logger;
  /** The configured DATABASE_URL ('' only for a service that requires none and has none). */
  readonly databaseUrl: string;
  /**
   * The process's bus, created on first use: Redis with channels under `prefix`, or the
   * in-memory bus (one process) when REDIS_URL is unset, then logging `memoryWarning` if
   * given. Closed at shutdown after everything registered with onShutdown.
   */
  bus(prefix: string, memoryWarning?: string): Bus;
  /** Released at shutdown after the listeners drained, in the order registered; `close`
   * is told why (the signal's name, or the primary's request). */
  onShutdown(name: string, close: (reason: string) => unknown): void;
  /** Run once the shutdown starts, before the listeners drain: ends requests that would
   * otherwise hold the drain until its timeout (event streams). */
  beforeDrain(name: string, close: (reason: string) => unknown): void;
}

export interface ServiceDefinition<C> {
  /** The logger's `service` field. */
  name: string;
  /** Parses the configuration once; a ConfigError names every problem. */
  config(env: EnvSource): C | Promise<C>;
  settings(config: C): ServiceSettings;
  /** Default true. */
  requiresDatabase?: boolean;
  /** Exit code of an invalid configuration (default CONFIG_ERROR_EXIT_CODE, 2). */
  configErrorExitCode?: number;
  /** Builds and starts the service; the listeners returned are drained at shutdown. */
  start(runtime: ServiceRuntime<C>): Promise<readonly Pick<Listener, 'close'>[]>;
}

export interface RunServiceOptions {
  /** Default process.env. */
  env?: EnvSource;
  /** Where a failed start is reported (default stderr). */
  write?: (text: string) => void;
  exit?: (code: number) => void;
}

const DATABASE_REQUIRED = 'is required (make dev starts an embedded PostgreSQL and sets it)';

let rejectionsReported = false;
/**
 * A stray rejected promise (a background publish, a timer's work) is logged with its stack
 * and the service keeps answering: Node's default would end the process, and every request
 * in flight with it, with no line in the service's own log. Once per process.
 */
function reportUnhandledRejections(logger: { error: (message: string, meta?: Record<string, unknown>) => void }): void {
  if (rejectionsReported) return;
  rejectionsReported = true;
  process.on('unhandledRejection', (reason) => {
    logger.error('unhandled promise rejection', { err: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) });
  });
}

async function start<C>(definition: ServiceDefinition<C>, env: EnvSource, exit: (code: number) => void, ownsProcess: boolean): Promise<ShutdownHandle | undefined> {
  const config = await definition.config(env);
  const settings = definition.settings(config);
  if (settings.databaseUrl === undefined && definition.requiresDatabase !== false) {
    throw new ConfigError('invalid configuration (1 problem):', [{ where: 'DATABASE_URL', message: DATABASE_REQUIRED }]);
  }
  const logger = createLogger({ service: definition.name, level: settings.logLevel });
  if (ownsProcess) reportUnhandledRejections(logger);
  const workers = settings.workers ?? 1;
  if (cluster.isPrimary && workers > 1) {
    // The primary only supervises; every worker runs the service on the shared port.
    logger.info('starting workers', { workers });
    superviseWorkers({ count: workers, logger, exit });
    return undefined;
  }

  const closers: Closer[] = [];
  const beforeDrain: Closer[] = [];
  let bus: Bus | undefined;
  const runtime: ServiceRuntime<C> = {
    config,
    logger,
    databaseUrl: settings.databaseUrl ?? '',
    bus(prefix, memoryWarning) {
      if (bus) return bus;
      if (settings.redisUrl) {
        bus = createRedisBus({ url: settings.redisUrl, prefix, logger });
      } else {
        if (memoryWarning) logger.warn(memoryWarning);
        bus = createMemoryBus();
      }
      return bus;
    },
    onShutdown(name, close) {
      closers.push({ name, close });
    },
    beforeDrain(name, close) {
      beforeDrain.push({ name, close });
    },
  };
  const listeners = await definition.start(runtime);
  if (bus) {
    const b = bus;
    closers.push({ name: 'bus', close: () => b.close() });
  }
  // A worker stops when its primary says so (or is gone); the primary owns the signals.
  const shutdown = installShutdown({ listeners, beforeDrain, closers, logger, exit, ...(cluster.isWorker ? { signals: [] } : {}) });
  if (cluster.isWorker) followPrimary(shutdown);
  return shutdown;
}

/**
 * Runs a service as its main.ts's only statement. Resolves once the service is listening
 * (or, in a cluster primary, once the workers are forked); a failed start writes
 * `Error: <message>` and exits (configuration problems with configErrorExitCode, anything
 * else with 1).
 */
export function runService<C>(definition: ServiceDefinition<C>, options: RunServiceOptions = {}): Promise<ShutdownHandle | undefined> {
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  // A caller that injects env or exit (a test) shares its process: no process-wide handlers.
  const ownsProcess = options.env === undefined && options.exit === undefined;
  return start(definition, options.env ?? process.env, exit, ownsProcess).catch((err: unknown) => {
    if (err instanceof ConfigError) {
      write(`Error: ${err.message}\n`);
      exit(definition.configErrorExitCode ?? CONFIG_ERROR_EXIT_CODE);
    } else {
      write(`Error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      exit(1);
    }
    return undefined;
  });
}
