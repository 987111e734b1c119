// The controller's `cluster` listener: a real gRPC server (HTTP/2) that workers keep a
// stream open to. On connect and whenever a worker's sessions change, the controller
// pushes the worker's full desired session set; the worker answers with what it holds.
import * as grpc from '@grpc/grpc-js';
import { createRefresher, type Bus, type Refresher } from '@selfstack/bus';
import type { Logger } from '@selfstack/logger';
import type { SessionStore } from '../features/sessions/sessions.store';
import { asWorkerMessage, workerClusterService, type ControllerMessage } from './cluster-proto';

/** Bus channel carrying "worker X's session set changed" notifications between controllers. */
export const WORKER_SYNC_CHANNEL = 'controller:worker-sync';

type Stream = grpc.ServerDuplexStream<unknown, ControllerMessage>;

export interface ClusterServer {
  readonly port: number;
  /** Pushes the desired session set to the worker if its stream is held by this controller. */
  syncWorker(workerName: string): Promise<void>;
  connectedWorkers(): string[];
  close(graceMs?: number): Promise<void>;
}

export async function startClusterServer(deps: {
  host: string;
  port: number;
  controllerName: string;
  store: SessionStore;
  bus: Bus;
  logger: Logger;
}): Promise<ClusterServer> {
  const { store, logger } = deps;
  const streams = new Map<string, Stream>();

  async function sendSync(workerName: string): Promise<void> {
    const stream = streams.get(workerName);
    if (!stream) return;
    const sessions = await store.desiredFor(workerName, new Date());
    stream.write({
      sync: {
        sessions: sessions.map((s) => ({ id: s.id, target: s.target, expires_at_unix_ms: s.expiresAt ? s.expiresAt.getTime() : 0 })),
      },
    });
  }
  // Per worker, for the life of the process (one small record per worker name, as the
  // workers table keeps a row): syncs never overlap, since two concurrent ones could finish
  // out of order and the worker would keep the older snapshot (a session canceled in between
  // would stay on it for good); a burst of requests shares one sync that reads after the
  // last of them. Reports (each the worker's whole set) are applied the same way: one
  // transaction at a time, each with the newest set received when it starts (two concurrent
  // ones could commit out of order and leave the older count).
  interface WorkerLink {
    sync: Refresher;
    report: Refresher;
    held: readonly string[];
  }
  const links = new Map<string, WorkerLink>();
  function linkOf(workerName: string): WorkerLink {
    let link = links.get(workerName);
    if (!link) {
      const l: WorkerLink = {
        sync: createRefresher(() => sendSync(workerName)),
        report: createRefresher(() =>
          store.applyReport(workerName, l.held, new Date()).catch((err: unknown) => {
            logger.error('session report failed', { worker: workerName, err: String(err) });
          }),
        ),
        held: [],
      };
      links.set(workerName, l);
      link = l;
    }
    return link;
  }
  const syncWorker = (workerName: string): Promise<void> => linkOf(workerName).sync.refresh();
  function report(workerName: string, ids: readonly string[]): void {
    const link = linkOf(workerName);
    link.held = ids;
    void link.report.refresh();
  }

  const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
  server.addService(workerClusterService, {
    Connect: (stream: Stream) => {
      let workerName: string | undefined;
      stream.on('data', (raw: unknown) => {
        const message = asWorkerMessage(raw);
        if (!message) return;
        if ('hello' in message) {
          const name = message.hello.worker_name;
          const previous = streams.get(name);
          if (previous && previous !== stream) previous.end();
          workerName = name;
          streams.set(name, stream);
          logger.info('worker connected', { worker: name });
          stream.write({ welcome: { controller_name: deps.controllerName } });
          store
            .upsertWorker({ name, description: message.hello.description ?? '', controllerName: deps.controllerName, connected: true })
            .then(() => syncWorker(name))
            .catch((err: unknown) => logger.error('worker registration failed', { worker: name, err: String(err) }));
        } else if (workerName) {
          report(workerName, message.report.active_session_ids);
        }
      });
      const gone = () => {
        if (workerName && streams.get(workerName) === stream) {
          streams.delete(workerName);
          logger.info('worker disconnected', { worker: workerName });
          store.markWorker(workerName, { connected: false }).catch(() => undefined);
        }
      };
      stream.on('end', () => {
        gone();
        stream.end();
      });
      stream.on('error', gone);
      stream.on('cancelled', gone);
    },
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${deps.host}:${deps.port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
  });

  const unsubscribe = await deps.bus.subscribe(WORKER_SYNC_CHANNEL, (workerName) => {
    syncWorker(workerName).catch((err: unknown) => logger.error('worker sync failed', { worker: workerName, err: String(err) }));
  });
  // A lost bus message could leave a worker with a stale set: resync everyone.
  const offReconnect = deps.bus.onReconnect(() => {
    for (const name of streams.keys()) void syncWorker(name).catch(() => undefined);
  });

  return {
    port,
    syncWorker,
    connectedWorkers: () => [...streams.keys()],
    async close(graceMs = 2000) {
      unsubscribe();
      offReconnect();
      for (const [name, stream] of streams) {
        stream.end();
        await store.markWorker(name, { connected: false }).catch(() => undefined);
      }
      streams.clear();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
