// infra/docker/Dockerfile, parsed (no Docker engine here): stages, dependency install,
// build step, non-root runtime and service selection.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

interface Instruction {
  readonly op: string;
  readonly args: string;
}
interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly body: Instruction[];
}

/** Splits a Dockerfile into instructions (continuations joined, comments dropped). */
function parseDockerfile(text: string): { globalArgs: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let acc = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!acc && (line.trim().startsWith('#') || line.trim() === '')) continue;
    if (acc && line.trim().startsWith('#')) continue;
    if (line.endsWith('\\')) {
      acc += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push((acc + line).trim());
    acc = '';
  }
  if (acc) throw new Error('Dockerfile ends inside a line continuation');
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const l of logical) {
    const m = /^(\w+)\s+([\s\S]*)$/.exec(l);
    if (!m) throw new Error(`cannot parse Dockerfile line: ${l}`);
    const op = m[1]!.toUpperCase();
    const args = m[2]!;
    if (op === 'FROM') {
      const f = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!f) throw new Error(`bad FROM: ${args}`);
      stages.push({ from: f[1]!, name: f[2], body: [] });
    } else if (stages.length === 0) {
      if (op !== 'ARG') throw new Error(`${op} before the first FROM`);
      const [k, v = ''] = args.split('=');
      globalArgs.set(k!, v);
    } else {
      stages[stages.length - 1]!.body.push({ op, args });
    }
  }
  return { globalArgs, stages };
}

const { globalArgs, stages } = parseDockerfile(readFileSync(join(ROOT, 'infra', 'docker', 'Dockerfile'), 'utf8'));
const stage = (name: string) => stages.find((s) => s.name === name)!;
const resolveImage = (from: string) => from.replace(/^\$\{(\w+)\}$/, (_, k: string) => globalArgs.get(k) ?? from);

describe('infra/docker/Dockerfile', () => {
  it('is multi-stage, ending in the runtime stage', () => {
    expect(stages.map((s) => s.name)).toEqual(['manifests', 'deps', 'build', 'prod-deps', 'runtime']);
    expect(stages.at(-1)?.name).toBe('runtime');
  });

  it('installs locked dependencies with npm ci before copying sources', () => {
    const deps = stage('deps');
    expect(deps.body.some((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args) && !/--omit=dev/.test(i.args))).toBe(true);
    // Only package manifests are in the image at that point (layer caching).
    expect(deps.body.filter((i) => i.op === 'COPY').every((i) => i.args.startsWith('--from=manifests'))).toBe(true);
    expect(stage('prod-deps').body.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args))).toBe(true);
  });

  it('builds with make build on top of the deps stage', () => {
    expect(stage('build').from).toBe('deps');
    expect(stage('build').body.some((i) => i.op === 'RUN' && i.args.trim() === 'make build')).toBe(true);
  });

  it('runs on node:20-bookworm-slim as a non-root user', () => {
    const rt = stage('runtime');
    expect(resolveImage(rt.from)).toBe('node:20-bookworm-slim');
    const users = rt.body.filter((i) => i.op === 'USER');
    expect(users.length).toBeGreaterThan(0);
    const last = users.at(-1)!.args.trim();
    expect(['root', '0', '0:0']).not.toContain(last);
    // USER comes after every COPY/RUN, so the process never runs as root.
    const lastUserIdx = rt.body.lastIndexOf(users.at(-1)!);
    expect(rt.body.slice(lastUserIdx).some((i) => i.op === 'RUN' || i.op === 'COPY')).toBe(false);
  });

  it('copies bundles, production node_modules and migrations from earlier stages', () => {
    const copies = stage('runtime').body.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copies).toEqual(
      expect.arrayContaining([
        '--from=prod-deps /app/node_modules ./node_modules',
        '--from=build /app/dist ./dist',
        '--from=build /app/prisma/migrations ./prisma/migrations',
      ]),
    );
    for (const c of copies) {
      const from = /--from=(\S+)/.exec(c)?.[1];
      if (from) expect(stages.some((s) => s.name === from)).toBe(true);
    }
  });

  it('selects the service with the SERVICE build arg', () => {
    const rt = stage('runtime');
    expect(rt.body.some((i) => i.op === 'ARG' && /^SERVICE(=|$)/.test(i.args))).toBe(true);
    expect(rt.body.some((i) => i.op === 'ENV' && /SERVICE=\$\{SERVICE\}/.test(i.args))).toBe(true);
    // The runtime heap setting the benchmarks run with (Makefile `bench`).
    expect(rt.body.some((i) => i.op === 'ENV' && /NODE_OPTIONS=--max-semi-space-size=32\b/.test(i.args))).toBe(true);
    const cmd = rt.body.filter((i) => i.op === 'CMD').at(-1)!;
    const argv = JSON.parse(cmd.args) as string[];
    expect(argv.join(' ')).toContain('exec node "dist/${SERVICE}/main.js"');
  });

  it('exposes every service port', () => {
    const exposed = stage('runtime').body.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
    expect(exposed).toEqual(expect.arrayContaining(['8200', '4646', '3100', '3200', '9200', '9201', '9203']));
  });

  it('parser rejects broken files', () => {
    expect(() => parseDockerfile('RUN x\nFROM a')).toThrow(/before the first FROM/);
    expect(() => parseDockerfile('FROM a\nRUN x \\')).toThrow(/continuation/);
  });
});

describe('.dockerignore', () => {
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  it.each(['node_modules', 'dist', '.data', '.git', 'libs/db/src/generated'])('keeps %s out of the build context', (p) => {
    expect(ignored).toContain(p);
  });
  it('keeps what the image build needs', () => {
    for (const needed of ['package.json', 'package-lock.json', 'Makefile', 'prisma', 'libs', 'services', 'infra', 'scripts']) {
      expect(ignored).not.toContain(needed);
    }
  });
});
