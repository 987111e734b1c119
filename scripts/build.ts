// `make build`: one esbuild bundle per service, dist/<service>/main.js, plus
// dist/migrate/main.js (libs/db/src/migrate-cli.ts) for the one-shot migration job.
//
// Workspace code (@selfstack/*, including the generated Prisma client under
// libs/db/src/generated, which is TypeScript) is bundled; every npm package stays
// external and is installed in the image with `npm ci --omit=dev`. The build fails when
// a bundle needs a package that is only a devDependency, since the image would lack it.
//
//   npx tsx scripts/build.ts [service ...]     (default: every service with src/main.ts)
import { execFileSync } from 'node:child_process';
import { build, type Metafile, type Plugin } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { builtinModules } from 'node:module';

const ROOT = resolve(__dirname, '..');
const DIST = join(ROOT, 'dist');
const SERVICES = ['secrets', 'scheduler', 'boxes', 'registry', 'controller'] as const;
/** Files read at run time next to the code (`path.join(__dirname, 'x.proto')`). */
const ASSET_EXTENSIONS = ['.proto'];

export interface BuildTarget {
  readonly name: string;
  readonly entry: string;
  /** Source folders whose runtime assets are copied next to the bundle. */
  readonly assetDirs: readonly string[];
}

/** Package name of a bare import specifier: `@scope/pkg/sub` -> `@scope/pkg`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

// Bare specifiers that are not workspace packages stay external. Node built-ins are
// external anyway with platform: 'node'.
const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@selfstack/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

function listAssets(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'generated' || name === 'node_modules') continue;
    if (statSync(p).isDirectory()) out.push(...listAssets(p));
    else if (ASSET_EXTENSIONS.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}

export function discoverTargets(only: readonly string[] = []): BuildTarget[] {
  const libs = readdirSync(join(ROOT, 'libs')).map((l) => join(ROOT, 'libs', l, 'src'));
  const targets: BuildTarget[] = [];
  for (const name of SERVICES) {
    const entry = join(ROOT, 'services', name, 'src', 'main.ts');
    if (!existsSync(entry)) continue;
    targets.push({ name, entry, assetDirs: [join(ROOT, 'services', name, 'src'), ...libs] });
  }
  // The scheduler's client agent (issue 26): its own bundle, dist/scheduler-agent/main.js
  // (the image runs it with SERVICE=scheduler-agent).
  const agentEntry = join(ROOT, 'services', 'scheduler', 'src', 'agent', 'main.ts');
  if (existsSync(agentEntry)) targets.push({ name: 'scheduler-agent', entry: agentEntry, assetDirs: [join(ROOT, 'services', 'scheduler', 'src'), ...libs] });
  targets.push({ name: 'migrate', entry: join(ROOT, 'libs', 'db', 'src', 'migrate-cli.ts'), assetDirs: [] });
  if (only.length === 0) return targets;
  const unknown = only.filter((o) => !targets.some((t) => t.name === o));
  if (unknown.length > 0) {
    throw new Error(`unknown or unwritten build target(s): ${unknown.join(', ')} (have: ${targets.map((t) => t.name).join(', ')})`);
  }
  return targets.filter((t) => only.includes(t.name));
}

/** Externals a bundle imports that are not runtime `dependencies` of the root package. */
export function missingRuntimeDeps(metafile: Metafile, dependencies: Readonly<Record<string, string>>): string[] {
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const missing = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imp of output.imports) {
      if (!imp.external || builtins.has(imp.path) || imp.path.startsWith('node:')) continue;
      const pkg = packageName(imp.path);
      if (!(pkg in dependencies)) missing.add(pkg);
    }
  }
  return [...missing].sort();
}

export async function buildTarget(
  target: BuildTarget,
  dependencies: Readonly<Record<string, string>>,
  distDir: string = DIST,
): Promise<string> {
  const outDir = join(distDir, target.name);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [target.entry],
    outfile: join(outDir, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    // Stack traces and winston labels keep their names.
    keepNames: true,
    metafile: true,
    logLevel: 'warning',
    plugins: [externalPackages],
    absWorkingDir: ROOT,
  });
  const missing = missingRuntimeDeps(result.metafile, dependencies);
  const workspaceLeft = Object.values(result.metafile.outputs)
    .flatMap((o) => o.imports)
    .filter((i) => i.external && i.path.startsWith('@selfstack/'));
  if (workspaceLeft.length > 0) throw new Error(`${target.name}: workspace imports left unbundled: ${workspaceLeft.map((i) => i.path).join(', ')}`);
  if (missing.length > 0) {
    throw new Error(`${target.name}: imports packages that are not in package.json "dependencies" (the image omits devDependencies): ${missing.join(', ')}`);
  }

  const copied = new Map<string, string>();
  for (const dir of target.assetDirs) {
    for (const asset of listAssets(dir)) {
      const dest = join(outDir, basename(asset));
      const previous = copied.get(dest);
      if (previous) throw new Error(`${target.name}: two assets would land at ${relative(ROOT, dest)}: ${previous} and ${asset}`);
      copied.set(dest, asset);
      copyFileSync(asset, dest);
    }
  }
  const bytes = statSync(join(outDir, 'main.js')).size;
  return `${target.name.padEnd(10)} ${relative(ROOT, join(outDir, 'main.js'))}  ${(bytes / 1024).toFixed(0)} KiB${copied.size ? `  + ${[...copied.keys()].map((d) => basename(d)).join(', ')}` : ''}`;
}

/**
 * The web console (services/console): a static Vite build into dist/console, which the
 * secrets and scheduler bundles serve at /ui/ (libs/http-kit console-static.ts looks
 * next to dist/<service>/). Built from source here, never checked in.
 */
function buildConsole(): string {
  execFileSync('npm', ['run', '--silent', 'build', '-w', 'services/console'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const index = join(DIST, 'console', 'index.html');
  if (!existsSync(index)) throw new Error('console build wrote no dist/console/index.html');
  return `${'console'.padEnd(10)} ${relative(ROOT, index)} (+ assets/)`;
}

async function main(): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  if (!existsSync(join(ROOT, 'libs', 'db', 'src', 'generated', 'prisma', 'client.ts'))) {
    throw new Error('the generated Prisma client is missing (libs/db/src/generated/prisma): run `make generate`');
  }
  const targets = discoverTargets(process.argv.slice(2));
  const skipped = SERVICES.filter((s) => !targets.some((t) => t.name === s));
  const lines: string[] = [];
  for (const t of targets) lines.push(await buildTarget(t, pkg.dependencies ?? {}));
  if (process.argv.length <= 2) lines.push(buildConsole());
  mkdirSync(DIST, { recursive: true });
  writeFileSync(join(DIST, 'targets.json'), `${JSON.stringify(targets.map((t) => t.name), null, 2)}\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
  if (process.argv.length <= 2 && skipped.length > 0) {
    process.stdout.write(`not built (no src/main.ts yet): ${skipped.join(', ')}\n`);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`build failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
}

