// Composition root: config -> clients -> server; runService does the rest (logger, bus
// choice, signals, exit codes). Usage:
//   tsx services/controller/src/main.ts -config path/to/config.hcl
// (also `--config=...` or CONTROLLER_CONFIG). The HCL file decides whether this process
// runs a controller, a worker, or both (docs/controller.md).
import { z } from 'zod';
import { ConfigError, loadEnv, logLevelEnv, redisUrlEnv, type EnvSource } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { runService } from '@selfstack/http-kit';
import { loadServerConfig } from './config/controller-config';
import { runServer } from './server';

function configPathFrom(argv: readonly string[], env: EnvSource): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?config(?:=(.*))?$/.exec(arg);
    if (m) return m[1] ?? argv[i + 1];
  }
  return env.CONTROLLER_CONFIG;
}

async function loadConfig(env: EnvSource) {
  const shared = loadEnv(z.object({ REDIS_URL: redisUrlEnv, LOG_LEVEL: logLevelEnv }), env);
  const path = configPathFrom(process.argv.slice(2), env);
  if (!path) throw new ConfigError('no configuration file given:', [{ where: 'command line', message: 'pass -config <file.hcl> or set CONTROLLER_CONFIG' }]);
  return { ...shared, server: await loadServerConfig(path, env) };
}

void runService({
  name: 'controller',
  config: loadConfig,
  // The database is the controller role's (`database { url = ... }`); a worker has none.
  requiresDatabase: false,
  settings: (config) => ({ logLevel: config.LOG_LEVEL, databaseUrl: config.server.controller?.databaseUrl, redisUrl: config.REDIS_URL }),
  async start({ config, logger, databaseUrl, bus, onShutdown }) {
    const prisma = databaseUrl !== '' ? createPrismaClient({ url: databaseUrl, logger }) : undefined;
    // The server owns its shutdown sequence (the anchor's graceful wait, then its
    // listeners, the database and the bus): one closer, run on the first signal.
    const server = await runServer({ config: config.server, logger, bus: bus('selfstack:'), ...(prisma ? { prisma } : {}) });
    onShutdown('server', (reason) => server.shutdown(reason));
    return [];
  },
});
