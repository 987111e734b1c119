// The logger a scenario's service gets: as `make dev` and the deployments run it (issue 30,
// item 2), JSON lines to stdout at the run's level (BENCH_LOG_LEVEL, default `info`: one
// request line per request). Each measurement's process has its stdout on a pipe that the
// bench drains (bench/isolate.ts), as `make dev` reads its services' output.
import { createLogger, type Logger } from '@selfstack/logger';
import type { ScenarioContext } from './scenario';

export function serviceLogger(ctx: Pick<ScenarioContext, 'logLevel'>, service: string): Logger {
  return createLogger({ service, level: ctx.logLevel ?? 'info' });
}
