// Publish-time module analysis with HashiCorp's own HCL2 parser (@cdktf/hcl2json: hcl/v2
// compiled to WASM), so what we accept is exactly what Terraform accepts, and syntax
// errors carry Terraform's own messages and positions.
//
// A module is its root directory plus every `modules/<name>` directory (the registry's
// standard module structure). Each part yields readme, inputs, outputs, resources,
// module calls and provider requirements; a part without `.tf` files is `empty`.
// `.tf.json` files are not analysed (documented in docs/registry.md).
import { parse } from '@cdktf/hcl2json';
import type {
  ModuleAnalysis,
  ModuleDependency,
  ModuleInput,
  ModuleOutput,
  ModulePart,
  ModuleResource,
  ProviderRequirement,
} from './analysis.types';

export class AnalysisError extends Error {
  override readonly name = 'AnalysisError';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

const README = /^readme(\.(md|markdown|txt))?$/i;

/** Which archive files the analysis reads: `.tf` and README in the root and in `modules/<x>/`. */
export function isAnalyzedPath(path: string): boolean {
  const segments = path.split('/');
  const file = segments[segments.length - 1] ?? '';
  const wanted = file.endsWith('.tf') || README.test(file);
  if (!wanted) return false;
  return segments.length === 1 || (segments.length === 3 && segments[0] === 'modules');
}

type Body = Record<string, unknown>;

function isRecord(v: unknown): v is Body {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** hcl2json renders every block as an array of bodies. */
function bodies(v: unknown): Body[] {
  return Array.isArray(v) ? v.filter(isRecord) : isRecord(v) ? [v] : [];
}

/** `type = string` comes back as "${string}"; old-style `type = "string"` as "string". */
function unwrapExpression(v: unknown): string {
  if (typeof v !== 'string') return v === undefined || v === null ? '' : JSON.stringify(v);
  const m = /^\$\{([\s\S]*)\}$/.exec(v);
  return m ? (m[1] ?? '').trim() : v;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Postgres JSON cannot hold U+0000: drop it from every string we keep. */
function clean(s: string): string {
  return s.includes('\u0000') ? s.replace(/\u0000/g, '') : s;
}

// Resource type prefix -> provider local name (Terraform's implied provider rule), or
// the explicit `provider = aws.west` meta-argument.
function providerOf(type: string, body: Body | undefined): string {
  const explicit = body ? unwrapExpression(body.provider) : '';
  if (explicit) return explicit.split('.')[0] ?? explicit;
  const i = type.indexOf('_');
  return i === -1 ? type : type.slice(0, i);
}

function formatDiagnostic(file: string, message: string): string {
  const inner = message.replace(/^parse config: \[/, '').replace(/\]\s*$/, '').trim();
  return `invalid HCL in ${file}: ${inner || 'cannot parse'}`;
}

async function parseFile(file: string, content: string): Promise<Body> {
  try {
    const doc = (await parse(file, content)) as unknown;
    return isRecord(doc) ? doc : {};
  } catch (err) {
    throw new AnalysisError(file, formatDiagnostic(file, err instanceof Error ? err.message : String(err)));
  }
}

async function analyzePart(partPath: string, tfFiles: [string, string][], readme: string): Promise<ModulePart> {
  const inputs: ModuleInput[] = [];
  const outputs: ModuleOutput[] = [];
  const dependencies: ModuleDependency[] = [];
  const resources: ModuleResource[] = [];
  const required = new Map<string, ProviderRequirement>();
  const implied = new Set<string>();

  for (const [file, content] of tfFiles) {
    const doc = await parseFile(file, content);

    for (const [name, blocks] of Object.entries(isRecord(doc.variable) ? doc.variable : {})) {
      const body = bodies(blocks)[0] ?? {};
      const hasDefault = Object.prototype.hasOwnProperty.call(body, 'default');
      inputs.push({
        name,
        type: unwrapExpression(body.type),
        description: text(body.description),
        default: hasDefault ? JSON.stringify(body.default ?? null) : '',
        required: !hasDefault,
      });
    }
    for (const [name, blocks] of Object.entries(isRecord(doc.output) ? doc.output : {})) {
      const body = bodies(blocks)[0] ?? {};
      outputs.push({ name, description: text(body.description) });
    }
    for (const [type, named] of Object.entries(isRecord(doc.resource) ? doc.resource : {})) {
      for (const [name, blocks] of Object.entries(isRecord(named) ? named : {})) {
        resources.push({ name, type });
        implied.add(providerOf(type, bodies(blocks)[0]));
      }
    }
    for (const [type, named] of Object.entries(isRecord(doc.data) ? doc.data : {})) {
      for (const blocks of Object.values(isRecord(named) ? named : {})) {
        implied.add(providerOf(type, bodies(blocks)[0]));
      }
    }
    for (const name of Object.keys(isRecord(doc.provider) ? doc.provider : {})) implied.add(name);
    for (const [name, blocks] of Object.entries(isRecord(doc.module) ? doc.module : {})) {
      const body = bodies(blocks)[0] ?? {};
      dependencies.push({ name, source: unwrapExpression(body.source), version: text(body.version) });
    }
    for (const tf of bodies(doc.terraform)) {
      for (const rp of bodies(tf.required_providers)) {
        for (const [name, spec] of Object.entries(rp)) {
          // Terraform 0.12 style: `aws = "~> 3.0"`; 0.13+: `aws = { source, version }`.
          if (typeof spec === 'string') required.set(name, { name, source: '', version: spec });
          else if (isRecord(spec)) required.set(name, { name, source: text(spec.source), version: text(spec.version) });
        }
      }
    }
  }

  for (const name of implied) {
    if (!required.has(name) && name !== '') required.set(name, { name, source: '', version: '' });
  }
  // terraform_data and friends come from the built-in provider, never a requirement.
  required.delete('terraform');
  const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

  return {
    path: partPath,
    readme: clean(readme),
    empty: tfFiles.length === 0,
    inputs: inputs.sort(byName).map((i) => ({ ...i, description: clean(i.description), default: clean(i.default), type: clean(i.type) })),
    outputs: outputs.sort(byName).map((o) => ({ ...o, description: clean(o.description) })),
    dependencies: dependencies.sort(byName).map((d) => ({ name: d.name, source: clean(d.source), version: clean(d.version) })),
    resources: resources.sort((a, b) => (a.type + '.' + a.name < b.type + '.' + b.name ? -1 : 1)),
    providers: [...required.values()].sort(byName).map((p) => ({ name: p.name, source: clean(p.source), version: clean(p.version) })),
  };
}

/**
 * Analyses an unpacked module: `files` lists every file of the archive, `texts` holds
 * the content of those selected by `isAnalyzedPath`. Throws AnalysisError naming the
 * file on the first HCL syntax error.
 */
export async function analyzeModule(files: readonly string[], texts: ReadonlyMap<string, string>): Promise<ModuleAnalysis> {
  const dirOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
  const nameOf = (p: string) => p.slice(p.lastIndexOf('/') + 1);

  const partDirs = new Set<string>();
  for (const f of files) {
    const segments = f.split('/');
    if (segments[0] === 'modules' && segments.length >= 3) partDirs.add(`modules/${segments[1]}`);
  }

  const partFor = async (dir: string): Promise<ModulePart> => {
    const direct = [...texts.entries()].filter(([p]) => dirOf(p) === dir).sort(([a], [b]) => (a < b ? -1 : 1));
    const tf = direct.filter(([p]) => p.endsWith('.tf'));
    // Prefer README.md over other README spellings when several exist.
    const readmes = direct.filter(([p]) => README.test(nameOf(p))).sort(([a], [b]) => (/\.md$/i.test(a) === /\.md$/i.test(b) ? 0 : /\.md$/i.test(a) ? -1 : 1));
    return analyzePart(dir, tf, readmes[0]?.[1] ?? '');
  };

  const root = await partFor('');
  const submodules: ModulePart[] = [];
  for (const dir of [...partDirs].sort()) submodules.push(await partFor(dir));
  return { root, submodules };
}
