// A test client for GET /v1/event/stream over a real socket: collects the ndjson lines
// (each must parse as JSON), lets a test wait for what it expects, pause reading (a slow
// consumer) and resume.
import http from 'node:http';

export interface StreamEvent {
  Topic: string;
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[] | null;
  Index: number;
  Payload: Record<string, Record<string, unknown>>;
}

export interface StreamLine {
  Index?: number;
  Events?: StreamEvent[];
  Error?: string;
}

export interface StreamClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Every line received so far, parsed. */
  lines: StreamLine[];
  /** The body of a non-200 answer. */
  text: string;
  /** Resolves when the server ends the response (or the socket closes). */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Frames with events (heartbeats left out). */
  frames(): StreamLine[];
  events(): StreamEvent[];
  waitFor<T>(what: string, check: (c: StreamClient) => T | undefined | false, timeoutMs?: number): Promise<T>;
  pause(): void;
  resume(): void;
  close(): void;
}

export function openStream(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}${path}`, { headers, agent: false }, (res) => {
      let buffered = '';
      let ended = false;
      let endResolve: () => void = () => undefined;
      const endedPromise = new Promise<void>((r) => (endResolve = r));
      const listeners = new Set<() => void>();
      const client: StreamClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        lines: [],
        text: '',
        ended: endedPromise,
        isEnded: () => ended,
        frames: () => client.lines.filter((l) => Array.isArray(l.Events)),
        events: () => client.frames().flatMap((l) => l.Events ?? []),
        waitFor(what, check, timeoutMs = 15_000) {
          return new Promise((ok, fail) => {
            const attempt = (): boolean => {
              const v = check(client);
              if (v === undefined || v === false) return false;
              listeners.delete(onChange);
              clearTimeout(timer);
              ok(v as never);
              return true;
            };
            const onChange = (): void => void attempt();
            const timer = setTimeout(() => {
              listeners.delete(onChange);
              fail(new Error(`timed out waiting for ${what}; lines: ${JSON.stringify(client.lines).slice(-2000)}${client.text}`));
            }, timeoutMs);
            listeners.add(onChange);
            attempt();
          });
        },
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      };
      const notify = (): void => {
        for (const l of [...listeners]) l();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (client.status !== 200) {
          client.text += chunk;
          return;
        }
        buffered += chunk;
        let nl = buffered.indexOf('\n');
        while (nl !== -1) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          // Spec: splitting at each newline gives valid JSON objects (throws otherwise).
          client.lines.push(JSON.parse(line) as StreamLine);
          nl = buffered.indexOf('\n');
        }
        notify();
      });
      const finish = (): void => {
        if (ended) return;
        ended = true;
        if (buffered !== '') client.text += buffered;
        endResolve();
        notify();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      resolve(client);
    });
    req.on('error', reject);
  });
}
