// Loads cluster.proto with @grpc/proto-loader (the wire format is real protobuf over
// HTTP/2, as the anchor's cluster listener speaks gRPC).
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export interface ProtoSession {
  id: string;
  target: string;
  expires_at_unix_ms: string | number;
}

export type WorkerMessage =
  | { hello: { worker_name: string; description?: string } }
  | { report: { active_session_ids: string[] } };

export type ControllerMessage = { welcome: { controller_name: string } } | { sync: { sessions: ProtoSession[] } };

const definition = protoLoader.loadSync(path.join(__dirname, 'cluster.proto'), {
  keepCase: true,
  longs: String,
  defaults: true,
  arrays: true,
  oneofs: true,
});

const pkg = grpc.loadPackageDefinition(definition) as unknown as {
  selfstack: { controller: { cluster: { v1: { WorkerCluster: grpc.ServiceClientConstructor } } } };
};

export const WorkerClusterClient = pkg.selfstack.controller.cluster.v1.WorkerCluster;
export const workerClusterService = WorkerClusterClient.service;

/** proto-loader with `oneofs: true` adds a `msg` discriminator; strip it for typing. */
export function asWorkerMessage(raw: unknown): WorkerMessage | undefined {
  const m = raw as { hello?: { worker_name?: string }; report?: { active_session_ids?: string[] } } | null;
  if (m?.hello && typeof m.hello.worker_name === 'string') return { hello: { worker_name: m.hello.worker_name } };
  if (m?.report) return { report: { active_session_ids: m.report.active_session_ids ?? [] } };
  return undefined;
}

export function asControllerMessage(raw: unknown): ControllerMessage | undefined {
  const m = raw as { welcome?: { controller_name?: string }; sync?: { sessions?: ProtoSession[] } } | null;
  if (m?.welcome) return { welcome: { controller_name: m.welcome.controller_name ?? '' } };
  if (m?.sync) return { sync: { sessions: m.sync.sessions ?? [] } };
  return undefined;
}
