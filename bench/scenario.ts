// What a benchmark scenario is. Later issues add files `bench/scenarios/<x>.scenario.ts`
// exporting `scenarios: Scenario[]`; bench/run.ts discovers them, runs them in the same
// process and run as the baselines, and reports each as a ratio to its baseline.

/** Baselines measured in every run (bench/baselines.ts). */
export type BaselineName = 'node-http' | 'pg-point-read';

export interface ScenarioContext {
  /** PostgreSQL to use (DATABASE_URL or the local default). */
  readonly databaseUrl: string;
  readonly durationMs: number;
  /** HTTP connections (wrk or autocannon) / concurrent function workers. */
  readonly connections: number;
  /**
   * Where HTTP load is generated: wrk in its own process (default), autocannon in its own
   * worker thread, or autocannon on the server's loop.
   */
  readonly client?: 'wrk' | 'thread' | 'inline';
  /**
   * The services' log level (BENCH_LOG_LEVEL, default `info` as `make dev` and the
   * deployments run them: one request line per request). Scenarios build their logger
   * with serviceLogger() (bench/bench-database.ts).
   */
  readonly logLevel?: 'error' | 'warn' | 'info' | 'debug';
  /** Unrecorded HTTP load before each measurement (ms). */
  readonly warmupMs?: number;
  readonly log: (message: string) => void;
}

export interface HttpRequestSpec {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /**
   * Every send replaces `{key}` in `path` with a uniformly random integer below `keys`
   * (as vault-benchmark picks a random one of its keys per request). Data, not a
   * function: the load generator runs in its own thread (bench/measure.ts).
   */
  readonly keys?: number;
}

export type Target =
  /** Load-tested with autocannon; `requests` cycles through several requests. */
  | { readonly kind: 'http'; readonly url: string; readonly requests?: readonly HttpRequestSpec[] }
  /** Called back to back by `concurrency` workers; each call is one operation. */
  | { readonly kind: 'function'; readonly run: () => Promise<unknown>; readonly concurrency?: number };

export interface ScenarioInstance {
  readonly target: Target;
  teardown(): Promise<void>;
}

export interface Scenario {
  /** Unique, kebab-case; BENCH_ONLY selects by it. */
  readonly name: string;
  readonly description: string;
  /** The same-run figure this scenario is reported against. */
  readonly baseline: BaselineName;
  /** Starts whatever the scenario needs (servers, seed data) and names the target. */
  setup(ctx: ScenarioContext): Promise<ScenarioInstance>;
}
