// The client agent (issue 26 items 1-3): registers the node (initializing, then ready),
// heartbeats within the server's TTL, watches its allocations with blocking queries and
// runs them (AllocRunner), reporting client status in batches. The node's identity and
// every allocation's state live in the state directory: a restarted agent keeps its node
// ID and re-attaches to the tasks it left running.
import type { Logger } from '@selfstack/logger';
import type { AgentConfig } from './agent-config';
import type { AgentState, NodeIdentity } from './agent-state';
import { AllocRunner, type AllocUpdate } from './alloc-runner';
import type { Driver } from './drivers/driver.types';
import { fingerprint } from './fingerprint';
import { ServerUnavailableError, type ServerClient } from './server-client';
import { sleep } from './sleep';

type Json = Record<string, unknown>;

const TERMINAL_CLIENT = new Set(['complete', 'failed', 'lost']);

export interface ClientAgentDeps {
  config: AgentConfig;
  logger: Logger;
  state: AgentState;
  server: ServerClient;
  drivers: ReadonlyMap<string, Driver>;
}

export function createClientAgent(deps: ClientAgentDeps) {
  const { config, logger, state, server } = deps;
  const identity: NodeIdentity = state.identity();
  const runners = new Map<string, AllocRunner>();
  const pending = new Map<string, AllocUpdate>();
  const stopping = new AbortController();
  let flushTimer: NodeJS.Timeout | undefined;
  let registered = false;
  let status: 'initializing' | 'ready' = 'initializing';
  const loops: Promise<void>[] = [];

  const nodeAuth = (): Record<string, string> => ({ 'X-Nomad-Token': identity.secret });
  const registerAuth = (): Record<string, string> => ({
    ...(config.registrationSecret ? { 'X-Scheduler-Node-Secret': config.registrationSecret } : {}),
    ...(config.token ? { 'X-Nomad-Token': config.token } : {}),
  });

  function nodeBody(nodeStatus: string): Json {
    const fp = fingerprint({ allocDir: config.allocDir, drivers: config.drivers, nodeName: config.nodeName });
    return {
      Node: {
        ID: identity.id,
        SecretID: identity.secret,
        Name: config.nodeName,
        Datacenter: config.datacenter,
        NodeClass: config.nodeClass,
        NodePool: config.nodePool,
        HTTPAddr: config.advertise,
        TLSEnabled: false,
        Attributes: { ...fp.Attributes, 'nomad.advertise.address': config.advertise },
        NodeResources: fp.NodeResources,
        ReservedResources: { Cpu: { CpuShares: 0 }, Memory: { MemoryMB: 0 }, Disk: { DiskMB: 0 }, Networks: { ReservedHostPorts: '' } },
        Drivers: fp.Drivers,
        Meta: config.meta,
        Status: nodeStatus,
      },
    };
  }

  async function register(nodeStatus: string): Promise<void> {
    const res = await server.request('PUT', '/v1/internal/node/register', { body: nodeBody(nodeStatus), headers: registerAuth() });
    if (res.status !== 200) throw new Error(`node registration refused: ${res.status} ${res.text}`);
  }

  /** Registers (initializing, then ready once the drivers are fingerprinted), retrying. */
  async function registerUntilDone(): Promise<void> {
    let delay = 250;
    while (!stopping.signal.aborted) {
      try {
        if (status === 'initializing') await register('initializing');
        status = 'ready';
        await register('ready');
        registered = true;
        logger.info('node registered', { node: identity.id, name: config.nodeName, servers: config.servers });
        return;
      } catch (err) {
        logger.warn('node registration failed; retrying', { err: err instanceof Error ? err.message : String(err), inMs: delay });
        await sleep(delay, stopping.signal);
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }

  /** Heartbeats within the TTL the server answers; re-registers when the server forgot us. */
  async function heartbeatLoop(): Promise<void> {
    let lostContact = false;
    while (!stopping.signal.aborted) {
      let nextMs = 5_000;
      try {
        const res = await server.request('PUT', `/v1/internal/node/${identity.id}/heartbeat`, { body: { Status: 'ready' }, headers: nodeAuth(), timeoutMs: 10_000 });
        if (lostContact) {
          // The server was away (restart): make sure it has us, fully, again.
          lostContact = false;
          await register('ready');
        }
        if (res.status === 200) {
          const ttlNs = Number(res.json<{ HeartbeatTTL?: number }>().HeartbeatTTL ?? 0);
          // Half the TTL leaves room for a slow request (the anchor heartbeats well within it).
          if (ttlNs > 0) nextMs = Math.max(50, Math.floor(ttlNs / 1e6 / 2));
        } else if ((res.status === 404 && res.text.trim() !== '') || (res.status === 403 && res.text.trim() === 'ACL token not found')) {
          // "node not found": purged, or a server with a fresh database. With ACLs on the
          // server resolves the token first, and a forgotten node's secret is no token.
          logger.warn('server does not know this node; registering again', { node: identity.id });
          await register('ready');
          nextMs = 100;
        } else if (res.status !== 404) {
          logger.warn('heartbeat refused', { status: res.status, body: res.text });
        }
      } catch (err) {
        lostContact = true;
        nextMs = 1_000;
        if (!(err instanceof ServerUnavailableError)) logger.warn('heartbeat failed', { err: err instanceof Error ? err.message : String(err) });
      }
      await sleep(nextMs, stopping.signal);
    }
  }

  function persistAndReport(u: AllocUpdate): void {
    pending.set(u.ID, structuredClone(u));
    if (!flushTimer) flushTimer = setTimeout(() => void flush(), 50);
  }

  /** Sends pending updates in one request; on a 4xx, one at a time (dropping what is refused). */
  async function flush(): Promise<void> {
    flushTimer = undefined;
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending.clear();
    const send = (allocs: AllocUpdate[]) => server.request('POST', `/v1/internal/node/${identity.id}/allocations`, { body: { Allocs: allocs }, headers: nodeAuth() });
    const requeue = (list: AllocUpdate[]) => {
      for (const u of list) if (!pending.has(u.ID)) pending.set(u.ID, u);
      if (!flushTimer && !stopping.signal.aborted) flushTimer = setTimeout(() => void flush(), 1_000);
    };
    try {
      const res = await send(batch);
      if (res.status === 200) return;
      if (res.status >= 500) return requeue(batch);
      for (const u of batch) {
        const one = await send([u]);
        if (one.status >= 500) requeue([u]);
        else if (one.status !== 200) logger.warn('allocation update refused', { alloc: u.ID, status: one.status, body: one.text });
      }
    } catch {
      requeue(batch);
    }
    if (pending.size > 0 && !flushTimer) flushTimer = setTimeout(() => void flush(), 50);
  }

  function runnerDeps() {
    return {
      drivers: deps.drivers,
      allocRoot: config.allocDir,
      persist: (r: Parameters<AgentState['saveAlloc']>[0]) => state.saveAlloc(r),
      report: persistAndReport,
      logger,
      datacenter: config.datacenter,
      region: 'global',
    };
  }

  /** Allocations from before a restart: re-attached, never started again. */
  function restoreAllocs(): void {
    for (const rec of state.loadAllocs()) {
      const r = new AllocRunner(runnerDeps(), rec.alloc, rec);
      runners.set(rec.ID, r);
      if (!r.terminal) r.start(true);
      logger.info('allocation restored', { alloc: rec.ID, status: rec.ClientStatus });
    }
  }

  function onServerAllocs(allocs: Json[]): void {
    const seen = new Set<string>();
    for (const a of allocs) {
      const id = String(a['ID']);
      seen.add(id);
      const existing = runners.get(id);
      if (existing) {
        existing.serverUpdate(a);
        continue;
      }
      // New to us: run it unless the server already considers it over.
      if (a['DesiredStatus'] !== 'run' || TERMINAL_CLIENT.has(String(a['ClientStatus']))) continue;
      const r = new AllocRunner(runnerDeps(), a);
      runners.set(id, r);
      logger.info('running allocation', { alloc: id, job: a['JobID'], group: a['TaskGroup'] });
      r.start(false);
    }
    // Collected by the server (the anchor's GC): forget finished ones.
    for (const [id, r] of runners) {
      if (!seen.has(id) && r.terminal) {
        runners.delete(id);
        state.removeAlloc(id);
      }
    }
  }

  async function watchLoop(): Promise<void> {
    let index = 0;
    while (!stopping.signal.aborted) {
      if (!registered) {
        await sleep(100, stopping.signal);
        continue;
      }
      try {
        const res = await server.request('GET', `/v1/internal/node/${identity.id}/allocations?index=${index}&wait=${config.watchWaitMs}ms`, {
          headers: nodeAuth(),
          signal: stopping.signal,
          timeoutMs: config.watchWaitMs + 30_000,
        });
        if (res.status !== 200) {
          logger.warn('allocation watch refused', { status: res.status, body: res.text });
          await sleep(1_000, stopping.signal);
          continue;
        }
        const next = Number(res.headers.get('x-nomad-index') ?? res.headers.get('x-scheduler-index') ?? 0);
        // An index going backwards means a server with other data: start over.
        index = next > 0 && next >= index ? next : 0;
        onServerAllocs(res.json<Json[]>());
      } catch (err) {
        if (stopping.signal.aborted) return;
        if (!(err instanceof ServerUnavailableError)) logger.warn('allocation watch failed', { err: err instanceof Error ? err.message : String(err) });
        await sleep(1_000, stopping.signal);
      }
    }
  }

  return {
    identity,
    registered: () => registered,
    runners: runners as ReadonlyMap<string, AllocRunner>,
    async start(): Promise<void> {
      restoreAllocs();
      loops.push(registerUntilDone().then(() => heartbeatLoop()));
      loops.push(watchLoop());
    },
    /** Stops watching and reporting; tasks keep running for the next agent to re-attach. */
    async stop(): Promise<void> {
      stopping.abort();
      clearTimeout(flushTimer);
      await flush().catch(() => undefined);
      for (const r of runners.values()) r.detach();
      await Promise.all(loops);
    },
  };
}

export type ClientAgent = ReturnType<typeof createClientAgent>;
