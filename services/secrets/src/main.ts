// Composition root: config -> prisma -> bus -> stores -> services -> app(s) -> listener(s);
// runService does the rest (logger, bus choice, shutdown, exit codes). Nothing else reads
// process.env.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createPrismaClient } from '@selfstack/db';
import { createListener, runService, type Listener } from '@selfstack/http-kit';
import type { Logger } from '@selfstack/logger';
import { buildApp, type SecretsAppDeps } from './app';
import { entryCacheOptions, loadSecretsConfig, type ListenerConfig } from './config';
import { clientErrorResponder } from './http/client-errors';
import { createEntryPool } from './features/barrier/barrier.store';
import { createSecretsServices, type SecretsServices } from './services';

const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/selfstack';

/**
 * Dev mode (as `vault server -dev`): initialise with one share if needed, unseal, and print
 * the root token and unseal key. Unlike Vault's in-memory dev server the data persists in
 * Postgres, so the key is kept in SECRETS_DEV_STATE_FILE (default .data/secrets-dev.json)
 * to unseal again after a restart.
 */
async function devMode(services: SecretsServices, rootTokenId: string | undefined, stateFile: string, print: (line: string) => void): Promise<void> {
  const DEV_STATE_FILE = stateFile;
  let state: { unseal_key: string; root_token: string } | null = null;
  if (!(await services.barrier.isInitialized())) {
    const init = await services.sys.initialize(1, 1, { rootTokenId });
    state = { unseal_key: init.keys_base64[0] as string, root_token: init.root_token };
    await mkdir(dirname(DEV_STATE_FILE), { recursive: true });
    await writeFile(DEV_STATE_FILE, JSON.stringify(state), { mode: 0o600 });
  } else {
    try {
      state = JSON.parse(await readFile(DEV_STATE_FILE, 'utf8')) as { unseal_key: string; root_token: string };
    } catch {
      throw new Error(`dev mode: the database is already initialised and ${DEV_STATE_FILE} (its unseal key) is missing`);
    }
  }
  await services.sys.unseal(state.unseal_key, false);
  print('WARNING! dev mode is enabled! In this mode the unseal key and root token are printed here.');
  print('');
  print(`Unseal Key: ${state.unseal_key}`);
  print(`Root Token: ${state.root_token}`);
  print('');
}

/**
 * One listener per `listener "tcp"` block (issue 28, item 2), each with its own app (custom
 * headers, size limit, request-header rule) over the shared services: HTTPS when the block
 * has TLS, plain HTTP otherwise; errors the parser answers in the API's shape.
 */
async function startListeners(configs: readonly ListenerConfig[], deps: Omit<SecretsAppDeps, 'listener'> & { logger: Logger }): Promise<Listener[]> {
  const listeners: Listener[] = [];
  for (const l of configs) {
    const app = buildApp({ ...deps, listener: l });
    const listener = await createListener(app, {
      port: l.port,
      host: l.host,
      maxRequestBytes: l.maxRequestBytes > 0 ? l.maxRequestBytes * 2 : undefined,
      ...(l.tls ? { tls: { cert: l.tls.cert, key: l.tls.key, minVersion: l.tls.minVersion, maxVersion: l.tls.maxVersion } } : {}),
      clientErrorResponse: clientErrorResponder(l.customHeaders),
    });
    listeners.push(listener);
    deps.logger.info('listening', { url: listener.url, tls: l.tls !== null });
  }
  return listeners;
}

void runService({
  name: 'secrets',
  config: loadSecretsConfig,
  // Without DATABASE_URL the server uses the local default database.
  settings: ({ env }) => ({ logLevel: env.LOG_LEVEL, databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL, redisUrl: env.REDIS_URL }),
  // `vault server` exits 1 on a configuration it cannot load.
  configErrorExitCode: 1,
  async start({ config, logger, databaseUrl, bus, onShutdown }) {
    const env = config.env;
    for (const w of config.warnings) logger.warn(w);

    // Prisma serves the rare barrier operations; the entry store's prepared statements run
    // on their own node-postgres pool (docs/secrets.md, "Design notes").
    const prisma = createPrismaClient({ url: databaseUrl, poolSize: 2 });
    const pool = createEntryPool({
      url: databaseUrl,
      max: env.SECRETS_DB_POOL,
      onIdleError: (err) => logger.warn('entry store: idle Postgres connection lost', { err: err.message }),
    });
    const services = createSecretsServices({
      prisma,
      pool,
      bus: bus('secrets:'),
      cache: entryCacheOptions(env),
      hosted: config.hosted,
    });
    // The physical cache's heartbeat publishes on the bus, which runService closes last.
    onShutdown('cache heartbeat', () => services.stop());
    onShutdown('prisma', () => prisma.$disconnect());
    onShutdown('pg', () => pool.end());
    await services.start();

    if (env.SECRETS_DEV_MODE) {
      await devMode(services, env.SECRETS_DEV_ROOT_TOKEN, env.SECRETS_DEV_STATE_FILE, (line) => process.stdout.write(`${line}\n`));
    }

    const readiness = async () => {
      let postgres = false;
      try {
        await pool.query('SELECT 1');
        postgres = true;
      } catch {
        postgres = false;
      }
      return { postgres, unsealed: !services.barrier.isSealed() };
    };

    return startListeners(config.listeners, { services, logger, readiness });
  },
});
