// `make k8s-validate`: checks infra/k8s with the real tools, without a cluster (issue 31
// item 5).
//
// 1. Rendering is kustomize's own: `kubectl kustomize <dir>` for the base and every
//    overlay (resources, generators with their hash suffixes and the references to them,
//    patches, namespace, images, labels), so what is checked is what `kubectl apply -k`
//    would send. A kustomization kustomize rejects fails here with kustomize's message.
// 2. Every rendered object is validated against the Kubernetes OpenAPI schema of its
//    apiVersion/kind with `kubernetes-models` (schemas generated from the Kubernetes
//    OpenAPI spec, shipped in the npm package, so no network): required fields, types,
//    enums, formats (quantities, int-or-string). An object whose kind it does not know is
//    an error, not a pass.
// 3. Then only the project's own cross-checks, which no schema can know: probes on the
//    ports the container declares and the paths its program serves, workload and
//    PodDisruptionBudget selectors matching pod labels, Services selecting a workload that
//    exposes their target ports, readiness with dependencies (/readyz) and liveness
//    without (/healthz), resource requests on every container, referenced ConfigMap keys
//    and config files, overlays rewriting the image, and the config copies in
//    infra/k8s/base/files matching infra/nginx and infra/controller (kustomize may not
//    read files outside the kustomization root); `--sync` refreshes those copies.
//
//   npx tsx scripts/k8s-validate.ts [--sync]        exit 1 when any problem is found
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as k8sModels from 'kubernetes-models';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(__dirname, '..');
export const K8S_DIR = join(ROOT, 'infra', 'k8s');

type Obj = Record<string, unknown>;

/** One rendered object, as kustomize printed it. */
export interface K8sObject extends Obj {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; labels?: Record<string, string> };
  spec?: Obj;
}

export interface ValidationResult {
  readonly errors: string[];
  /** Secrets referenced but not produced by the kustomization (the operator creates them). */
  readonly externalSecrets: string[];
  readonly objects: K8sObject[];
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const rel = (p: string): string => relative(ROOT, p) || '.';
const idOf = (o: K8sObject): string => `${String(o.kind)}/${String(o.metadata?.name)}`;

/** Thrown when kubectl is missing or kustomize rejects the kustomization. */
export class RenderError extends Error {}

/** `kubectl kustomize <dir>`: kustomize's own rendering, parsed into objects. */
export function renderKustomization(dir: string): K8sObject[] {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new RenderError(
        'kubectl is not installed: `make k8s-validate` renders with `kubectl kustomize` ' +
          '(scripts/ensure-test-env.sh installs it: apt-get install -y kubectl)',
      );
    }
    throw new RenderError(`kubectl kustomize ${rel(dir)} failed: ${(e.stderr ?? e.message).trim()}`);
  }
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(out)) {
    if (doc.errors.length > 0) throw new RenderError(`kubectl kustomize ${rel(dir)} printed invalid YAML: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (isObj(value)) objects.push(value as K8sObject);
  }
  return objects;
}

interface Model {
  new (data: Obj): { validate(): void };
}

/**
 * The kubernetes-models class for an apiVersion/kind, or undefined when the package has no
 * schema for it. The package exports one namespace per API group, camel-cased
 * (`networking.k8s.io/v1` -> networkingK8sIo.v1), the core group as `v1`.
 */
function modelFor(apiVersion: string, kind: string): Model | undefined {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash === -1 ? undefined : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const groupKey = group?.replace(/[.-]([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  const root = k8sModels as unknown as Record<string, Record<string, Record<string, unknown>> | undefined>;
  const versions = groupKey === undefined ? (root as Record<string, Record<string, unknown> | undefined>) : root[groupKey];
  const kinds = versions && Object.hasOwn(versions, version) ? versions[version] : undefined;
  const model = kinds && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
  return typeof model === 'function' ? (model as Model) : undefined;
}

// kustomize folds a generated Secret's long base64 values over several lines. The API
// server decodes them with Go's encoding/base64, which ignores \r and \n, so they are
// valid; the schema's "byte" format is a one-line regular expression.
function forSchema(o: K8sObject): Obj {
  if (o.kind !== 'Secret' || !isObj(o.data)) return o;
  const data: Obj = {};
  for (const [k, v] of Object.entries(o.data)) data[k] = typeof v === 'string' ? v.replace(/[\r\n]/g, '') : v;
  return { ...o, data };
}

/** Problems the Kubernetes OpenAPI schema finds in one object ([] when it conforms). */
export function schemaErrors(o: K8sObject): string[] {
  const apiVersion = str(o.apiVersion);
  const kind = str(o.kind);
  if (!apiVersion || !kind) return [`${idOf(o)}: apiVersion and kind are required`];
  const Model = modelFor(apiVersion, kind);
  if (!Model) return [`${idOf(o)}: no Kubernetes schema for ${apiVersion} ${kind}`];
  try {
    new Model(forSchema(o)).validate();
    return [];
  } catch (err) {
    // kubernetes-models joins ajv's messages with ", ": one line per problem reads better.
    return (err as Error).message.split(/, (?=data[/ ])/).map((m) => `${idOf(o)}: ${m.replace(/^data/, '')}`);
  }
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
  volumeMounts?: { name?: string; mountPath?: string }[];
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);
const APP_SERVICES = ['secrets', 'scheduler', 'boxes', 'registry'];

function podSpec(r: K8sObject): Obj | undefined {
  const tpl = r.spec?.template;
  return isObj(tpl) && isObj(tpl.spec) ? tpl.spec : undefined;
}

function templateLabels(r: K8sObject): Record<string, string> {
  const tpl = r.spec?.template;
  const md = isObj(tpl) && isObj(tpl.metadata) ? tpl.metadata : undefined;
  return (isObj(md?.labels) ? md.labels : {}) as Record<string, string>;
}

function containersOf(r: K8sObject): { containers: Container[]; init: Container[] } {
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
  // /health on its ops listener; the scheduler's client agent the anchor's
  // /v1/agent/health; the other services serve the kit's /healthz and /readyz.
  const service = envValue(c, 'SERVICE');
  if (service === 'scheduler-agent') return ['/v1/agent/health'];
  if (service) return service === 'controller' ? ['/health'] : ['/healthz', '/readyz'];
  const repo = (c.image ?? '').replace(/[:@].*$/, '');
  if (repo === 'nginx' || repo.endsWith('/nginx')) return ['/_gateway/health'];
  return undefined;
}

function subset(sel: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/** The project's own checks over one rendered kustomization (see the header, part 3). */
export function crossCheck(objects: readonly K8sObject[], options: { requireImageOverride: boolean }): { errors: string[]; externalSecrets: string[] } {
  const errors: string[] = [];
  const externalSecrets = new Set<string>();
  const keysOf = (kind: string) => {
    const m = new Map<string, Set<string>>();
    for (const r of objects.filter((o) => o.kind === kind)) {
      const keys = [...Object.keys(isObj(r.data) ? r.data : {}), ...Object.keys(isObj(r.stringData) ? r.stringData : {})];
      m.set(String(r.metadata?.name), new Set(keys));
    }
    return m;
  };
  const configMaps = keysOf('ConfigMap');
  const secrets = keysOf('Secret');
  const workloads = objects.filter((r) => WORKLOAD_KINDS.has(String(r.kind)));

  for (const w of workloads) {
    const id = idOf(w);
    const spec = podSpec(w);
    if (!spec) continue; // the schema reports the missing template
    const labels = templateLabels(w);
    if (w.kind !== 'Job') {
      const sel = isObj(w.spec?.selector) && isObj(w.spec.selector.matchLabels) ? (w.spec.selector.matchLabels as Record<string, string>) : undefined;
      if (!sel || Object.keys(sel).length === 0) errors.push(`${id}: spec.selector.matchLabels is missing`);
      else if (!subset(sel, labels)) errors.push(`${id}: selector ${JSON.stringify(sel)} does not match template labels ${JSON.stringify(labels)}`);
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
    for (const c of [...init, ...containers]) {
      const cid = `${id} container ${c.name ?? '?'}`;
      const image = c.image ?? '';
      if (options.requireImageOverride && (image === 'selfstack' || image.startsWith('selfstack:'))) {
        errors.push(`${cid}: image "${image}" is not rewritten by the overlay's images: transformer`);
      }
      const req = c.resources?.requests;
      if (!isObj(req) || req.cpu === undefined || req.memory === undefined) errors.push(`${cid}: resources.requests.cpu and .memory are required`);

      const portNames = new Set((c.ports ?? []).map((p) => p.name).filter((n): n is string => Boolean(n)));
      const portNumbers = new Set((c.ports ?? []).map((p) => p.containerPort).filter((n): n is number => typeof n === 'number'));
      const allowed = allowedProbePaths(c);
      for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
        const probe = c[kind];
        if (!probe) continue;
        const target = isObj(probe.httpGet) ? probe.httpGet : isObj(probe.tcpSocket) ? probe.tcpSocket : undefined;
        if (target) {
          const port = target.port;
          const ok = typeof port === 'number' ? portNumbers.has(port) : portNames.has(String(port));
          if (!ok) errors.push(`${cid}: ${kind} port ${String(port)} is not a container port`);
        }
        if (isObj(probe.httpGet)) {
          const path = String(probe.httpGet.path ?? '/');
          if (!allowed) errors.push(`${cid}: ${kind} uses HTTP path ${path} on an image whose endpoints are unknown`);
          else if (!allowed.includes(path)) errors.push(`${cid}: ${kind} path ${path} is not served (expected one of ${allowed.join(', ')})`);
        }
      }
      // App services: readiness includes the dependencies, liveness must not.
      const service = envValue(c, 'SERVICE');
      if (service && APP_SERVICES.includes(service) && !init.includes(c)) {
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

      const claimTemplates = new Set(asArray(w.spec?.volumeClaimTemplates).map((t) => String(isObj(t) && isObj(t.metadata) ? t.metadata.name : '')));
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

  for (const s of objects.filter((r) => r.kind === 'Service')) {
    const id = idOf(s);
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

  for (const p of objects.filter((r) => r.kind === 'PodDisruptionBudget')) {
    const sel = isObj(p.spec?.selector) && isObj(p.spec.selector.matchLabels) ? (p.spec.selector.matchLabels as Record<string, string>) : {};
    if (!workloads.some((w) => subset(sel, templateLabels(w)))) errors.push(`${idOf(p)}: selects no workload`);
  }

  return { errors, externalSecrets: [...externalSecrets].sort() };
}

/** Renders one kustomization with kubectl, then schema-validates and cross-checks it. */
export function validateKustomization(dir: string, options: { requireImageOverride: boolean }): ValidationResult {
  let objects: K8sObject[];
  try {
    objects = renderKustomization(dir);
  } catch (err) {
    if (err instanceof RenderError) return { errors: [err.message], externalSecrets: [], objects: [] };
    throw err;
  }
  const errors = objects.flatMap(schemaErrors);
  const cross = crossCheck(objects, options);
  return { errors: [...errors, ...cross.errors], externalSecrets: cross.externalSecrets, objects };
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
    for (const r of result.objects) kinds.set(String(r.kind), (kinds.get(String(r.kind)) ?? 0) + 1);
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
