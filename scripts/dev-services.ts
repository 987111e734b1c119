// The pieces of `make dev` that do not need a database: which services exist, their
// ports and health URLs, the generated controller config, output prefixing and the
// health wait. Kept apart from scripts/dev.ts so they can be unit-tested.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parseHcl } from '@selfstack/config';

// `agent` is the scheduler's client agent (services/scheduler/src/agent/main.ts): one node
// that runs the scheduler's jobs (mock and raw_exec drivers, raw_exec confined to .data/).
export const SERVICE_NAMES = ['secrets', 'scheduler', 'agent', 'boxes', 'registry', 'controller'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** Default ports (../shared/ARCHITECTURE.md). The controller has three listeners. */
export const DEFAULT_PORTS = {
  secrets: 8200,
  scheduler: 4646,
  /** The scheduler's client agent (the anchor's client HTTP port is 4646 too; ours is beside it). */
  agent: 4647,
  boxes: 3100,
  registry: 3200,
  controllerApi: 9200,
  controllerCluster: 9201,
  controllerOps: 9203,
  /** The same-origin dev gateway (scripts/dev-gateway.ts), as nginx's path-prefix port. */
  gateway: 8080,
} as const;

export type PortMap = { -readonly [K in keyof typeof DEFAULT_PORTS]: number };

/** Every port shifted by `offset` (DEV_PORT_OFFSET), so two stacks can run side by side. */
export function portsWithOffset(offset: number): PortMap {
  const out = {} as PortMap;
  for (const [k, v] of Object.entries(DEFAULT_PORTS)) out[k as keyof PortMap] = v + offset;
  return out;
}

export interface DevService {
  readonly name: ServiceName;
  /** services/<name>/src/main.ts, relative to the repository root. */
  readonly entry: string;
  /** Ports that must be free before start. */
  readonly ports: readonly number[];
  /** Polled until it answers 200. */
  readonly healthUrl: string;
  /** Rows for the address table. */
  readonly addresses: readonly { readonly label: string; readonly url: string }[];
  /** Service-specific env, merged over the common env. */
  readonly env: Readonly<Record<string, string>>;
}

export interface DevPlanInput {
  readonly root: string;
  readonly ports: PortMap;
  readonly host: string;
  /** Path of the generated controller HCL file. */
  readonly controllerConfigPath: string;
  /** process.env of `make dev`, for pass-through variables. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The dev data directory (DEV_DATA_DIR; default <root>/.data): the agent's state and
   * allocations live under it, and raw_exec is confined to it. */
  readonly dataDir?: string;
}

export function planServices(input: DevPlanInput): DevService[] {
  const { ports, host } = input;
  const http = (port: number, path = '') => `http://${host}:${port}${path}`;
  const simple = (name: ServiceName, port: number, label: string): DevService => ({
    name,
    entry: join('services', name, 'src', 'main.ts'),
    ports: [port],
    healthUrl: http(port, '/healthz'),
    addresses: [{ label, url: http(port) }],
    env: { PORT: String(port) },
  });

  const secretsEnv: Record<string, string> = { PORT: String(ports.secrets), SECRETS_DEV_MODE: '1' };
  const rootToken = input.env.SECRETS_DEV_ROOT_TOKEN;
  if (rootToken) secretsEnv.SECRETS_DEV_ROOT_TOKEN = rootToken;

  // The registry's admin API (namespaces, publish tokens) needs a bootstrap token; in dev we
  // take REGISTRY_ADMIN_TOKEN when set, else make one and show it in the address table.
  const registryAdminToken = input.env.REGISTRY_ADMIN_TOKEN || `dev-${randomBytes(18).toString('base64url')}`;
  const registry = simple('registry', ports.registry, 'registry (Terraform registry)');

  return [
    { ...simple('secrets', ports.secrets, 'secrets (Vault API)'), env: secretsEnv },
    simple('scheduler', ports.scheduler, 'scheduler (Nomad API)'),
    {
      name: 'agent',
      entry: join('services', 'scheduler', 'src', 'agent', 'main.ts'),
      ports: [ports.agent],
      // Healthy once its node is registered with the scheduler (ready).
      healthUrl: http(ports.agent, '/v1/agent/health'),
      addresses: [{ label: 'scheduler client agent', url: http(ports.agent) }],
      env: {
        SCHEDULER_AGENT_SERVERS: `${host}:${ports.scheduler}`,
        SCHEDULER_AGENT_HOST: host,
        SCHEDULER_AGENT_PORT: String(ports.agent),
        SCHEDULER_AGENT_DATA_DIR: join(input.dataDir ?? join(input.root, '.data'), 'agent'),
        SCHEDULER_AGENT_DRIVERS: 'mock,raw_exec',
        SCHEDULER_AGENT_RAW_EXEC_ROOT: input.dataDir ?? join(input.root, '.data'),
        SCHEDULER_AGENT_NODE_NAME: 'dev-agent',
      },
    },
    simple('boxes', ports.boxes, 'boxes (Vagrant Cloud API)'),
    {
      ...registry,
      env: { ...registry.env, REGISTRY_ADMIN_TOKEN: registryAdminToken },
      addresses: [...registry.addresses, { label: 'registry admin token', url: registryAdminToken }],
    },
    {
      name: 'controller',
      entry: join('services', 'controller', 'src', 'main.ts'),
      ports: [ports.controllerApi, ports.controllerCluster, ports.controllerOps],
      // Boundary-style: health lives on the ops listener at /health, not /healthz.
      healthUrl: http(ports.controllerOps, '/health'),
      addresses: [
        { label: 'controller api', url: http(ports.controllerApi) },
        { label: 'controller cluster', url: `${host}:${ports.controllerCluster}` },
        { label: 'controller ops (/health)', url: http(ports.controllerOps) },
      ],
      env: { PORT: String(ports.controllerApi), CONTROLLER_CONFIG: input.controllerConfigPath },
    },
  ];
}

/** Splits the plan into services whose entry file exists and those not written yet. */
export function partitionExisting(root: string, services: readonly DevService[]) {
  const present: DevService[] = [];
  const missing: DevService[] = [];
  for (const s of services) (existsSync(join(root, s.entry)) ? present : missing).push(s);
  return { present, missing };
}

export interface ControllerKeys {
  readonly root: string;
  readonly workerAuth: string;
  readonly recovery: string;
}

export function newControllerKeys(): ControllerKeys {
  const key = () => randomBytes(32).toString('base64');
  return { root: key(), workerAuth: key(), recovery: key() };
}

/**
 * Reads the KMS keys of a previously generated controller config so regenerating the
 * file (ports may change between runs) keeps what the controller encrypted readable.
 */
export async function keysFromExisting(text: string, filename: string): Promise<ControllerKeys | undefined> {
  const doc = await parseHcl(text, filename).catch(() => undefined);
  const aead = (doc?.kms as { aead?: { purpose?: unknown; key?: unknown }[] } | undefined)?.aead;
  if (!Array.isArray(aead)) return undefined;
  const find = (purpose: string) => {
    const k = aead.find((b) => b.purpose === purpose)?.key;
    return typeof k === 'string' && k.length > 0 ? k : undefined;
  };
  const root = find('root');
  const workerAuth = find('worker-auth');
  const recovery = find('recovery');
  return root && workerAuth && recovery ? { root, workerAuth, recovery } : undefined;
}

/**
 * Boundary-shaped config for one process running a controller and a worker, with the
 * api, cluster and ops listeners (spec: the health endpoint needs a controller, an
 * `api` listener and an `ops` listener).
 */
export function renderControllerHcl(options: { host: string; ports: PortMap; keys: ControllerKeys }): string {
  const { host, ports, keys } = options;
  return `# Generated by \`make dev\` (scripts/dev.ts) on every run; edit scripts/dev-services.ts instead.
disable_mlock = true

controller {
  name        = "dev-controller"
  description = "make dev controller"
  # Health answers 503 during this wait before shutdown starts (spec: gateway health).
  graceful_shutdown_wait_duration = "0s"
  database {
    url = "env://DATABASE_URL"
  }
}

worker {
  name              = "dev-worker"
  description       = "make dev worker"
  public_addr       = "${host}"
  initial_upstreams = ["${host}:${ports.controllerCluster}"]
}

listener "tcp" {
  address     = "${host}:${ports.controllerApi}"
  purpose     = "api"
  tls_disable = true
}

listener "tcp" {
  address = "${host}:${ports.controllerCluster}"
  purpose = "cluster"
}

listener "tcp" {
  address     = "${host}:${ports.controllerOps}"
  purpose     = "ops"
  tls_disable = true
}

kms "aead" {
  purpose   = "root"
  aead_type = "aes-gcm"
  key       = "${keys.root}"
  key_id    = "global_root"
}

kms "aead" {
  purpose   = "worker-auth"
  aead_type = "aes-gcm"
  key       = "${keys.workerAuth}"
  key_id    = "global_worker-auth"
}

kms "aead" {
  purpose   = "recovery"
  aead_type = "aes-gcm"
  key       = "${keys.recovery}"
  key_id    = "global_recovery"
}
`;
}

const COLORS = [36, 33, 35, 32, 34, 91, 96];

/**
 * Copies every line of `stream` to `write`, prefixed with the padded service name
 * (coloured when the terminal is a TTY), like docker compose does.
 */
export function prefixLines(
  stream: Readable,
  name: string,
  options: { width: number; color: boolean; index: number; write: (line: string) => void },
): Promise<void> {
  const label = name.padEnd(options.width);
  const prefix = options.color ? `\x1b[${COLORS[options.index % COLORS.length]}m${label} |\x1b[0m ` : `${label} | `;
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  rl.on('line', (line) => options.write(`${prefix}${line}\n`));
  return new Promise((resolveDone) => rl.once('close', resolveDone));
}

/**
 * One GET with node:http, answering the status. Not `fetch`: it refuses the ports on the
 * WHATWG "bad ports" list (6000, 6665-6669, 10080, ...) before connecting, and a service may
 * well listen on one of them (a DEV_PORT_OFFSET of 1000 puts the registry on 6000).
 */
function probe(url: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
  });
}

export type HealthOutcome = { ok: true; ms: number } | { ok: false; reason: string };

/**
 * Polls `url` until it answers 200, the deadline passes, or `exited()` reports that the
 * process died (no point waiting for a corpse).
 */
export async function waitForHealthy(
  url: string,
  options: { timeoutMs: number; intervalMs?: number; exited?: () => string | undefined },
): Promise<HealthOutcome> {
  const started = Date.now();
  let last = 'no answer yet';
  for (;;) {
    const dead = options.exited?.();
    if (dead) return { ok: false, reason: dead };
    try {
      const status = await probe(url, 2000);
      if (status === 200) return { ok: true, ms: Date.now() - started };
      last = `HTTP ${status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() - started >= options.timeoutMs) return { ok: false, reason: `not healthy after ${options.timeoutMs} ms (${last})` };
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
  }
}

/** Plain-text table; columns sized to content. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
