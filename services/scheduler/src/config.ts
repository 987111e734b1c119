// Configuration from the environment, parsed once (docs/scheduler.md "Configuration").
import { z } from 'zod';
import { booleanEnv, durationEnv, integerEnv, loadEnv, sharedEnv, type EnvSource } from '@selfstack/config';

const optionalString = z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), z.string().optional());

/** `SCHEDULER_PEER_REGIONS=eu=http://eu-server:4646,us=http://us-server:4646` */
const peersEnv = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const out: Record<string, string> = {};
      if (v === undefined) return out;
      for (const part of v.split(',').map((p) => p.trim()).filter(Boolean)) {
        const eq = part.indexOf('=');
        const name = part.slice(0, eq);
        const url = part.slice(eq + 1);
        try {
          if (eq <= 0 || !/^https?:$/.test(new URL(url).protocol)) throw new Error('bad');
        } catch {
          ctx.addIssue({ code: 'custom', message: `expected region=http(s)://host:port, got ${JSON.stringify(part)}` });
          continue;
        }
        out[name] = url;
      }
      return out;
    }),
);

export const schedulerEnvSchema = z.object({
  ...sharedEnv({ port: 4646 }),
  SCHEDULER_REGION: z.preprocess((v) => (v === '' ? undefined : v), z.string().regex(/^[a-zA-Z0-9-]+$/).default('global')),
  SCHEDULER_DATACENTER: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).default('dc1')),
  SCHEDULER_NODE_NAME: optionalString,
  SCHEDULER_ADVERTISE_ADDR: optionalString,
  SCHEDULER_ACL_ENABLED: booleanEnv(false),
  SCHEDULER_NODE_SECRET: optionalString,
  SCHEDULER_PEER_REGIONS: peersEnv,
  // Processes serving the port (node:cluster): `auto` = one per CPU. More than one needs
  // Redis, which carries wake-ups and events between them.
  SCHEDULER_WORKERS: z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === '' ? undefined : v.trim().toLowerCase() === 'auto' ? 'auto' : Number(v)) : v),
    z.union([z.literal('auto'), z.number({ message: 'must be a whole number from 1 to 64, or auto' }).int().min(1).max(64)]).default(1),
  ),
  // Evaluations this process schedules concurrently (docs/scheduler.md "Scheduling");
  // 0 = this process serves the API only and leaves scheduling to other replicas.
  SCHEDULER_ENGINE_WORKERS: z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === '' ? undefined : Number(v)) : v),
    z.number({ message: 'must be a whole number from 0 to 64' }).int().min(0).max(64).default(2),
  ),
  // Quiet time (ms) after which a process holding many blocking queries collects V8's young
  // generation (libs/http-kit idle-gc.ts; docs/scheduler.md "Configuration"); 0 = off.
  SCHEDULER_IDLE_GC_MS: z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === '' ? undefined : Number(v)) : v),
    z.number({ message: 'must be a whole number of milliseconds (0 = off)' }).int().min(0).max(60_000).default(20),
  ),
  // Event stream (issue 27; docs/scheduler.md "Event stream"): the durable backlog keeps
  // the newest SCHEDULER_EVENT_RETENTION_EVENTS events and none older than
  // SCHEDULER_EVENT_RETENTION_AGE (0 = no age limit), pruned every
  // SCHEDULER_EVENT_PRUNE_INTERVAL; heartbeats every SCHEDULER_EVENT_HEARTBEAT (the
  // anchor's 30 s); a consumer that does not drain for SCHEDULER_EVENT_SLOW_CONSUMER is
  // ended with an error line naming the index to resume from; under a steady stream of
  // writes, new frames are read and sent at most once per SCHEDULER_EVENT_BATCH (one
  // socket write per stream for all of them; 0 = one read and write per wake-up).
  SCHEDULER_EVENT_RETENTION_EVENTS: integerEnv(100_000, { min: 1, max: 100_000_000, what: 'a whole number of events (at least 1)' }),
  SCHEDULER_EVENT_RETENTION_AGE: durationEnv('24h'),
  SCHEDULER_EVENT_PRUNE_INTERVAL: durationEnv('30s'),
  SCHEDULER_EVENT_HEARTBEAT: durationEnv('30s'),
  SCHEDULER_EVENT_SLOW_CONSUMER: durationEnv('30s'),
  SCHEDULER_EVENT_BATCH: durationEnv('25ms'),
  // Node heartbeats (issue 26; docs/scheduler.md "Nodes and heartbeats"), the anchor's
  // min_heartbeat_ttl, max_heartbeats_per_second, heartbeat_grace and failover TTL: a node
  // is given max(TTL_MIN, live nodes / MAX_PER_SECOND s) and goes down once that plus the
  // grace passes without a heartbeat; a server waits FAILOVER after starting before it
  // declares any node down.
  SCHEDULER_HEARTBEAT_TTL_MIN: durationEnv('10s'),
  SCHEDULER_HEARTBEAT_GRACE: durationEnv('10s'),
  SCHEDULER_HEARTBEAT_MAX_PER_SECOND: integerEnv(50, { min: 1, max: 100_000, what: 'a whole number of heartbeats a second (at least 1)' }),
  SCHEDULER_HEARTBEAT_FAILOVER: durationEnv('5m'),
}).superRefine((env, ctx) => {
  for (const key of ['SCHEDULER_EVENT_PRUNE_INTERVAL', 'SCHEDULER_EVENT_HEARTBEAT', 'SCHEDULER_EVENT_SLOW_CONSUMER', 'SCHEDULER_HEARTBEAT_TTL_MIN'] as const) {
    if (env[key] < 10) ctx.addIssue({ code: 'custom', path: [key], message: 'must be at least 10ms' });
  }
  if (env.SCHEDULER_EVENT_BATCH > 1000) ctx.addIssue({ code: 'custom', path: ['SCHEDULER_EVENT_BATCH'], message: 'must be at most 1s' });
  if (env.SCHEDULER_WORKERS !== 1 && !env.REDIS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['SCHEDULER_WORKERS'],
      message: 'more than one worker needs REDIS_URL (blocking queries and event streams are woken across processes through Redis)',
    });
  }
});

export type SchedulerEnv = z.output<typeof schedulerEnvSchema>;

export function loadSchedulerEnv(env: EnvSource): SchedulerEnv {
  return loadEnv(schedulerEnvSchema, env);
}

/** Held requests below which an idle collection is not worth its pause. */
export const IDLE_GC_MIN_HELD = 100;

/** The listener's idle collection (createListener's `idleGc`), off when the setting is 0. */
export function idleGcOptions(idleMs: number): { idleMs: number; minHeld: number } | undefined {
  return idleMs > 0 ? { idleMs, minHeld: IDLE_GC_MIN_HELD } : undefined;
}

/** How often a process's node lifecycle timers run: a fraction of the grace, within 100 ms..1 s. */
export function nodeSweepIntervalMs(graceMs: number): number {
  return Math.max(100, Math.min(1_000, Math.floor(graceMs / 2)));
}
