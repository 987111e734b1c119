// Sessions: records the controller creates over its API and hands to a worker.
// The database is the truth; `notifyWorker` asks whichever controller holds the worker's
// stream to push the worker's new session set (over the bus, so it works across
// controller replicas).
import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '@selfstack/errors';
import type { SessionStore } from './sessions.store';
import type { CreateSessionInput, SessionRecord, SessionStatus, WorkerRecord } from './sessions.types';

export const DEFAULT_SESSION_SECONDS = 8 * 3600;

export interface SessionService {
  create(input: CreateSessionInput): Promise<SessionRecord>;
  get(id: string): Promise<SessionRecord>;
  list(filter: { workerName?: string; status?: SessionStatus }): Promise<SessionRecord[]>;
  cancel(id: string): Promise<SessionRecord>;
  listWorkers(): Promise<WorkerRecord[]>;
}

/** Boundary-style public ids: `s_` + 10 base62 characters. */
export function newSessionId(): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const bytes = randomBytes(10);
  let out = 's_';
  for (const b of bytes) out += alphabet[b % 62];
  return out;
}

export function createSessionService(deps: {
  store: SessionStore;
  notifyWorker: (workerName: string) => Promise<void>;
  clock?: () => Date;
}): SessionService {
  const now = deps.clock ?? (() => new Date());
  return {
    async create(input) {
      let workerName = input.worker_name;
      if (workerName) {
        const known = (await deps.store.listWorkers()).find((w) => w.name === workerName);
        if (!known || !known.connected) throw new ConflictError(`worker "${workerName}" is not connected`);
      } else {
        const worker = await deps.store.leastLoadedWorker();
        if (!worker) throw new ServiceUnavailableError('no workers are connected to take the session');
        workerName = worker.name;
      }
      const lifetime = (input.expiration_seconds ?? DEFAULT_SESSION_SECONDS) * 1000;
      const session = await deps.store.create({
        id: newSessionId(),
        workerName,
        target: input.target_id ?? '',
        expiresAt: new Date(now().getTime() + lifetime),
      });
      await deps.notifyWorker(workerName);
      return session;
    },
    async get(id) {
      const session = await deps.store.get(id);
      if (!session) throw new NotFoundError(`session "${id}" not found`);
      return session;
    },
    list(filter) {
      return deps.store.list(filter);
    },
    async cancel(id) {
      const session = await deps.store.cancel(id);
      if (!session) throw new NotFoundError(`session "${id}" not found`);
      await deps.notifyWorker(session.workerName);
      return session;
    },
    listWorkers() {
      return deps.store.listWorkers();
    },
  };
}
