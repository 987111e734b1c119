// `make k8s-validate`: checks infra/k8s without a cluster or the kustomize binary.
//
// For the base and every overlay it resolves the kustomization the way kustomize does
// for the features we use (resources, generators, strategic-merge patches by kind+name,
// namespace, images), then checks each object: apiVersion/kind/metadata.name, selectors
// that match their pod templates, Service targetPorts that exist on the selected pods,
// probes on ports that exist and paths the container really serves, resource requests,
// ConfigMap/Secret references and keys, mounted config files. It also checks that the
// copies in infra/k8s/base/files match infra/nginx and infra/controller (kustomize may
// not read files outside the kustomization root); `--sync` refreshes them.
//
//   npx tsx scripts/k8s-validate.ts [--sync]        exit 1 when any problem is found
import { copyFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(__dirname, '..');
export const K8S_DIR = join(ROOT, 'infra', 'k8s');

type Obj = Record<string, unknown>;

export interface Resource {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; labels?: Record<string, string> };
  spec?: Obj;
  [key: string]: unknown;
  /** file it came from, for messages */
  __source: string;
}

export interface Generated {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
  readonly keys: readonly string[];
  readonly source: string;
}

export interface Rendered {
  readonly dir: string;
  readonly resources: Resource[];
  readonly generated: Generated[];
  readonly images: Map<string, string>;
  readonly namespace: string | undefined;
  readonly errors: string[];
}

export interface ValidationResult {
  readonly errors: string[];
  /** Secrets referenced but not produced by the kustomization (the operator creates them). */
  readonly externalSecrets: string[];
  readonly rendered: Rendered;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const KUSTOMIZATION_FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'patches',
  'configMapGenerator',
  'secretGenerator',
  'images',
  'namespace',
  'labels',
  'commonLabels',
  'commonAnnotations',
  'generatorOptions',
]);

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

function rel(p: string): string {
  return relative(ROOT, p) || '.';
}

function loadYamlDocs(file: string, errors: string[]): Obj[] {
  const docs: Obj[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) errors.push(`${rel(file)}: YAML error: ${e.message}`);
      continue;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (!isObj(value)) {
      errors.push(`${rel(file)}: a document is not a mapping`);
      continue;
    }
    docs.push(value);
  }
  return docs;
}

// Strategic merge, reduced to what our patches need: maps merge recursively; lists of
// maps that all carry `name` merge by name (containers, env, ports, volumes); other
// lists are replaced.
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (isObj(target) && isObj(patch)) {
    const out: Obj = { ...target };
    for (const [k, v] of Object.entries(patch)) out[k] = k in target ? strategicMerge(target[k], v) : v;
    return out;
  }
  if (Array.isArray(target) && Array.isArray(patch)) {
    const named = (xs: unknown[]) => xs.every((x) => isObj(x) && typeof x.name === 'string');
    if (named(target) && named(patch)) {
      const out = target.map((x) => ({ ...(x as Obj) }));
      for (const p of patch as Obj[]) {
        const i = out.findIndex((x) => x.name === p.name);
        if (i === -1) out.push(p);
        else out[i] = strategicMerge(out[i], p) as Obj;
      }
      return out;
    }
    return patch;
  }
  return patch;
}

function generatorKeys(entry: Obj, dir: string, where: string, errors: string[]): string[] {
  const keys: string[] = [];
  for (const f of asArray(entry.files)) {
    const spec = str(f);
    if (!spec) {
      errors.push(`${where}: files entries must be strings`);
      continue;
    }
    const [key, path] = spec.includes('=') ? (spec.split('=', 2) as [string, string]) : [basename(spec), spec];
    const full = resolve(dir, path);
    if (!existsSync(full)) errors.push(`${where}: file ${path} does not exist`);
    keys.push(key);
  }
  for (const l of asArray(entry.literals)) {
    const spec = str(l);
    if (!spec || !spec.includes('=')) errors.push(`${where}: literal ${JSON.stringify(l)} is not KEY=VALUE`);
    else keys.push(spec.slice(0, spec.indexOf('=')));
  }
  for (const e of asArray(entry.envs)) {
    const path = str(e);
    const full = path ? resolve(dir, path) : '';
    if (!path || !existsSync(full)) {
      errors.push(`${where}: env file ${String(e)} does not exist`);
      continue;
    }
    for (const line of readFileSync(full, 'utf8').split('\n')) {
      const t = line.trim();
      if (t && !t.startsWith('#') && t.includes('=')) keys.push(t.slice(0, t.indexOf('=')));
    }
  }
  return keys;
}

/** Resolves a kustomization directory into objects, like `kustomize build` would. */
export function renderKustomization(dir: string, stack: readonly string[] = []): Rendered {
  const errors: string[] = [];
  const resources: Resource[] = [];
  const generated: Generated[] = [];
  const images = new Map<string, string>();
  const kfile = KUSTOMIZATION_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!kfile) {
    return { dir, resources, generated, images, namespace: undefined, errors: [`${rel(dir)}: no kustomization.yaml`] };
  }
  if (stack.includes(dir)) {
    return { dir, resources, generated, images, namespace: undefined, errors: [`${rel(dir)}: kustomization cycle via ${stack.map(rel).join(' -> ')}`] };
  }
  const [k] = loadYamlDocs(kfile, errors);
  if (!k) return { dir, resources, generated, images, namespace: undefined, errors: [...errors, `${rel(kfile)}: empty`] };
  for (const field of Object.keys(k)) {
    if (!KUSTOMIZATION_FIELDS.has(field)) errors.push(`${rel(kfile)}: unsupported or misspelt field "${field}"`);
  }
  if (k.kind !== undefined && k.kind !== 'Kustomization') errors.push(`${rel(kfile)}: kind must be Kustomization`);

  for (const r of asArray(k.resources)) {
    const path = str(r);
    if (!path) {
      errors.push(`${rel(kfile)}: resources entries must be strings`);
      continue;
    }
    const full = resolve(dir, path);
    if (!existsSync(full)) {
      errors.push(`${rel(kfile)}: resource ${path} does not exist`);
      continue;
    }
    if (statSync(full).isDirectory()) {
      const sub = renderKustomization(full, [...stack, dir]);
      errors.push(...sub.errors);
      resources.push(...sub.resources);
      generated.push(...sub.generated);
      for (const [n, v] of sub.images) images.set(n, v);
    } else {
      for (const doc of loadYamlDocs(full, errors)) resources.push({ ...doc, __source: rel(full) } as Resource);
    }
  }

  for (const [field, kind] of [
    ['configMapGenerator', 'ConfigMap'],
    ['secretGenerator', 'Secret'],
  ] as const) {
    for (const g of asArray(k[field])) {
      if (!isObj(g) || !str(g.name)) {
        errors.push(`${rel(kfile)}: ${field} entries need a name`);
        continue;
      }
      const where = `${rel(kfile)}: ${field} ${String(g.name)}`;
      generated.push({ kind, name: String(g.name), keys: generatorKeys(g, dir, where, errors), source: rel(kfile) });
    }
  }

  for (const img of asArray(k.images)) {
    if (!isObj(img) || !str(img.name)) {
      errors.push(`${rel(kfile)}: images entries need a name`);
      continue;
    }
    const name = String(img.name);
    const newName = str(img.newName) ?? name;
    const tag = str(img.newTag) ?? (typeof img.newTag === 'number' ? String(img.newTag) : undefined);
    const digest = str(img.digest);
    images.set(name, digest ? `${newName}@${digest}` : tag ? `${newName}:${tag}` : newName);
  }

  for (const p of asArray(k.patches)) {
    if (!isObj(p)) {
      errors.push(`${rel(kfile)}: patches entries must be mappings`);
      continue;
    }
    let patchDocs: Obj[] = [];
    const path = str(p.path);
    if (path) {
      const full = resolve(dir, path);
      if (!existsSync(full)) {
        errors.push(`${rel(kfile)}: patch ${path} does not exist`);
        continue;
      }
      patchDocs = loadYamlDocs(full, errors);
    } else if (str(p.patch)) {
      patchDocs = parseAllDocuments(String(p.patch))
        .map((d) => d.toJS() as unknown)
        .filter(isObj);
    } else {
      errors.push(`${rel(kfile)}: a patch needs path or patch`);
      continue;
    }
    const target = isObj(p.target) ? p.target : undefined;
    for (const doc of patchDocs) {
      if (Array.isArray(doc) || doc.op !== undefined) {
        errors.push(`${rel(kfile)}: only strategic-merge patches are supported here`);
        continue;
      }
      const kind = str(target?.kind) ?? str(doc.kind);
      const name = str(target?.name) ?? str((doc.metadata as Obj | undefined)?.name);
      const idx = resources.findIndex((r) => r.kind === kind && r.metadata?.name === name);
      if (idx === -1) {
        errors.push(`${rel(kfile)}: patch ${path ?? '(inline)'} targets ${kind}/${name}, which is not among the resources`);
        continue;
      }
      const { metadata: _m, apiVersion: _a, kind: _k, ...body } = doc;
      const merged = strategicMerge(resources[idx], body) as Resource;
      resources[idx] = merged;
    }
  }

  const namespace = str(k.namespace);
  return { dir, resources, generated, images, namespace, errors };
}

interface Container {
  name?: string;
  image?: string;
  env?: { name?: string; value?: string; valueFrom?: Obj }[];
  envFrom?: Obj[];
  ports?: { name?: string; containerPort?: number }[];
  readinessProbe?: Obj;
  livenessProbe?: Obj;
  startupProbe?: Obj;
  resources?: { requests?: Obj };
  volumeMounts?: { name?: string; mountPath?: string; subPath?: string }[];
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);
const APP_SERVICES = ['secrets', 'scheduler', 'boxes', 'registry'];
const DNS_1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function podSpec(r: Resource): Obj | undefined {
  const tpl = r.spec?.template;
  return isObj(tpl) && isObj(tpl.spec) ? tpl.spec : undefined;
}

function templateLabels(r: Resource): Record<string, string> {
  const tpl = r.spec?.template;
  const md = isObj(tpl) && isObj(tpl.metadata) ? tpl.metadata : undefined;
  return (isObj(md?.labels) ? md.labels : {}) as Record<string, string>;
}

function containersOf(r: Resource): { containers: Container[]; init: Container[] } {
  const spec = podSpec(r);
  return { containers: asArray(spec?.containers) as Container[], init: asArray(spec?.initContainers) as Container[] };
}

function envValue(c: Container, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.value;
}

/** What a container's HTTP probes may ask for: the paths its program really serves. */
export function allowedProbePaths(c: Container): string[] | undefined {
  // Our image is recognised by SERVICE (it selects the bundle, infra/docker/Dockerfile)
  // rather than by name, which overlays rewrite. The controller bundle serves Boundary's
  // /health on its ops listener; the other services serve the kit's /healthz and /readyz.
  const service = envValue(c, 'SERVICE');
  if (service) return service === 'controller' ? ['/health'] : ['/healthz', '/readyz'];
  const repo = (c.image ?? '').replace(/[:@].*$/, '');
  if (repo === 'nginx' || repo.endsWith('/nginx')) return ['/_gateway/health'];
  return undefined;
}

function subset(sel: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/** Validates a rendered kustomization; returns every problem found. */
export function validateRendered(rendered: Rendered, options: { requireImageOverride: boolean }): ValidationResult {
  const errors = [...rendered.errors];
  const externalSecrets = new Set<string>();
  const { resources, generated } = rendered;
  const seen = new Set<string>();

  const configMaps = new Map<string, Set<string>>();
  const secrets = new Map<string, Set<string>>();
  for (const g of generated) (g.kind === 'ConfigMap' ? configMaps : secrets).set(g.name, new Set(g.keys));
  for (const r of resources) {
    const name = str(r.metadata?.name);
    const keys = new Set([...Object.keys(isObj(r.data) ? r.data : {}), ...Object.keys(isObj(r.stringData) ? r.stringData : {})]);
    if (r.kind === 'ConfigMap' && name) configMaps.set(name, keys);
    if (r.kind === 'Secret' && name) secrets.set(name, keys);
  }

  const workloads = resources.filter((r) => WORKLOAD_KINDS.has(String(r.kind)));

  for (const r of resources) {
    const id = `${r.__source}: ${String(r.kind)}/${String(r.metadata?.name)}`;
    if (!str(r.apiVersion)) errors.push(`${id}: missing apiVersion`);
    if (!str(r.kind)) errors.push(`${id}: missing kind`);
    const name = str(r.metadata?.name);
    if (!name) errors.push(`${id}: missing metadata.name`);
    else if (!DNS_1123.test(name) || name.length > 63) errors.push(`${id}: metadata.name "${name}" is not a valid DNS-1123 label`);
    const key = `${String(r.kind)}/${name}`;
    if (seen.has(key)) errors.push(`${id}: duplicate ${key}`);
    seen.add(key);
  }

  for (const w of workloads) {
    const id = `${w.__source}: ${String(w.kind)}/${String(w.metadata?.name)}`;
    const spec = podSpec(w);
    if (!spec) {
      errors.push(`${id}: missing spec.template.spec`);
      continue;
    }
    const labels = templateLabels(w);
    if (w.kind !== 'Job') {
      const sel = isObj(w.spec?.selector) && isObj((w.spec.selector as Obj).matchLabels) ? ((w.spec.selector as Obj).matchLabels as Record<string, string>) : undefined;
      if (!sel || Object.keys(sel).length === 0) errors.push(`${id}: spec.selector.matchLabels is missing`);
      else if (!subset(sel, labels)) errors.push(`${id}: selector ${JSON.stringify(sel)} does not match template labels ${JSON.stringify(labels)}`);
    } else {
      const rp = str(spec.restartPolicy);
      if (rp !== 'OnFailure' && rp !== 'Never') errors.push(`${id}: a Job needs restartPolicy OnFailure or Never`);
    }

    const volumes = new Map<string, Obj>();
    for (const v of asArray(spec.volumes)) if (isObj(v) && str(v.name)) volumes.set(String(v.name), v);
    for (const [vname, v] of volumes) {
      if (isObj(v.configMap)) {
        const cmName = String(v.configMap.name);
        const keys = configMaps.get(cmName);
        if (!keys) errors.push(`${id}: volume ${vname} uses ConfigMap ${cmName}, which is not defined`);
        else for (const it of asArray(v.configMap.items)) if (isObj(it) && !keys.has(String(it.key))) errors.push(`${id}: volume ${vname}: ConfigMap ${cmName} has no key ${String(it.key)}`);
      }
      if (isObj(v.secret)) {
        const sName = String(v.secret.secretName);
        if (!secrets.has(sName) && v.secret.optional !== true) externalSecrets.add(sName);
      }
    }

    const { containers, init } = containersOf(w);
    if (containers.length === 0) errors.push(`${id}: no containers`);
    for (const c of [...init, ...containers]) {
      const cid = `${id} container ${c.name ?? '?'}`;
      if (!c.name) errors.push(`${id}: a container has no name`);
      if (!c.image) errors.push(`${cid}: no image`);
      const image = c.image ?? '';
      if (options.requireImageOverride && (image === 'selfstack' || image.startsWith('selfstack:'))) {
        errors.push(`${cid}: image "${image}" is not rewritten by the overlay's images: transformer`);
      }
      const req = c.resources?.requests;
      if (!isObj(req) || req.cpu === undefined || req.memory === undefined) errors.push(`${cid}: resources.requests.cpu and .memory are required`);

      const portNames = new Set<string>();
      const portNumbers = new Set<number>();
      for (const p of c.ports ?? []) {
        if (p.name) {
          if (portNames.has(p.name)) errors.push(`${cid}: duplicate port name ${p.name}`);
          portNames.add(p.name);
        }
        if (typeof p.containerPort === 'number') portNumbers.add(p.containerPort);
      }

      const allowed = allowedProbePaths(c);
      for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
        const probe = c[kind];
        if (!probe) continue;
        const hg = isObj(probe.httpGet) ? probe.httpGet : isObj(probe.tcpSocket) ? probe.tcpSocket : undefined;
        if (hg) {
          const port = hg.port;
          const ok = typeof port === 'number' ? portNumbers.has(port) : portNames.has(String(port));
          if (!ok) errors.push(`${cid}: ${kind} port ${String(port)} is not a container port`);
        }
        if (isObj(probe.httpGet)) {
          const path = String(probe.httpGet.path ?? '/');
          if (!allowed) errors.push(`${cid}: ${kind} uses HTTP path ${path} on an image whose endpoints are unknown`);
          else if (!allowed.includes(path)) errors.push(`${cid}: ${kind} path ${path} is not served (expected one of ${allowed.join(', ')})`);
        }
      }
      // App services: readiness must include dependencies, liveness must not.
      const service = envValue(c, 'SERVICE');
      if (service && APP_SERVICES.includes(service) && init.indexOf(c) === -1) {
        if ((c.readinessProbe?.httpGet as Obj | undefined)?.path !== '/readyz') errors.push(`${cid}: readinessProbe must be GET /readyz`);
        if ((c.livenessProbe?.httpGet as Obj | undefined)?.path !== '/healthz') errors.push(`${cid}: livenessProbe must be GET /healthz`);
      }

      for (const e of c.env ?? []) {
        const vf = e.valueFrom;
        if (!isObj(vf)) continue;
        if (isObj(vf.secretKeyRef)) {
          const s = String(vf.secretKeyRef.name);
          const keys = secrets.get(s);
          if (!keys) {
            if (vf.secretKeyRef.optional !== true) externalSecrets.add(s);
          } else if (!keys.has(String(vf.secretKeyRef.key))) errors.push(`${cid}: env ${e.name}: Secret ${s} has no key ${String(vf.secretKeyRef.key)}`);
        }
        if (isObj(vf.configMapKeyRef)) {
          const cm = String(vf.configMapKeyRef.name);
          const keys = configMaps.get(cm);
          if (!keys) errors.push(`${cid}: env ${e.name}: ConfigMap ${cm} is not defined`);
          else if (!keys.has(String(vf.configMapKeyRef.key))) errors.push(`${cid}: env ${e.name}: ConfigMap ${cm} has no key ${String(vf.configMapKeyRef.key)}`);
        }
      }
      for (const ef of c.envFrom ?? []) {
        if (isObj(ef.secretRef) && !secrets.has(String(ef.secretRef.name)) && ef.secretRef.optional !== true) externalSecrets.add(String(ef.secretRef.name));
        if (isObj(ef.configMapRef) && !configMaps.has(String(ef.configMapRef.name))) errors.push(`${cid}: envFrom ConfigMap ${String(ef.configMapRef.name)} is not defined`);
      }

      const claimTemplates = new Set(asArray(w.spec?.volumeClaimTemplates).map((t) => String((isObj(t) && isObj(t.metadata) ? t.metadata.name : '') ?? '')));
      for (const m of c.volumeMounts ?? []) {
        if (!m.name || (!volumes.has(m.name) && !claimTemplates.has(m.name))) errors.push(`${cid}: volumeMount ${m.name ?? '?'} has no matching volume`);
      }

      // A config file named in env must be mounted there from a ConfigMap that has it.
      const configPath = envValue(c, 'CONTROLLER_CONFIG');
      if (configPath) {
        const found = (c.volumeMounts ?? []).some((m) => {
          if (!m.mountPath || !m.name || !configPath.startsWith(`${m.mountPath}/`)) return false;
          const v = volumes.get(m.name);
          if (!v || !isObj(v.configMap)) return false;
          const file = configPath.slice(m.mountPath.length + 1);
          const items = asArray(v.configMap.items).filter(isObj);
          if (items.length > 0) return items.some((it) => it.path === file);
          return configMaps.get(String(v.configMap.name))?.has(file) ?? false;
        });
        if (!found) errors.push(`${cid}: CONTROLLER_CONFIG ${configPath} is not provided by any ConfigMap mount`);
      }
    }
  }

  for (const s of resources.filter((r) => r.kind === 'Service')) {
    const id = `${s.__source}: Service/${String(s.metadata?.name)}`;
    const sel = (isObj(s.spec?.selector) ? s.spec.selector : {}) as Record<string, string>;
    if (Object.keys(sel).length === 0) {
      errors.push(`${id}: no selector`);
      continue;
    }
    const targets = workloads.filter((w) => w.kind !== 'Job' && subset(sel, templateLabels(w)));
    if (targets.length === 0) {
      errors.push(`${id}: selector ${JSON.stringify(sel)} matches no workload`);
      continue;
    }
    const ports = targets.flatMap((w) => containersOf(w).containers.flatMap((c) => c.ports ?? []));
    for (const p of asArray(s.spec?.ports).filter(isObj)) {
      const target = p.targetPort ?? p.port;
      const ok = typeof target === 'number' ? ports.some((cp) => cp.containerPort === target) : ports.some((cp) => cp.name === target);
      if (!ok) errors.push(`${id}: port ${String(p.name ?? p.port)} targets ${String(target)}, which no selected container exposes`);
    }
  }

  for (const p of resources.filter((r) => r.kind === 'PodDisruptionBudget')) {
    const sel = isObj(p.spec?.selector) && isObj((p.spec.selector as Obj).matchLabels) ? ((p.spec.selector as Obj).matchLabels as Record<string, string>) : {};
    if (!workloads.some((w) => subset(sel, templateLabels(w)))) errors.push(`${p.__source}: PodDisruptionBudget/${String(p.metadata?.name)} selects no workload`);
  }

  return { errors, externalSecrets: [...externalSecrets].sort(), rendered };
}

/** Applies the overlay's images: transformer to every container. */
export function applyImages(rendered: Rendered): void {
  for (const r of rendered.resources) {
    const { containers, init } = containersOf(r);
    for (const c of [...containers, ...init]) {
      if (!c.image) continue;
      const name = c.image.replace(/[:@].*$/, '');
      const replacement = rendered.images.get(name);
      if (replacement) c.image = replacement;
    }
  }
}

export function validateKustomization(dir: string, options: { requireImageOverride: boolean }): ValidationResult {
  const rendered = renderKustomization(dir);
  applyImages(rendered);
  return validateRendered(rendered, options);
}

/** Pairs of (copy in infra/k8s/base/files, source of truth). */
export function configCopies(root = ROOT): [string, string][] {
  const files = join(root, 'infra', 'k8s', 'base', 'files');
  const pairs: [string, string][] = [[join(files, 'nginx.conf'), join(root, 'infra', 'nginx', 'nginx.conf')]];
  for (const f of readdirSync(join(root, 'infra', 'nginx', 'selfstack'))) pairs.push([join(files, f), join(root, 'infra', 'nginx', 'selfstack', f)]);
  for (const f of readdirSync(join(root, 'infra', 'controller')).filter((n) => n.endsWith('.hcl'))) {
    pairs.push([join(files, f), join(root, 'infra', 'controller', f)]);
  }
  return pairs;
}

export function checkCopies(root = ROOT): string[] {
  const problems: string[] = [];
  for (const [copy, source] of configCopies(root)) {
    if (!existsSync(copy)) problems.push(`${rel(copy)} is missing (copy of ${rel(source)}); run scripts/k8s-validate.ts --sync`);
    else if (readFileSync(copy, 'utf8') !== readFileSync(source, 'utf8')) {
      problems.push(`${rel(copy)} differs from ${rel(source)}; run scripts/k8s-validate.ts --sync`);
    }
  }
  return problems;
}

function main(): number {
  if (process.argv.includes('--sync')) {
    for (const [copy, source] of configCopies()) copyFileSync(source, copy);
    process.stdout.write('synced infra/k8s/base/files from infra/nginx and infra/controller\n');
  }
  const targets: { dir: string; requireImageOverride: boolean }[] = [
    { dir: join(K8S_DIR, 'base'), requireImageOverride: false },
    ...readdirSync(join(K8S_DIR, 'overlays'))
      .map((o) => join(K8S_DIR, 'overlays', o))
      .filter((d) => statSync(d).isDirectory())
      .map((dir) => ({ dir, requireImageOverride: true })),
  ];
  let failed = false;
  for (const t of targets) {
    const result = validateKustomization(t.dir, t);
    const kinds = new Map<string, number>();
    for (const r of result.rendered.resources) kinds.set(String(r.kind), (kinds.get(String(r.kind)) ?? 0) + 1);
    for (const g of result.rendered.generated) kinds.set(`${g.kind} (generated)`, (kinds.get(`${g.kind} (generated)`) ?? 0) + 1);
    const summary = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ');
    process.stdout.write(`${result.errors.length === 0 ? 'ok  ' : 'FAIL'} ${rel(t.dir)}: ${summary}\n`);
    if (result.externalSecrets.length > 0) process.stdout.write(`     expects Secrets created in the cluster: ${result.externalSecrets.join(', ')}\n`);
    for (const e of result.errors) process.stdout.write(`     - ${e}\n`);
    if (result.errors.length > 0) failed = true;
  }
  const drift = checkCopies();
  for (const d of drift) process.stdout.write(`FAIL ${d}\n`);
  if (drift.length > 0) failed = true;
  return failed ? 1 : 0;
}

if (require.main === module) process.exit(main());
