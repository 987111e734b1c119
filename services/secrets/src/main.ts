// Composition root: config -> prisma -> bus -> stores -> services -> app(s) -> listener(s)
// -> installShutdown. Nothing else reads process.env.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createMemoryBus, createRedisBus, type Bus } from '@selfstack/bus';
import { ConfigError } from '@selfstack/config';
import { createPrismaClient } from '@selfstack/db';
import { createListener, installShutdown, type Listener } from '@selfstack/http-kit';
import { createLogger } from '@selfstack/logger';
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
async function startListeners(configs: readonly ListenerConfig[], deps: Omit<SecretsAppDeps, 'listener'>): Promise<Listener[]> {
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

async function main(): Promise<void> {
  const config = await loadSecretsConfig(process.env);
  const env = config.env;
  const logger = createLogger({ service: 'secrets', level: env.LOG_LEVEL });
  for (const w of config.warnings) logger.warn(w);

  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  // Prisma serves the rare barrier operations; the entry store's prepared statements run
  // on their own node-postgres pool (docs/secrets.md, "Design notes").
  const prisma = createPrismaClient({ url: databaseUrl, poolSize: 2 });
  const pool = createEntryPool({
    url: databaseUrl,
    max: env.SECRETS_DB_POOL,
    onIdleError: (err) => logger.warn('entry store: idle Postgres connection lost', { err: err.message }),
  });
  const bus: Bus = env.REDIS_URL ? createRedisBus({ url: env.REDIS_URL, prefix: 'secrets:', logger }) : createMemoryBus();
  const services = createSecretsServices({
    prisma,
    pool,
    bus,
    cache: entryCacheOptions(env),
  });
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

  const listeners = await startListeners(config.listeners, { services, logger, readiness });
  installShutdown({
    listeners,
    logger,
    closers: [
      // The physical cache's heartbeat publishes on the bus: stopped before it closes.
      { name: 'cache heartbeat', close: async () => services.stop() },
      { name: 'bus', close: () => bus.close() },
      { name: 'prisma', close: () => prisma.$disconnect() },
      { name: 'pg', close: () => pool.end() },
    ],
  });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`secrets: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
