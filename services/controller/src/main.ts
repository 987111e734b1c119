// Composition root: config -> clients -> server. Usage:
//   tsx services/controller/src/main.ts -config path/to/config.hcl
// (also `--config=...` or CONTROLLER_CONFIG). The HCL file decides whether this process
// runs a controller, a worker, or both (docs/controller.md).
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { ConfigError, loadEnv, logLevelEnv, redisUrlEnv } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { createLogger } from '@selfstack/logger';
import { z } from 'zod';
import { loadServerConfig } from './config/controller-config';
import { runServer } from './server';

function configPathFrom(argv: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?config(?:=(.*))?$/.exec(arg);
    if (m) return m[1] ?? argv[i + 1];
  }
  return env.CONTROLLER_CONFIG;
}

async function main(): Promise<void> {
  const env = loadEnv(z.object({ REDIS_URL: redisUrlEnv, LOG_LEVEL: logLevelEnv }), process.env);
  const path = configPathFrom(process.argv.slice(2), process.env);
  if (!path) throw new ConfigError('no configuration file given:', [{ where: 'command line', message: 'pass -config <file.hcl> or set CONTROLLER_CONFIG' }]);
  const config = await loadServerConfig(path, process.env);
  const logger = createLogger({ service: 'controller', level: env.LOG_LEVEL });
  const bus: Bus = env.REDIS_URL ? createRedisBus({ url: env.REDIS_URL, prefix: 'selfstack:', logger }) : createMemoryBus();
  const prisma = config.controller?.databaseUrl ? createPrismaClient({ url: config.controller.databaseUrl, logger }) : undefined;
  const server = await runServer({ config, logger, bus, ...(prisma ? { prisma } : {}) });

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      logger.warn('second signal received, exiting immediately', { signal });
      process.exit(1);
    }
    void server.shutdown(signal).then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`Error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
