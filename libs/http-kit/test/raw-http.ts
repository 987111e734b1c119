import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses as many complete HTTP/1.1 responses (Content-Length framed) as `text` holds. */
export function parseResponses(text: string): { responses: RawResponse[]; rest: string; ends: number[] } {
  const responses: RawResponse[] = [];
  const ends: number[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const [statusLine = '', ...headerLines] = rest.slice(0, end).split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = status === 204 || status === 304 ? 0 : Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) break;
    responses.push({ status, headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
    ends.push(text.length - rest.length);
  }
  return { responses, rest, ends };
}

/** A raw client connection that collects responses. */
export class RawClient {
  readonly socket: net.Socket;
  private buffer = '';
  private waiters: Array<() => void> = [];
  closed = false;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => {
      this.buffer += d;
      this.wake();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    this.socket.on('error', () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** Resolves with `count` responses (consumed), or rejects on close/timeout. */
  async read(count: number, timeoutMs = 5000): Promise<RawResponse[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { responses, ends } = parseResponses(this.buffer);
      if (responses.length >= count) {
        const taken = responses.slice(0, count);
        this.buffer = this.buffer.slice(ends[count - 1]);
        return taken;
      }
      if (this.closed) throw new Error(`connection closed after ${responses.length} responses; raw: ${JSON.stringify(this.buffer)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timeout waiting for ${count} responses; raw: ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Resolves once the server closed the connection. */
  async waitClosed(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('connection still open');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}
