// docker-compose.yml, checked without a Docker engine: the structure compose relies on
// (dependencies, health checks, env, ports, mounts) and its agreement with the gateway
// config and the Dockerfile.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { find, loadNginx, one } from './nginx-config';

const ROOT = resolve(__dirname, '..', '..');

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  command?: string[] | string;
  environment?: Record<string, string>;
  expose?: string[];
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

// Compose's `${VAR:-default}` interpolation, with every variable unset.
const interpolate = (v: string) => v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
const services = compose.services;
const APP = ['secrets', 'scheduler', 'boxes', 'registry', 'controller'] as const;
const PORTS: Record<(typeof APP)[number], number> = { secrets: 8200, scheduler: 4646, boxes: 3100, registry: 3200, controller: 9200 };

describe('docker-compose.yml', () => {
  it('declares the whole stack', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['boxes', 'controller', 'gateway', 'gateway-tls', 'migrate', 'postgres', 'redis', 'registry', 'scheduler', 'scheduler-agent', 'secrets', 'worker'].sort(),
    );
  });

  it('runs a scheduler client agent after the scheduler is healthy, its state on a volume', () => {
    const s = services['scheduler-agent']!;
    expect(s.build?.args?.SERVICE).toBe('scheduler-agent');
    expect(s.depends_on?.scheduler?.condition).toBe('service_healthy');
    expect(s.environment?.SCHEDULER_AGENT_SERVERS).toBe('scheduler:4646');
    expect(s.expose).toContain(s.environment?.SCHEDULER_AGENT_PORT);
    expect(s.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${s.environment?.SCHEDULER_AGENT_PORT}/v1/agent/health`);
    expect(s.volumes?.some((v) => v.endsWith(`:${s.environment?.SCHEDULER_AGENT_DATA_DIR}`))).toBe(true);
    // The agent never needs the database or Redis: it talks to the scheduler's API only.
    expect(s.environment?.DATABASE_URL).toBeUndefined();
  });

  it('health-checks postgres with pg_isready and redis with a ping', () => {
    expect(services.postgres?.healthcheck?.test.slice(0, 2)).toEqual(['CMD', 'pg_isready']);
    expect(services.redis?.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('runs migrations once, after postgres is healthy, and services only after they succeeded', () => {
    expect(services.migrate?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(services.migrate?.command).toEqual(['node', 'dist/migrate/main.js', '--dir', 'prisma/migrations']);
    expect(services.migrate?.environment?.DATABASE_URL).toMatch(/@postgres:5432\//);
    for (const name of APP) {
      const deps = services[name]?.depends_on ?? {};
      expect({ name, c: deps.migrate?.condition }).toEqual({ name, c: 'service_completed_successfully' });
      expect({ name, c: deps.postgres?.condition }).toEqual({ name, c: 'service_healthy' });
      expect({ name, c: deps.redis?.condition }).toEqual({ name, c: 'service_healthy' });
    }
  });

  it.each([...APP, 'worker'])('%s gets DATABASE_URL and REDIS_URL pointing at the stack', (name) => {
    const env = services[name]?.environment ?? {};
    expect(new URL(interpolate(env.DATABASE_URL ?? '')).host).toBe('postgres:5432');
    expect(new URL(interpolate(env.REDIS_URL ?? '')).host).toBe('redis:6379');
  });

  it.each(APP)('%s is built from the one Dockerfile with its SERVICE, listens on its port and is health-checked', (name) => {
    const s = services[name]!;
    expect(s.build?.dockerfile).toBe('infra/docker/Dockerfile');
    expect(existsSync(join(ROOT, s.build!.context, s.build!.dockerfile))).toBe(true);
    expect(s.build?.args?.SERVICE).toBe(name);
    expect(Number(s.environment?.PORT)).toBe(PORTS[name]);
    expect(s.expose).toContain(String(PORTS[name]));
    const probe = s.healthcheck?.test.join(' ') ?? '';
    const expected = name === 'controller' ? 'http://127.0.0.1:9203/health' : `http://127.0.0.1:${PORTS[name]}/healthz`;
    expect(probe).toContain(expected);
  });

  it('runs the controller and a worker from the mounted HCL configs', () => {
    for (const [name, file] of [['controller', 'controller.hcl'], ['worker', 'worker.hcl']] as const) {
      const s = services[name]!;
      const target = s.environment?.CONTROLLER_CONFIG;
      expect(target).toBe(`/etc/controller/${file}`);
      expect(s.volumes?.some((v) => v.startsWith(`./infra/controller/${file}:${target}`))).toBe(true);
    }
    expect(services.worker?.build?.args?.SERVICE).toBe('controller');
    expect(services.worker?.depends_on?.controller?.condition).toBe('service_healthy');
    // The worker dials the controller's cluster listener by its compose name.
    expect(readFileSync(join(ROOT, 'infra', 'controller', 'worker.hcl'), 'utf8')).toMatch(/initial_upstreams\s*=\s*\["controller:9201"\]/);
  });

  it('publishes each host port once', () => {
    const published = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => interpolate(p).split(':').slice(-2)[0]!));
    expect(published.length).toBeGreaterThan(0);
    expect(new Set(published).size).toBe(published.length);
  });

  it('mounts only files that exist in the repository and declared named volumes', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = interpolate(v).split(':')[0]!;
        if (source.startsWith('.') || source.startsWith('/')) {
          expect({ name, source, exists: existsSync(join(ROOT, source)) }).toEqual({ name, source, exists: true });
        } else {
          expect({ name, source, declared: source in (compose.volumes ?? {}) }).toEqual({ name, source, declared: true });
        }
      }
    }
    expect(statSync(join(ROOT, 'infra', 'nginx', 'selfstack')).isDirectory()).toBe(true);
  });

  it('starts the gateway after every API is healthy, with the repo nginx config', () => {
    const g = services.gateway!;
    for (const name of APP) expect(g.depends_on?.[name]?.condition).toBe('service_healthy');
    expect(g.depends_on?.['gateway-tls']?.condition).toBe('service_completed_successfully');
    expect(g.volumes).toEqual(
      expect.arrayContaining(['./infra/nginx/nginx.conf:/etc/nginx/nginx.conf:ro', './infra/nginx/selfstack:/etc/nginx/selfstack:ro']),
    );
    // The TLS material lands where nginx.conf looks for it (relative to /etc/nginx).
    const tlsMount = g.volumes?.find((v) => v.endsWith(':/etc/nginx/tls:ro'));
    expect(tlsMount).toBeDefined();
    const tlsServer = find(one(loadNginx(), 'http')?.block, 'server').find((s) => one(s.block, 'ssl_certificate'));
    expect(one(tlsServer?.block, 'ssl_certificate')?.args[0]).toBe('tls/tls.crt');
    // Every port nginx listens on is published by the gateway container.
    const listens = find(one(loadNginx(), 'http')?.block, 'server').map((s) => one(s.block, 'listen')!.args[0]!);
    expect((g.ports ?? []).map((p) => p.split(':').pop()).sort()).toEqual([...listens].sort());
  });

  it('agrees with the gateway upstreams on service names and ports', () => {
    const upstreams = find(one(loadNginx(), 'http')?.block, 'upstream');
    for (const u of upstreams) {
      const [host, port] = one(u.block, 'server')!.args[0]!.split(':');
      const s = services[host!];
      expect({ upstream: u.args[0], service: host, exposes: s?.expose?.includes(port!) }).toEqual({
        upstream: u.args[0],
        service: host,
        exposes: true,
      });
    }
  });
});
