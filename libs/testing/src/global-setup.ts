// jest globalSetup of the `integration` project (jest.config.js): fail fast with a useful
// message when PostgreSQL or Redis is down, then make sure the migrated template database
// exists and tell the workers its name. Runs once per jest run, in the parent process;
// workers start afterwards and inherit process.env.
import { defaultMigrationsDir } from '@selfstack/db';
import { TEMPLATE_ENV_VAR } from './database';
import { testAdminDatabaseUrl } from './env';
import { checkServices } from './services';
import { ensureTemplateDatabase } from './template';

export async function integrationGlobalSetup(): Promise<void> {
  await checkServices();
  const template = await ensureTemplateDatabase({
    adminUrl: testAdminDatabaseUrl(),
    migrationsDir: defaultMigrationsDir(),
    log: (message) => {
      if (process.env.SELFSTACK_TEST_VERBOSE) process.stderr.write(`[global-setup] ${message}\n`);
    },
  });
  process.env[TEMPLATE_ENV_VAR] = template;
}

// jest loads globalSetup through its default export (or module.exports); this is the one
// place the house rule against default exports has to give way.
// eslint-disable-next-line no-restricted-syntax
export default integrationGlobalSetup;
