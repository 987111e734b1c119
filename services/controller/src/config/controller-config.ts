// The controller/worker configuration file, in the anchor's (Boundary's) HCL shape:
//
//   controller { name = "c1"  graceful_shutdown_wait_duration = "10s"  database { url = "env://DATABASE_URL" } }
//   worker     { name = "w1"  initial_upstreams = ["127.0.0.1:9201"] }
//   listener "tcp" { address = "0.0.0.0:9200"  purpose = "api" }
//   listener "tcp" { address = "0.0.0.0:9201"  purpose = "cluster" }
//   listener "tcp" { address = "0.0.0.0:9203"  purpose = "ops" }
//
// One process runs a controller, a worker, or both. Every problem is reported at start-up
// with the file name (spec: "Invalid configuration fails at start with a clear message").
import { z } from 'zod';
import { ConfigError, loadHclFile, parseDuration, parseHcl, validateHcl, type ConfigProblem } from '@selfstack/config';

export const LISTENER_PURPOSES = ['api', 'cluster', 'ops', 'proxy'] as const;
export type ListenerPurpose = (typeof LISTENER_PURPOSES)[number];

/** Default ports per purpose (Boundary's: api 9200, cluster 9201, proxy 9202, ops 9203). */
export const DEFAULT_PORTS: Readonly<Record<ListenerPurpose, number>> = { api: 9200, cluster: 9201, proxy: 9202, ops: 9203 };

const durationString = z.union([z.string(), z.number()]).transform((value, ctx) => {
  try {
    return typeof value === 'number' ? value * 1000 : parseDuration(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

const oneBlock = <T extends z.ZodType>(inner: T) =>
  z.array(inner).max(1, { message: 'block may appear only once' }).optional().transform((blocks) => blocks?.[0]);

const listenerSchema = z.object({
  purpose: z.enum(LISTENER_PURPOSES, { message: `purpose must be one of ${LISTENER_PURPOSES.join(', ')}` }),
  address: z.string().optional(),
  tls_disable: z.boolean().optional(),
  max_request_size: z.number().int().optional(),
});

const fileSchema = z.object({
  disable_mlock: z.boolean().optional(),
  controller: oneBlock(
    z.object({
      name: z.string().min(1, 'controller name must not be empty'),
      description: z.string().optional(),
      graceful_shutdown_wait_duration: durationString.optional(),
      api_token: z.string().optional(),
      database: oneBlock(z.object({ url: z.string().min(1) })),
    }),
  ),
  worker: oneBlock(
    z.object({
      name: z.string().min(1, 'worker name must not be empty'),
      description: z.string().optional(),
      initial_upstreams: z.array(z.string().min(1)).optional(),
      graceful_shutdown_wait_duration: durationString.optional(),
    }),
  ),
  listener: z.record(z.string(), z.array(listenerSchema)).optional(),
});

export interface ListenerConfig {
  purpose: ListenerPurpose;
  host: string;
  port: number;
  maxRequestBytes?: number;
}

export interface ControllerRoleConfig {
  name: string;
  description?: string;
  /** 0 = disabled (the anchor's default): shutdown starts at once. */
  gracefulShutdownWaitMs: number;
  databaseUrl?: string;
  /** Bearer token required by the sessions API when set. */
  apiToken?: string;
}

export interface WorkerRoleConfig {
  name: string;
  description?: string;
  initialUpstreams: string[];
  gracefulShutdownWaitMs: number;
}

export interface ServerConfig {
  file: string;
  controller?: ControllerRoleConfig;
  worker?: WorkerRoleConfig;
  listeners: Partial<Record<ListenerPurpose, ListenerConfig>>;
}

/** Boundary's `env://NAME` and `file://path` indirections for secrets in config files. */
function resolveIndirection(value: string, env: Readonly<Record<string, string | undefined>>, where: string, problems: ConfigProblem[]): string | undefined {
  if (value.startsWith('env://')) {
    const name = value.slice('env://'.length);
    const resolved = env[name];
    if (resolved === undefined || resolved === '') {
      problems.push({ where, message: `environment variable ${name} is not set` });
      return undefined;
    }
    return resolved;
  }
  return value;
}

/** Splits `host:port`, `:port`, `host` or `[v6]:port`; the port defaults per purpose. */
export function parseListenAddress(address: string | undefined, purpose: ListenerPurpose): { host: string; port: number } {
  const fallback = DEFAULT_PORTS[purpose];
  if (address === undefined || address === '') return { host: '127.0.0.1', port: fallback };
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  let host: string;
  let portText: string | undefined;
  if (v6) {
    host = v6[1]!;
    portText = v6[2];
  } else {
    const idx = address.lastIndexOf(':');
    if (idx === -1) {
      host = address;
    } else {
      host = address.slice(0, idx);
      portText = address.slice(idx + 1);
    }
  }
  if (host === '') host = '0.0.0.0';
  if (portText === undefined) return { host, port: fallback };
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) {
    throw new RangeError(`invalid listener address ${JSON.stringify(address)}: port must be a number between 0 and 65535`);
  }
  return { host, port: Number(portText) };
}

/** Validates a parsed document (hcl2json's shape) into a ServerConfig. */
export function buildServerConfig(doc: Record<string, unknown>, file: string, env: Readonly<Record<string, string | undefined>>): ServerConfig {
  const parsed = validateHcl(fileSchema, doc, file);
  const problems: ConfigProblem[] = [];

  const listeners: Partial<Record<ListenerPurpose, ListenerConfig>> = {};
  const seen = new Set<ListenerPurpose>();
  for (const [kind, blocks] of Object.entries(parsed.listener ?? {})) {
    if (kind !== 'tcp') {
      problems.push({ where: `${file}: listener "${kind}"`, message: 'only "tcp" listeners are supported' });
      continue;
    }
    blocks.forEach((block, i) => {
      const where = `${file}: listener.tcp.${i}`;
      if (seen.has(block.purpose)) {
        problems.push({ where, message: `more than one listener with purpose "${block.purpose}"` });
        return;
      }
      seen.add(block.purpose);
      try {
        const { host, port } = parseListenAddress(block.address, block.purpose);
        listeners[block.purpose] = { purpose: block.purpose, host, port, ...(block.max_request_size ? { maxRequestBytes: block.max_request_size } : {}) };
      } catch (err) {
        problems.push({ where, message: (err as Error).message });
      }
    });
  }

  let controller: ControllerRoleConfig | undefined;
  if (parsed.controller) {
    const c = parsed.controller;
    const databaseUrl = c.database ? resolveIndirection(c.database.url, env, `${file}: controller.database.url`, problems) : env.DATABASE_URL;
    const apiToken = c.api_token === undefined ? undefined : resolveIndirection(c.api_token, env, `${file}: controller.api_token`, problems);
    if (!databaseUrl) problems.push({ where: `${file}: controller.database`, message: 'a controller needs a database (database { url = "..." } or DATABASE_URL)' });
    if (!listeners.cluster) problems.push({ where: `${file}: controller`, message: 'a controller needs a listener with purpose "cluster" for its workers' });
    controller = {
      name: c.name,
      ...(c.description !== undefined ? { description: c.description } : {}),
      gracefulShutdownWaitMs: c.graceful_shutdown_wait_duration ?? 0,
      ...(databaseUrl ? { databaseUrl } : {}),
      ...(apiToken ? { apiToken } : {}),
    };
  }

  let worker: WorkerRoleConfig | undefined;
  if (parsed.worker) {
    const w = parsed.worker;
    let upstreams = w.initial_upstreams ?? [];
    if (upstreams.length === 0 && listeners.cluster) {
      // Controller and worker in one process: the worker dials its own controller.
      const own = listeners.cluster;
      upstreams = [`${own.host === '0.0.0.0' ? '127.0.0.1' : own.host}:${own.port}`];
    }
    if (upstreams.length === 0) {
      problems.push({ where: `${file}: worker.initial_upstreams`, message: 'a worker needs at least one upstream (a controller cluster address)' });
    }
    worker = {
      name: w.name,
      ...(w.description !== undefined ? { description: w.description } : {}),
      initialUpstreams: upstreams,
      gracefulShutdownWaitMs: w.graceful_shutdown_wait_duration ?? 0,
    };
  }

  if (!controller && !worker) problems.push({ where: file, message: 'configuration has neither a controller nor a worker block' });
  if (problems.length > 0) throw new ConfigError(`invalid configuration in ${file}:`, problems);
  return { file, ...(controller ? { controller } : {}), ...(worker ? { worker } : {}), listeners };
}

export async function parseServerConfig(text: string, file: string, env: Readonly<Record<string, string | undefined>>): Promise<ServerConfig> {
  return buildServerConfig(await parseHcl(text, file), file, env);
}

export async function loadServerConfig(path: string, env: Readonly<Record<string, string | undefined>>): Promise<ServerConfig> {
  return buildServerConfig(await loadHclFile(path), path, env);
}

/**
 * The health endpoint's precondition (spec: "the instance runs a controller, has a
 * listener with purpose api, and has a listener with purpose ops"). A worker with an ops
 * listener also serves it, as the anchor does, to report worker_process_info.
 */
export function healthExposed(config: ServerConfig): boolean {
  if (!config.listeners.ops) return false;
  if (config.controller && config.listeners.api) return true;
  return config.worker !== undefined && config.controller === undefined;
}
