// scripts/k8s-validate.ts against the real manifests, and against broken copies to
// show each check fires.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCopies, K8S_DIR, strategicMerge, validateKustomization } from '../../scripts/k8s-validate';
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

  it('base has a Deployment and Service per API, the migration Job and the config maps', () => {
    const { rendered } = validateKustomization(join(K8S_DIR, 'base'), { requireImageOverride: false });
    const names = (kind: string) => rendered.resources.filter((r) => r.kind === kind).map((r) => r.metadata?.name).sort();
    expect(names('Deployment')).toEqual(['boxes', 'controller', 'gateway', 'registry', 'scheduler', 'secrets', 'worker']);
    expect(names('Service')).toEqual(['boxes', 'controller', 'gateway', 'registry', 'scheduler', 'secrets']);
    expect(names('Job')).toEqual(['migrate']);
    expect(rendered.generated.map((g) => g.name).sort()).toEqual(['controller-config', 'gateway-nginx', 'gateway-nginx-selfstack']);
  });

  it('dev is self-contained; prod expects the database and redis Secrets from the operator', () => {
    expect(validateKustomization(join(K8S_DIR, 'overlays/dev'), { requireImageOverride: true }).externalSecrets).toEqual([]);
    expect(validateKustomization(join(K8S_DIR, 'overlays/prod'), { requireImageOverride: true }).externalSecrets).toEqual([
      'selfstack-database',
      'selfstack-redis',
    ]);
  });

  it('overlays rewrite the image and apply their patches', () => {
    const prod = validateKustomization(join(K8S_DIR, 'overlays/prod'), { requireImageOverride: true }).rendered;
    const dep = (n: string) => prod.resources.find((r) => r.kind === 'Deployment' && r.metadata?.name === n)!;
    expect(dep('registry').spec?.replicas).toBe(2);
    const sched = (dep('scheduler').spec?.template as any).spec.containers[0];
    expect(sched.image).toBe('ghcr.io/selfstack/selfstack:0.1.0');
    expect(sched.resources.requests.memory).toBe('256Mi');
    // The patch merged into the container; it did not replace its env or ports.
    expect(sched.env.map((e: { name: string }) => e.name)).toContain('DATABASE_URL');
    expect(prod.resources.find((r) => r.kind === 'Service' && r.metadata?.name === 'gateway')?.spec?.type).toBe('LoadBalancer');
    expect(prod.namespace).toBe('selfstack');
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
    const { rendered } = validateKustomization(join(K8S_DIR, 'base'), { requireImageOverride: false });
    const keys = rendered.generated.find((g) => g.name === 'gateway-nginx-selfstack')?.keys ?? [];
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

  it('a missing resource file', () => {
    edit('kustomization.yaml', '  - boxes.yaml', '  - boxes.yaml\n  - nope.yaml');
    expect(errorsOf()).toMatch(/resource nope\.yaml does not exist/);
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
    expect(errors).toMatch(/ConfigMap controller-config has no key workers\.hcl/);
    expect(errors).toMatch(/CONTROLLER_CONFIG \/etc\/controller\/worker\.hcl is not provided/);
  });

  it('a patch whose target does not exist, and an unknown kustomization field', () => {
    writeFileSync(join(dir, 'patch.yaml'), 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ghost\nspec:\n  replicas: 3\n');
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      'resources:\n  - base\npatches:\n  - path: patch.yaml\n  - path: missing.yaml\npatchesJson: []\n',
    );
    const errors = validateKustomization(dir, { requireImageOverride: false }).errors.join('\n');
    expect(errors).toMatch(/patch patch\.yaml targets Deployment\/ghost, which is not among the resources/);
    expect(errors).toMatch(/patch missing\.yaml does not exist/);
    expect(errors).toMatch(/unsupported or misspelt field "patchesJson"/);
  });

  it('an overlay that forgets to set the image', () => {
    writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n  - base\n');
    expect(validateKustomization(dir, { requireImageOverride: true }).errors.join('\n')).toMatch(
      /image "selfstack" is not rewritten by the overlay's images: transformer/,
    );
  });

  it('missing metadata.name and duplicate objects', () => {
    edit('migrate-job.yaml', 'name: migrate\n  labels', 'labels');
    edit('kustomization.yaml', '  - boxes.yaml', '  - boxes.yaml\n  - boxes.yaml');
    const errors = errorsOf();
    expect(errors).toMatch(/Job\/undefined: missing metadata\.name/);
    expect(errors).toMatch(/duplicate Deployment\/boxes/);
  });
});

describe('strategicMerge', () => {
  it('merges maps, merges named lists by name, replaces other lists', () => {
    const target = { a: 1, c: { x: [1, 2], y: 1 }, l: [{ name: 'a', v: 1 }, { name: 'b', v: 2 }] };
    const patch = { b: 2, c: { x: [3] }, l: [{ name: 'b', v: 3 }, { name: 'c', v: 4 }] };
    expect(strategicMerge(target, patch)).toEqual({
      a: 1,
      b: 2,
      c: { x: [3], y: 1 },
      l: [{ name: 'a', v: 1 }, { name: 'b', v: 3 }, { name: 'c', v: 4 }],
    });
  });
});
