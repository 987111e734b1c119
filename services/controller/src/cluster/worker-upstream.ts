// The worker's side of the cluster protocol: one gRPC channel to a controller's cluster
// listener with a long-lived stream on it. `connectionState()` is the channel's real
// connectivity state (spec: CONNECTING, READY, TRANSIENT_FAILURE, IDLE, SHUTDOWN), read
// from grpc-js, never derived by us. The session count is the set of sessions the
// controller has handed to this worker and that have not ended or expired.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@selfstack/logger';
import { asControllerMessage, WorkerClusterClient, type WorkerMessage } from './cluster-proto';

export type ConnectionStateName = 'IDLE' | 'CONNECTING' | 'READY' | 'TRANSIENT_FAILURE' | 'SHUTDOWN';

export interface WorkerUpstream {
  connectionState(): ConnectionStateName;
  activeSessionCount(): number;
  activeSessionIds(): string[];
  close(): void;
}

interface HeldSession {
  target: string;
  expiresAtMs: number;
}

export function connectivityName(state: grpc.connectivityState): ConnectionStateName {
  return grpc.connectivityState[state] as ConnectionStateName;
}

export function startWorkerUpstream(deps: {
  workerName: string;
  description?: string;
  upstream: string;
  logger: Logger;
  /** Reconnect backoff bounds; small by default so a restarted controller is picked up fast. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  clock?: () => number;
}): WorkerUpstream {
  const now = deps.clock ?? Date.now;
  const initialBackoff = deps.initialBackoffMs ?? 250;
  const maxBackoff = deps.maxBackoffMs ?? 2000;
  const client = new WorkerClusterClient(deps.upstream, grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': initialBackoff,
    'grpc.max_reconnect_backoff_ms': maxBackoff,
    'grpc.keepalive_time_ms': 10_000,
    'grpc.keepalive_timeout_ms': 5_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const channel = client.getChannel();
  const sessions = new Map<string, HeldSession>();
  let closed = false;
  let call: grpc.ClientDuplexStream<WorkerMessage, unknown> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let attempt = 0;

  const report = () => {
    call?.write({ report: { active_session_ids: [...sessions.keys()] } });
  };

  const expire = () => {
    const t = now();
    let changed = false;
    for (const [id, s] of sessions) {
      if (s.expiresAtMs > 0 && s.expiresAtMs <= t) {
        sessions.delete(id);
        changed = true;
      }
    }
    if (changed) report();
  };
  const expiryTimer = setInterval(expire, 1000);
  expiryTimer.unref();

  const scheduleReopen = () => {
    if (closed || retryTimer) return;
    const delay = Math.min(maxBackoff, initialBackoff * 2 ** Math.min(attempt, 6));
    attempt += 1;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      open();
    }, delay);
    retryTimer.unref();
  };

  function open(): void {
    if (closed) return;
    const stream = (client as unknown as { Connect(): grpc.ClientDuplexStream<WorkerMessage, unknown> }).Connect();
    call = stream;
    stream.on('data', (raw: unknown) => {
      const message = asControllerMessage(raw);
      if (!message) return;
      attempt = 0;
      if ('sync' in message) {
        const t = now();
        sessions.clear();
        for (const s of message.sync.sessions) {
          const expiresAtMs = Number(s.expires_at_unix_ms);
          if (expiresAtMs === 0 || expiresAtMs > t) sessions.set(s.id, { target: s.target, expiresAtMs });
        }
        report();
      } else {
        deps.logger.info('connected to controller', { controller: message.welcome.controller_name, upstream: deps.upstream });
      }
    });
    const ended = (why: string) => {
      if (call !== stream) return;
      call = undefined;
      if (!closed) deps.logger.warn('upstream stream ended', { upstream: deps.upstream, why });
      scheduleReopen();
    };
    stream.on('error', (err: grpc.ServiceError) => ended(err.details || err.message));
    stream.on('end', () => ended('end'));
    stream.write({ hello: { worker_name: deps.workerName, description: deps.description ?? '' } });
  }

  open();

  return {
    connectionState: () => connectivityName(channel.getConnectivityState(false)),
    activeSessionCount: () => {
      expire();
      return sessions.size;
    },
    activeSessionIds: () => [...sessions.keys()],
    close() {
      closed = true;
      clearInterval(expiryTimer);
      if (retryTimer) clearTimeout(retryTimer);
      call?.cancel();
      call = undefined;
      client.close();
    },
  };
}
