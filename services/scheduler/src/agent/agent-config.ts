// Client agent configuration (issue 26 item 1; docs/scheduler.md "Client agent"): the
// environment, plus an optional HCL file shaped like the anchor's agent configuration
// (top-level `datacenter`, `name`, `data_dir`, `bind_addr`, `ports { http }`, and a
// `client { ... }` block with `servers`, `state_dir`, `alloc_dir`, `node_class`,
// `node_pool`, `meta`, `options { "driver.allowlist" }`, `drivers`). The environment
// wins over the file, the file over the defaults. Parsed once at start-up; every problem
// is reported together.
import { hostname, networkInterfaces } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, emptyToUndefined, loadEnv, loadHclFile, logLevelEnv, parseDuration, type EnvSource, type HclDocument } from '@selfstack/config';

export const AGENT_DRIVERS = ['mock_driver', 'raw_exec'] as const;
export type DriverName = (typeof AGENT_DRIVERS)[number];

/** `mock` is accepted as the mock driver's short name (the anchor calls it `mock_driver`). */
function driverName(n: string): DriverName | undefined {
  const v = n.trim() === 'mock' ? 'mock_driver' : n.trim();
  return (AGENT_DRIVERS as readonly string[]).includes(v) ? (v as DriverName) : undefined;
}

const optional = z.preprocess(emptyToUndefined, z.string().optional());

const agentEnvSchema = z.object({
  LOG_LEVEL: logLevelEnv,
  SCHEDULER_AGENT_CONFIG: optional,
  SCHEDULER_AGENT_SERVERS: optional,
  SCHEDULER_AGENT_DATACENTER: optional,
  SCHEDULER_AGENT_NODE_NAME: optional,
  SCHEDULER_AGENT_NODE_CLASS: optional,
  SCHEDULER_AGENT_NODE_POOL: optional,
  SCHEDULER_AGENT_DATA_DIR: optional,
  SCHEDULER_AGENT_DRIVERS: optional,
  SCHEDULER_AGENT_RAW_EXEC_ROOT: optional,
  SCHEDULER_AGENT_HOST: optional,
  SCHEDULER_AGENT_PORT: optional,
  SCHEDULER_AGENT_ADVERTISE: optional,
  SCHEDULER_AGENT_META: optional,
  SCHEDULER_AGENT_WAIT: optional,
  /** Shared registration secret (the server's SCHEDULER_NODE_SECRET). */
  SCHEDULER_NODE_SECRET: optional,
  /** A management token, for servers with ACLs enabled and no node secret. */
  SCHEDULER_AGENT_TOKEN: optional,
});

export interface AgentConfig {
  logLevel: z.output<typeof logLevelEnv>;
  servers: string[];
  datacenter: string;
  nodeName: string;
  nodeClass: string;
  nodePool: string;
  meta: Record<string, string>;
  /** state (node identity, per-allocation state) */
  stateDir: string;
  /** allocation directories (task dirs, logs) */
  allocDir: string;
  drivers: DriverName[];
  /** raw_exec commands must resolve inside this directory ('' = anywhere). */
  rawExecRoot: string;
  host: string;
  port: number;
  /** host:port the servers use to reach this agent */
  advertise: string;
  registrationSecret: string;
  token: string;
  /** blocking-query wait for the allocation watch (ms) */
  watchWaitMs: number;
}

function externalAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

type Problems = { where: string; message: string }[];

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** An HCL block (`x { }` parses to a one-element list) or an object attribute (`x = { }`). */
function block(v: unknown): Record<string, unknown> {
  const b = Array.isArray(v) ? v[0] : v;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

function stringMap(v: unknown, where: string, problems: Problems): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(block(v))) {
    const s = str(x);
    if (s === undefined) problems.push({ where: `${where}.${k}`, message: 'must be a string' });
    else out[k] = s;
  }
  return out;
}

function listOf(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return v.map((x) => String(x));
  return String(v).split(',').map((s) => s.trim()).filter(Boolean);
}

/** Server addresses as base URLs: `host:port` gets `http://`. */
function serverUrl(s: string): string {
  const t = s.trim();
  return (/^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? t : `http://${t}`).replace(/\/+$/, '');
}

export async function loadAgentConfig(envSource: EnvSource, cwd = process.cwd()): Promise<AgentConfig> {
  const env = loadEnv(agentEnvSchema, envSource);
  const problems: Problems = [];
  let doc: HclDocument = {};
  const file = env.SCHEDULER_AGENT_CONFIG;
  if (file) doc = await loadHclFile(file);
  const where = file ?? 'config';
  const client = block(doc['client']);
  const ports = block(doc['ports']);
  const advertiseBlock = block(doc['advertise']);
  const options = stringMap(client['options'], `${where}: client.options`, problems);

  const dataDir = env.SCHEDULER_AGENT_DATA_DIR ?? str(doc['data_dir']) ?? join(cwd, '.data', 'agent');
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
  const stateDir = abs(str(client['state_dir']) ?? join(dataDir, 'client'));
  const allocDir = abs(str(client['alloc_dir']) ?? join(dataDir, 'alloc'));

  const servers = listOf(env.SCHEDULER_AGENT_SERVERS) ?? listOf(client['servers']) ?? ['127.0.0.1:4646'];
  for (const s of servers) {
    try {
      const t = s.trim();
      const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? t : `http://${t}`);
      if (u.hostname === '' || !/^https?:$/.test(u.protocol)) throw new Error('no host');
    } catch {
      problems.push({ where: 'servers', message: `not a server address: ${JSON.stringify(s)}` });
    }
  }
  if (servers.length === 0) problems.push({ where: 'servers', message: 'at least one server address is needed' });

  const driverList = listOf(env.SCHEDULER_AGENT_DRIVERS) ?? listOf(options['driver.allowlist']) ?? listOf(client['drivers']) ?? ['mock_driver', 'raw_exec'];
  const drivers: DriverName[] = [];
  for (const d of driverList) {
    const n = driverName(d);
    if (!n) problems.push({ where: 'drivers', message: `unknown driver ${JSON.stringify(d)} (known: mock, raw_exec)` });
    else if (!drivers.includes(n)) drivers.push(n);
  }
  // The anchor's `plugin "raw_exec" { config { enabled = false } }` turns it off.
  const rawExecPlugin = block(block(block(doc['plugin'])['raw_exec'])['config']);
  if (rawExecPlugin['enabled'] === false && drivers.includes('raw_exec')) drivers.splice(drivers.indexOf('raw_exec'), 1);
  const rawRoot = env.SCHEDULER_AGENT_RAW_EXEC_ROOT ?? str(client['raw_exec_root']);

  const portText = env.SCHEDULER_AGENT_PORT ?? str(ports['http']) ?? '4647';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push({ where: 'port', message: `must be a port number, got ${JSON.stringify(portText)}` });
  const host = env.SCHEDULER_AGENT_HOST ?? str(doc['bind_addr']) ?? '127.0.0.1';
  // Listening on every interface: advertise the host's first external address (a
  // container's own), as the anchor's default advertise address does.
  const advertise = env.SCHEDULER_AGENT_ADVERTISE ?? str(advertiseBlock['http']) ?? `${host === '0.0.0.0' ? externalAddress() : host}:${port}`;

  let watchWaitMs = 5 * 60_000;
  const waitText = env.SCHEDULER_AGENT_WAIT;
  if (waitText) {
    try {
      watchWaitMs = parseDuration(waitText);
    } catch {
      problems.push({ where: 'SCHEDULER_AGENT_WAIT', message: `not a duration: ${JSON.stringify(waitText)}` });
    }
  }

  const meta = { ...stringMap(client['meta'], `${where}: client.meta`, problems) };
  for (const kv of listOf(env.SCHEDULER_AGENT_META) ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) problems.push({ where: 'SCHEDULER_AGENT_META', message: `expected key=value, got ${JSON.stringify(kv)}` });
    else meta[kv.slice(0, eq)] = kv.slice(eq + 1);
  }

  if (rawRoot && drivers.includes('raw_exec')) {
    const rel = relative(abs(rawRoot), allocDir);
    if (rel.startsWith('..') || isAbsolute(rel)) problems.push({ where: 'raw_exec_root', message: `raw_exec is confined to ${abs(rawRoot)}, but the allocation directory ${allocDir} is outside it` });
  }
  if (problems.length > 0) throw new ConfigError('invalid client agent configuration:', problems);
  return {
    logLevel: env.LOG_LEVEL,
    servers: servers.map(serverUrl),
    datacenter: env.SCHEDULER_AGENT_DATACENTER ?? str(doc['datacenter']) ?? 'dc1',
    nodeName: env.SCHEDULER_AGENT_NODE_NAME ?? str(doc['name']) ?? hostname(),
    nodeClass: env.SCHEDULER_AGENT_NODE_CLASS ?? str(client['node_class']) ?? '',
    nodePool: env.SCHEDULER_AGENT_NODE_POOL ?? str(client['node_pool']) ?? 'default',
    meta,
    stateDir,
    allocDir,
    drivers,
    rawExecRoot: rawRoot ? abs(rawRoot) : '',
    host,
    port,
    advertise,
    registrationSecret: env.SCHEDULER_NODE_SECRET ?? '',
    token: env.SCHEDULER_AGENT_TOKEN ?? '',
    watchWaitMs,
  };
}
