// Client agent entry point (issue 26; docs/scheduler.md "Client agent"):
//   tsx services/scheduler/src/agent/main.ts            the agent
//   <same program> executor <spec.json>                 a raw_exec executor (started by
//                                                       the agent itself, detached)
// Composition only: config -> state dir -> drivers -> agent -> HTTP listener.
import { mkdirSync } from 'node:fs';

async function runAgent(): Promise<void> {
  const { ConfigError } = await import('@selfstack/config');
  const { createLogger } = await import('@selfstack/logger');
  const { loadAgentConfig } = await import('./agent-config');
  const { createAgentState } = await import('./agent-state');
  const { createClientAgent } = await import('./agent');
  const { createAgentHttp } = await import('./agent-http');
  const { createServerClient } = await import('./server-client');
  const { createMockDriver } = await import('./drivers/mock.driver');
  const { createRawExecDriver } = await import('./drivers/raw-exec.driver');
  type Driver = import('./drivers/driver.types').Driver;

  let config: Awaited<ReturnType<typeof loadAgentConfig>>;
  try {
    config = await loadAgentConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ service: 'scheduler-agent', level: config.logLevel });
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  mkdirSync(config.allocDir, { recursive: true });
  const state = createAgentState(config.stateDir);
  const drivers = new Map<string, Driver>();
  for (const d of config.drivers) {
    if (d === 'mock_driver') drivers.set(d, createMockDriver());
    if (d === 'raw_exec') {
      drivers.set(
        d,
        createRawExecDriver({
          path: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
          stateDir: `${config.stateDir}/executors`,
          // This same program, in executor mode (works under tsx and in a bundle alike).
          executorCommand: [process.execPath, ...process.execArgv, process.argv[1] as string, 'executor'],
        }),
      );
    }
  }
  const agent = createClientAgent({ config, logger, state, server: createServerClient(config.servers), drivers });
  const http = createAgentHttp({ secret: () => agent.identity.secret, registered: () => agent.registered(), runners: agent.runners, allocRoot: config.allocDir, logger });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.port, config.host, () => resolve());
  });
  const addr = http.address();
  logger.info('client agent listening', { addr: typeof addr === 'object' && addr ? `${addr.address}:${addr.port}` : String(addr), node: agent.identity.id, drivers: config.drivers });
  await agent.start();
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('client agent stopping; tasks keep running', { signal });
    http.closeAllConnections();
    http.close();
    void agent.stop().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

if (process.argv[2] === 'executor') {
  void import('./drivers/executor').then((m) => m.runExecutor(process.argv[3] as string));
} else {
  void runAgent();
}
