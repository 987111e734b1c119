#!/usr/bin/env node
// Adds lockfile entries for platform-specific optional packages that the registry reachable
// from the development machines does not serve (it 404s non-linux-x64 builds, so npm leaves
// them out of package-lock.json, and `npm ci` then rejects the lock as out of sync).
// The entries carry the os/cpu/libc constraints the real packages declare, so npm skips
// them on other platforms without fetching them, exactly as with a complete lockfile.
// Usage: node scripts/complete-lockfile.cjs   (after any `npm install`)
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

// Parent packages whose optionalDependencies are per-platform binaries.
const PARENTS = ['@swc/core', 'unrs-resolver'];

function platformOf(name) {
  const suffix = name.replace(/^@[^/]+\/[a-z-]*?-(?=(darwin|linux|win32|android|freebsd|openharmony|wasm32)-)/, '');
  const [os, cpu, ...rest] = suffix.split('-');
  const entry = {};
  if (os === 'wasm32') {
    entry.cpu = ['wasm32'];
    return entry;
  }
  entry.os = [os];
  entry.cpu = [cpu];
  const abi = rest.join('-');
  if (abi.startsWith('gnu')) entry.libc = ['glibc'];
  if (abi.startsWith('musl')) entry.libc = ['musl'];
  return entry;
}

let added = 0;
for (const [key, node] of Object.entries(packages)) {
  const name = key.replace(/^.*node_modules\//, '');
  if (!PARENTS.includes(name) || !node.optionalDependencies) continue;
  for (const [dep, version] of Object.entries(node.optionalDependencies)) {
    const depKey = `node_modules/${dep}`;
    if (packages[depKey]) continue;
    const [scope, base] = dep.split('/');
    packages[depKey] = {
      version,
      resolved: `https://registry.npmjs.org/${scope}/${base}/-/${base}-${version}.tgz`,
      ...platformOf(dep),
      license: node.license ?? 'MIT',
      optional: true,
    };
    added += 1;
  }
}
// Keep keys sorted as npm writes them.
const root = packages[''];
const sorted = Object.fromEntries([['', root], ...Object.entries(packages).filter(([k]) => k !== '').sort(([a], [b]) => a.localeCompare(b))]);
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`complete-lockfile: added ${added} platform entries\n`);
