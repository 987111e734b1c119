// Root `postinstall`: generates the Prisma client (libs/db/src/generated/prisma) so that a
// fresh `npm ci` leaves a tree that type-checks and runs. Plain CommonJS, no dependencies:
// it runs before anything else is known to work.
//
// Offline-safe: `prisma generate` only needs a schema engine path to exist, never the
// engine itself, so PRISMA_SCHEMA_ENGINE_BINARY points at the placeholder script (the
// Makefile does the same) and nothing is downloaded.
//
// It never fails the install: without the prisma CLI (`npm ci --omit=dev`) or without
// prisma/schema (a Docker layer that copies only package*.json) there is nothing to
// generate, and a generate error is reported loudly but left to `make generate`, which
// every make target that needs the client runs again.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..', '..');
const log = (message) => process.stderr.write(`[postinstall] ${message}\n`);

function main() {
  if (!fs.existsSync(path.join(root, 'prisma', 'schema'))) {
    log('prisma/schema is absent; skipping prisma generate.');
    return;
  }
  let cli;
  try {
    cli = require.resolve('prisma/build/index.js', { paths: [root] });
  } catch {
    log('the prisma CLI is not installed (production install?); skipping prisma generate.');
    return;
  }
  const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
  const placeholder = path.join(root, 'scripts', 'no-schema-engine.sh');
  if (!env.PRISMA_SCHEMA_ENGINE_BINARY && fs.existsSync(placeholder)) env.PRISMA_SCHEMA_ENGINE_BINARY = placeholder;
  const result = spawnSync(process.execPath, [cli, 'generate'], { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) {
    log(`prisma generate failed (${result.error ? result.error.message : `exit ${result.status}`}); run \`make generate\` to retry.`);
  }
}

main();
