// scripts/k8s-validate.ts against the real manifests, and against broken copies to
// show each check fires: kustomize's own errors (through `kubectl kustomize`), the
// Kubernetes schema's (kubernetes-models), and the project's cross-checks. An integration
// test because it runs kubectl (installed by scripts/ensure-test-env.sh).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCopies, K8S_DIR, validateKustomization, type K8sObject } from '../../scripts/k8s-validate';
import { NGINX_DIR } from './nginx-config';

describe('infra/k8s (real manifests)', () => {
  it.each([
    ['base', false],
    ['overlays/dev', true],
    ['overlays/prod', true],
  ] as const)('%s validates', (dir, requireImageOverride) => {
    const result = validateKustomization(join(K8S_DIR, dir), { requireImageOverride });
    expect(result.errors).toEqual([]);
  });

  const names = (objects: K8sObject[], kind: string) => objects.filter((r) => r.kind === kind).map((r) => String(r.metadata?.name)).sort();

  it('base has a Deployment and Service per API, the migration Job and the generated config maps', () => {
    const { objects } = validateKustomization(join(K8S_DIR, 'base'), { requireImageOverride: false });
    expect(names(objects, 'Deployment')).toEqual(['boxes', 'controller', 'gateway', 'registry', 'scheduler', 'secrets', 'worker']);
    expect(names(objects, 'Service')).toEqual(['boxes', 'controller', 'gateway', 'registry', 'scheduler', 'secrets']);
    expect(names(objects, 'Job')).toEqual(['migrate']);
    expect(names(objects, 'DaemonSet')).toEqual(['scheduler-agent']);
    // kustomize's generators: a content hash suffix, and every reference rewritten to it.
    const maps = names(objects, 'ConfigMap');
    expect(maps.map((n) => n.replace(/-[a-z0-9]{10}$/, ''))).toEqual(['controller-config', 'gateway-nginx', 'gateway-nginx-selfstack']);
    const gateway = objects.find((r) => r.kind === 'Deployment' && r.metadata?.name === 'gateway')!;
    const volumes = (gateway.spec as any).template.spec.volumes as { configMap?: { name: string } }[];
    for (const v of volumes.filter((x) => x.configMap)) expect(maps).toContain(v.configMap!.name);
  });

  it('dev is self-contained; prod expects the database and redis Secrets from the operator', () => {
    expect(validateKustomization(join(K8S_DIR, 'overlays/dev'), { requireImageOverride: true }).externalSecrets).toEqual([]);
    expect(validateKustomization(join(K8S_DIR, 'overlays/prod'), { requireImageOverride: true }).externalSecrets).toEqual([
      'selfstack-database',
      'selfstack-redis',
    ]);
  });

  it('overlays rewrite the image and apply their patches', () => {
    const prod = validateKustomization(join(K8S_DIR, 'overlays/prod'), { requireImageOverride: true }).objects;
    const dep = (n: string) => prod.find((r) => r.kind === 'Deployment' && r.metadata?.name === n)!;
    expect(dep('registry').spec?.replicas).toBe(2);
    const sched = (dep('scheduler').spec?.template as any).spec.containers[0];
    expect(sched.image).toBe('ghcr.io/selfstack/selfstack:0.1.0');
    expect(sched.resources.requests.memory).toBe('256Mi');
    // The patch merged into the container; it did not replace its env or ports.
    expect(sched.env.map((e: { name: string }) => e.name)).toContain('DATABASE_URL');
    expect(prod.find((r) => r.kind === 'Service' && r.metadata?.name === 'gateway')?.spec?.type).toBe('LoadBalancer');
    for (const r of prod.filter((o) => o.kind !== 'Namespace')) expect(r.metadata?.namespace).toBe('selfstack');
  });

  it('runs a scheduler client agent on every node, advertising its pod IP, probed on its health endpoint', () => {
    const prod = validateKustomization(join(K8S_DIR, 'overlays/prod'), { requireImageOverride: true }).objects;
    const ds = prod.find((r) => r.kind === 'DaemonSet' && r.metadata?.name === 'scheduler-agent')!;
    const c = (ds.spec?.template as any).spec.containers[0];
    expect(c.image).toBe('ghcr.io/selfstack/selfstack:0.1.0');
    const env = Object.fromEntries((c.env as { name: string; value?: string }[]).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ SERVICE: 'scheduler-agent', SCHEDULER_AGENT_SERVERS: 'scheduler:4646', SCHEDULER_AGENT_ADVERTISE: '$(POD_IP):4647', SCHEDULER_AGENT_PORT: '4647' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/v1/agent/health', port: 'http' });
    expect(c.ports).toEqual([{ name: 'http', containerPort: 4647 }]);
    expect(ds.metadata?.namespace).toBe('selfstack');
  });

  it('the config copies in base/files match infra/nginx and infra/controller', () => {
    expect(checkCopies()).toEqual([]);
  });

  it('the gateway-nginx-selfstack ConfigMap holds every file nginx.conf includes', () => {
    // Mounted as /etc/nginx/selfstack: a missing include stops nginx from starting.
    const included = new Set<string>();
    const walk = (file: string) => {
      for (const m of readFileSync(join(NGINX_DIR, file), 'utf8').matchAll(/^\s*include (selfstack\/[\w.-]+);/gm)) {
        if (!included.has(m[1]!)) {
          included.add(m[1]!);
          walk(m[1]!);
        }
      }
    };
    walk('nginx.conf');
    expect(included).toContain('selfstack/error-pages.conf');
    const { objects } = validateKustomization(join(K8S_DIR, 'base'), { requireImageOverride: false });
    const map = objects.find((r) => r.kind === 'ConfigMap' && /^gateway-nginx-selfstack-[a-z0-9]{10}$/.test(String(r.metadata?.name)));
    const keys = Object.keys((map?.data ?? {}) as Record<string, string>);
    expect([...keys].sort()).toEqual([...included].map((f) => f.replace(/^selfstack\//, '')).sort());
  });
});

describe('k8s validator catches broken manifests', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'k8s-validate-'));
    cpSync(join(K8S_DIR, 'base'), join(dir, 'base'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const edit = (file: string, from: string | RegExp, to: string) => {
    const p = join(dir, 'base', file);
    const before = readFileSync(p, 'utf8');
    const after = before.replace(from, to);
    if (after === before) throw new Error(`fixture edit did not apply to ${file}`);
    writeFileSync(p, after);
  };
  const errorsOf = () => validateKustomization(join(dir, 'base'), { requireImageOverride: false }).errors.join('\n');

  it('a missing resource file (kustomize says so)', () => {
    edit('kustomization.yaml', '  - boxes.yaml', '  - boxes.yaml\n  - nope.yaml');
    expect(errorsOf()).toMatch(/kubectl kustomize .* failed: .*nope\.yaml/s);
  });

  it('objects the Kubernetes schema rejects: a wrong type, a missing required field, a bad quantity, an unknown enum value', () => {
    edit('secrets.yaml', 'containerPort: 8200', 'containerPort: "8200"');
    edit('boxes.yaml', /replicas: 1/, 'replicas: one');
    edit('registry.yaml', 'cpu: 100m', 'cpu: lots');
    edit('scheduler.yaml', /- name: scheduler\n(\s+)image: selfstack/, '- image: selfstack');
    edit('secrets.yaml', /port: 8200\n      targetPort: http/, 'port: 8200\n      targetPort: http\n      protocol: HTTP');
    const errors = errorsOf();
    expect(errors).toMatch(/Deployment\/secrets: \/spec\/template\/spec\/containers\/0\/ports\/0\/containerPort must be integer/);
    expect(errors).toMatch(/Deployment\/boxes: \/spec\/replicas must be integer/);
    expect(errors).toMatch(/Deployment\/registry: \/spec\/template\/spec\/containers\/0\/resources\/requests\/cpu must match format "quantity"/);
    expect(errors).toMatch(/Deployment\/scheduler: \/spec\/template\/spec\/containers\/0 must have required property name/);
    expect(errors).toMatch(/Service\/secrets: \/spec\/ports\/0\/protocol must be equal to one of the allowed values/);
  });

  it('a kind the schemas do not know', () => {
    writeFileSync(join(dir, 'base', 'odd.yaml'), 'apiVersion: apps/v1\nkind: Deploymint\nmetadata:\n  name: odd\n');
    edit('kustomization.yaml', '  - boxes.yaml', '  - boxes.yaml\n  - odd.yaml');
    expect(errorsOf()).toMatch(/Deploymint\/odd: no Kubernetes schema for apps\/v1 Deploymint/);
  });

  it('a selector that does not match the template labels', () => {
    edit('registry.yaml', /matchLabels:\n      app.kubernetes.io\/name: registry/, 'matchLabels:\n      app.kubernetes.io/name: registri');
    expect(errorsOf()).toMatch(/Deployment\/registry: selector .* does not match template labels/);
  });

  it('a Service targetPort no container exposes', () => {
    edit('secrets.yaml', /port: 8200\n      targetPort: http/, 'port: 8200\n      targetPort: web');
    expect(errorsOf()).toMatch(/Service\/secrets: port http targets web, which no selected container exposes/);
  });

  it('a probe on a path the service does not serve, or on a missing port', () => {
    edit('boxes.yaml', 'path: /readyz', 'path: /ready');
    edit('scheduler.yaml', /path: \/healthz\n              port: http/, 'path: /healthz\n              port: metrics');
    const errors = errorsOf();
    expect(errors).toMatch(/boxes container boxes: readinessProbe path \/ready is not served/);
    expect(errors).toMatch(/scheduler container scheduler: livenessProbe port metrics is not a container port/);
  });

  it('missing resource requests and a ConfigMap key that does not exist', () => {
    edit('registry.yaml', /resources:\n            requests:\n              cpu: 100m\n              memory: 128Mi\n/, 'resources:\n');
    edit('controller.yaml', 'key: worker.hcl\n                path: worker.hcl', 'key: workers.hcl\n                path: workers.hcl');
    const errors = errorsOf();
    expect(errors).toMatch(/registry container registry: resources.requests.cpu and .memory are required/);
    expect(errors).toMatch(/ConfigMap controller-config-[a-z0-9]+ has no key workers\.hcl/);
    expect(errors).toMatch(/CONTROLLER_CONFIG \/etc\/controller\/worker\.hcl is not provided/);
  });

  it('a patch whose target does not exist, and an unknown kustomization field (kustomize says so)', () => {
    writeFileSync(join(dir, 'patch.yaml'), 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ghost\nspec:\n  replicas: 3\n');
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n  - base\npatches:\n  - path: patch.yaml\n');
    expect(validateKustomization(dir, { requireImageOverride: false }).errors.join('\n')).toMatch(/failed: .*ghost/s);
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n  - base\npatchesJson: []\n');
    expect(validateKustomization(dir, { requireImageOverride: false }).errors.join('\n')).toMatch(/failed: .*patchesJson/s);
  });

  it('an overlay that forgets to set the image', () => {
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n  - base\n');
    expect(validateKustomization(dir, { requireImageOverride: true }).errors.join('\n')).toMatch(
      /image "selfstack" is not rewritten by the overlay's images: transformer/,
    );
  });

  it('duplicate objects (kustomize says so)', () => {
    edit('kustomization.yaml', '  - boxes.yaml', '  - boxes.yaml\n  - boxes.yaml');
    expect(errorsOf()).toMatch(/failed: .*boxes/s);
  });
});
