// GET /v1/event/stream (spec "Events"; reference §6; issue 27): the durable event log
// (libs/state, Postgres is the truth) replayed from an index, then followed live through
// the bus, as newline-delimited JSON with heartbeats. Authorization is decided before any
// byte is written and re-checked while the stream runs, so a token that expires or is
// deleted ends it. A consumer that stops reading never makes the server buffer without
// bound: the writer waits for the socket to drain (the tail meanwhile keeps at most a
// bounded queue and then falls back to Postgres), and a consumer that does not drain
// within `slowConsumerMs` gets an error line and the end of the stream; it resumes with
// the index that line names.
import type { Writable } from 'node:stream';
import { ForbiddenError } from '@selfstack/errors';
import type { EventFrame, StateStore, StoredEvent } from '@selfstack/state';
import type { Acl } from '../acl/acl-policy';
import { denied, type Identity } from '../acl/acl.service';
import type { Db } from '../../shared/common.types';
import { MANAGEMENT_TOPICS, NAMESPACED_TOPICS, NODE_TOPICS, subscribedTopics, topicMatches, type TopicSubscription } from './event-topics';

export interface EventStreamSettings {
  /** Heartbeat `{}` interval (the anchor: 30 s). */
  heartbeatMs: number;
  /** How long the writer waits for a consumer to drain its socket before ending the stream. */
  slowConsumerMs: number;
  /** How often the token is resolved again (deleted tokens and changed policies end the stream). */
  revalidateMs: number;
  /** How long an ended stream's last line may take to go out before the socket is destroyed. */
  endGraceMs: number;
}

export const DEFAULT_EVENT_STREAM_SETTINGS: EventStreamSettings = { heartbeatMs: 30_000, slowConsumerMs: 30_000, revalidateMs: 30_000, endGraceMs: 5_000 };

export interface EventStreamRequest {
  /** First index wanted (inclusive, as the anchor's `index`); 0 = the oldest retained. */
  index: number;
  /** `default` when absent; `*` for every namespace. */
  namespace: string;
  topics: TopicSubscription;
}

/**
 * The spec's "Required ACL per topic": management for `*` and the ACL topics,
 * `read-job` in the namespace for job-related topics (for `namespace=*`, a policy that
 * applies to all namespaces), `node:read` for the node topics.
 */
export function authorizeStream(acl: Acl, request: EventStreamRequest): void {
  if (acl.management) return;
  for (const topic of subscribedTopics(request.topics)) {
    if (topic === '*' || MANAGEMENT_TOPICS.has(topic)) throw denied();
    if (NODE_TOPICS.has(topic)) {
      if (!acl.allowNodeRead()) throw denied();
      continue;
    }
    if (NAMESPACED_TOPICS.has(topic) && !acl.allowNamespaceOperation(request.namespace, 'read-job')) throw denied();
  }
}

/**
 * Which events of the log a stream delivers: namespaced events of its namespace only
 * (with `*`, of namespaces the token may `read-job` in, checked per event so a `deny`
 * on one namespace holds), events without a namespace (nodes, ACL) as their topic allows.
 */
export function streamFilter(acl: Acl, request: EventStreamRequest): (event: StoredEvent) => boolean {
  const { namespace, topics } = request;
  const all = namespace === '*';
  return (event) => {
    if (event.namespace !== '') {
      if (all ? !acl.allowNamespaceOperation(event.namespace, 'read-job') : event.namespace !== namespace) return false;
    }
    return topicMatches(topics, event);
  };
}

/** The wire form of one event (reference §6 field order). */
function renderEvent(e: StoredEvent): Record<string, unknown> {
  return { Topic: e.topic, Type: e.type, Key: e.key, Namespace: e.namespace, FilterKeys: e.filterKeys, Index: e.index, Payload: e.payload };
}

// Frames are shared by every tail that keeps all of a frame's events: their line is
// serialised and encoded once, however many streams deliver it.
const lines = new WeakMap<EventFrame, Buffer>();
function frameLine(frame: EventFrame): Buffer {
  let line = lines.get(frame);
  if (line === undefined) {
    line = Buffer.from(`${JSON.stringify({ Index: frame.index, Events: frame.events.map(renderEvent) })}\n`);
    lines.set(frame, line);
  }
  return line;
}

// The frames a stream found queued together (one shared read, see libs/state event-hub.ts)
// go out as one write. Streams that follow the same frames (the same objects) share that
// write's bytes too: the latest run starting at a frame is kept with it.
const MAX_BATCH_FRAMES = 64;
const runs = new WeakMap<EventFrame, { frames: readonly EventFrame[]; bytes: Buffer }>();
function framesBytes(frames: readonly EventFrame[]): Buffer {
  const first = frames[0] as EventFrame;
  if (frames.length === 1) return frameLine(first);
  const cached = runs.get(first);
  if (cached && cached.frames.length === frames.length && cached.frames.every((f, i) => f === frames[i])) return cached.bytes;
  const bytes = Buffer.concat(frames.map(frameLine));
  runs.set(first, { frames, bytes });
  return bytes;
}

const HEARTBEAT = Buffer.from('{}\n');
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface EventStreamDeps {
  state: Pick<StateStore<Db>, 'createEventTail'>;
  /** Resolves the caller's token again (throws ForbiddenError when gone or expired). */
  resolveIdentity(secret: string): Promise<Identity>;
  settings: EventStreamSettings;
  /** Aborted when the server starts shutting down: open streams end with an error line
   * naming the index to resume from (on another replica), instead of holding the drain. */
  stopping?: AbortSignal;
  now?: () => number;
}

export interface OpenStream {
  /** Writes the stream until the client goes away, the server stops or the stream is ended. */
  run(out: Writable, signal: AbortSignal): Promise<void>;
}

export function createEventStreamService(deps: EventStreamDeps) {
  const { settings } = deps;
  const now = deps.now ?? Date.now;
  // One listener on the shutdown signal for all streams (not one per stream: hundreds of
  // listeners on one AbortSignal).
  const onShutdown = new Set<() => void>();
  deps.stopping?.addEventListener('abort', () => {
    for (const stop of [...onShutdown]) stop();
  }, { once: true });

  return {
    /** Authorizes (403 before any data) and prepares a stream. */
    open(identity: Identity, secret: string, request: EventStreamRequest): OpenStream {
      authorizeStream(identity.acl, request);
      return {
        run: (out, signal) => pump(identity, secret, request, out, signal),
      };
    },
  };

  async function pump(identity: Identity, secret: string, request: EventStreamRequest, out: Writable, signal: AbortSignal): Promise<void> {
    const local = new AbortController();
    const stop = (): void => local.abort();
    signal.addEventListener('abort', stop, { once: true });
    const tail = deps.state.createEventTail({
      // The anchor's index is inclusive; the tail's position is exclusive.
      fromIndex: Math.max(0, request.index - 1),
      filter: streamFilter(identity.acl, request),
      signal: local.signal,
    });
    let delivered = Math.max(0, request.index - 1);
    let waitingForDrain = false;
    let ended = false;
    const timers: NodeJS.Timeout[] = [];

    const finish = (errorMessage?: string): void => {
      if (ended) return;
      ended = true;
      for (const t of timers) clearTimeout(t);
      if (errorMessage !== undefined && !out.destroyed) {
        out.end(`${JSON.stringify({ Error: errorMessage, Index: delivered + 1 })}\n`);
        // A consumer that is not reading may never take even that line.
        const kill = setTimeout(() => out.destroy(), settings.endGraceMs);
        kill.unref();
        out.once('close', () => clearTimeout(kill));
      } else if (!out.destroyed) {
        out.end();
      }
      local.abort();
    };

    const heartbeat = (): void => {
      if (ended) return;
      if (!waitingForDrain) out.write(HEARTBEAT);
      timers[0] = setTimeout(heartbeat, settings.heartbeatMs);
    };

    const revalidate = async (): Promise<void> => {
      if (ended) return;
      try {
        authorizeStream((await deps.resolveIdentity(secret)).acl, request);
      } catch (err) {
        finish(err instanceof ForbiddenError ? err.message : 'event stream ended: the token could not be checked');
        return;
      }
      schedule(1, revalidate, settings.revalidateMs);
    };
    const schedule = (slot: number, fn: () => unknown, ms: number): void => {
      const t = setTimeout(() => void fn(), ms);
      timers[slot] = t;
    };

    const expiry = identity.token?.ExpirationTime ? Date.parse(identity.token.ExpirationTime) : NaN;

    const onStopping = (): void => finish(`server shutting down: resume with index=${delivered + 1}`);
    onShutdown.add(onStopping);
    try {
      if (deps.stopping?.aborted) onStopping();
      out.write(HEARTBEAT);
      timers[0] = setTimeout(heartbeat, settings.heartbeatMs);
      schedule(1, revalidate, settings.revalidateMs);
      // Exact to the millisecond when the expiry is within a timer's range; beyond it
      // (~24 days) the periodic re-check ends the stream.
      if (Number.isFinite(expiry) && expiry - now() < MAX_TIMER_MS) schedule(2, () => finish('ACL token expired'), Math.max(0, expiry - now()));

      for await (const frame of tail) {
        if (ended) break;
        const rest = tail.takeQueued(MAX_BATCH_FRAMES - 1);
        const frames = rest.length === 0 ? [frame] : [frame, ...rest];
        delivered = (frames[frames.length - 1] as EventFrame).index;
        if (out.write(framesBytes(frames))) continue;
        waitingForDrain = true;
        const drained = await waitForDrain(out, settings.slowConsumerMs, local.signal);
        waitingForDrain = false;
        if (drained === 'timeout') {
          finish(`event stream consumer too slow: resume with index=${delivered + 1}`);
          break;
        }
        if (drained === 'closed') break;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      onShutdown.delete(onStopping);
      tail.close();
      finish();
    }
  }
}

function waitForDrain(out: Writable, timeoutMs: number, signal: AbortSignal): Promise<'drained' | 'timeout' | 'closed'> {
  return new Promise((resolve) => {
    const done = (outcome: 'drained' | 'timeout' | 'closed'): void => {
      clearTimeout(timer);
      out.off('drain', onDrain);
      out.off('close', onClose);
      signal.removeEventListener('abort', onClose);
      resolve(outcome);
    };
    const onDrain = (): void => done('drained');
    const onClose = (): void => done('closed');
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    out.once('drain', onDrain);
    out.once('close', onClose);
    signal.addEventListener('abort', onClose, { once: true });
  });
}

export type EventStreamService = ReturnType<typeof createEventStreamService>;
