import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { RequestFramer } from './framer';

/** Header added to rewritten LIST requests; removed again before the app sees them. */
export const LIST_MARKER_HEADER = 'x-selfstack-original-method';

export interface ListenerOptions {
  port: number;
  host?: string;
  /** Hard cap on any request body at the connection layer (the connection is dropped when a
   * client keeps sending past it). The app's own limit answers 413 first. Default: none. */
  maxRequestBytes?: number;
  keepAliveTimeoutMs?: number;
}

export interface CloseOptions {
  /** How long in-flight requests may take before their connections are destroyed. */
  drainTimeoutMs?: number;
}

export interface Listener {
  /** The http.Server that parses requests (it never listens itself). */
  server: http.Server;
  /** The TCP server that accepts connections. */
  netServer: net.Server;
  port: number;
  url: string;
  /** Requests whose responses have not finished. */
  inFlight(): number;
  /** Stops accepting, closes idle keep-alive connections, waits for in-flight requests
   * (up to drainTimeoutMs, then destroys them). */
  close(options?: CloseOptions): Promise<void>;
}

/**
 * How long a connection that is being closed may keep sending (bytes read and dropped)
 * before it is reset. See FramedSocket.linger.
 */
export const LINGER_MS = 2000;

/**
 * A Duplex the http.Server reads framed (LIST-rewritten) bytes from and writes responses
 * through to the real socket. The socket-like methods http.Server and Express use are
 * delegated.
 */
class FramedSocket extends Duplex {
  private readonly out: Buffer[] = [];
  private lingering = false;

  constructor(
    readonly raw: net.Socket,
    private readonly framer: RequestFramer,
  ) {
    // Strings go to the socket as they are (no intermediate Buffer copy).
    super({ allowHalfOpen: true, decodeStrings: false });
    raw.on('data', (chunk: Buffer) => this.onRawData(chunk));
    raw.on('end', () => this.push(null));
    raw.on('error', (err) => this.destroy(err));
    raw.on('close', () => {
      if (!this.destroyed) this.destroy();
    });
    raw.on('timeout', () => this.emit('timeout'));
  }

  private onRawData(chunk: Buffer): void {
    // Closing: what the client still sends is read and dropped (see linger()).
    if (this.lingering) return;
    const out = this.out;
    out.length = 0;
    if (this.framer.push(chunk, out) === 'too-large') {
      // Past the connection's hard cap: what was framed up to here (the request head, the
      // body so far) still reaches the parser, so the app can answer (413 from the declared
      // Content-Length or from counting); nothing after it does. Lingering lets that answer
      // reach the client instead of losing it to a reset.
      for (const piece of out) if (piece.length > 0) this.push(piece);
      out.length = 0;
      this.linger();
      return;
    }
    let ok = true;
    for (const piece of out) if (piece.length > 0) ok = this.push(piece) && ok;
    out.length = 0;
    if (!ok) this.raw.pause();
  }

  override _read(): void {
    if (this.raw.isPaused()) this.raw.resume();
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.raw.write(chunk, encoding)) callback();
    else this.raw.once('drain', () => callback());
  }

  override _writev(chunks: Array<{ chunk: Buffer | string; encoding: BufferEncoding }>, callback: (error?: Error | null) => void): void {
    this.raw.cork();
    let ok = true;
    for (const { chunk, encoding } of chunks) ok = this.raw.write(chunk, encoding);
    this.raw.uncork();
    if (ok) callback();
    else this.raw.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.raw.end(() => callback());
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (error || this.raw.destroyed || this.raw.readableEnded) this.raw.destroy();
    else {
      // An orderly close (Connection: close, keep-alive timeout) while the client may still
      // be sending: closing with unread bytes would reset the connection, and a reset can
      // discard the response the client has not read yet (a 413 sent before the body).
      // Half-close after the pending writes instead, and drop what still arrives.
      this.linger();
      this.raw.end();
    }
    callback(error);
  }

  /**
   * Lingering close (as nginx's lingering_close): stop passing bytes to the parser, keep
   * reading and dropping them, and release the socket when the client closes its side or
   * after LINGER_MS, whichever comes first.
   */
  private linger(): void {
    if (this.lingering) return;
    this.lingering = true;
    const raw = this.raw;
    const timer = setTimeout(() => raw.destroy(), LINGER_MS);
    timer.unref();
    raw.once('close', () => clearTimeout(timer));
    raw.once('end', () => raw.destroy());
    if (raw.isPaused()) raw.resume();
  }

  setTimeout(ms: number, cb?: () => void): this {
    this.raw.setTimeout(ms);
    if (cb) this.once('timeout', cb);
    return this;
  }
  setNoDelay(noDelay?: boolean): this {
    this.raw.setNoDelay(noDelay);
    return this;
  }
  setKeepAlive(enable?: boolean, delay?: number): this {
    this.raw.setKeepAlive(enable, delay);
    return this;
  }
  destroySoon(): void {
    if (this.writable) this.end();
    if (this.writableFinished) this.destroy();
    else this.once('finish', () => this.destroy());
  }
  ref(): this {
    this.raw.ref();
    return this;
  }
  unref(): this {
    this.raw.unref();
    return this;
  }
  address(): ReturnType<net.Socket['address']> {
    return this.raw.address();
  }
  get remoteAddress(): string | undefined {
    return this.raw.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.raw.remotePort;
  }
  get remoteFamily(): string | undefined {
    return this.raw.remoteFamily;
  }
  get localAddress(): string | undefined {
    return this.raw.localAddress;
  }
  get localPort(): number | undefined {
    return this.raw.localPort;
  }
  get bytesRead(): number {
    return this.raw.bytesRead;
  }
  get bytesWritten(): number {
    return this.raw.bytesWritten;
  }
  get timeout(): number | undefined {
    return this.raw.timeout;
  }
}

/** Half-close after pending writes, then release the socket without waiting for the peer. */
function endSoon(raw: net.Socket): void {
  raw.end();
  if (raw.writableFinished) raw.destroy();
  else raw.once('finish', () => raw.destroy());
}

function stripMarker(req: IncomingMessage, secret: string): void {
  const mark = req.headers[LIST_MARKER_HEADER];
  if (mark === undefined) return;
  // A client may send the header too (Node then joins the values); only the secret counts.
  const values = Array.isArray(mark) ? mark : mark.split(', ');
  if (req.method === 'GET' && values.includes(secret)) req.method = 'LIST';
  delete req.headers[LIST_MARKER_HEADER];
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if ((raw[i] ?? '').toLowerCase() === LIST_MARKER_HEADER) raw.splice(i, 2);
  }
}

type IncomingMessageClass = typeof http.IncomingMessage;
type ServerResponseClass = typeof http.ServerResponse;

function isClassSyntax(fn: unknown): boolean {
  return typeof fn === 'function' && /^class\b/.test(Function.prototype.toString.call(fn));
}

/**
 * Request and response classes whose instances are born with `app`'s own prototypes, for
 * an Express app (which exposes them as `app.request` / `app.response`); undefined for
 * any other listener.
 *
 * Express gives every request and response its app's prototype in `app.handle`
 * (`Object.setPrototypeOf`). V8 makes every later property access on an object whose
 * prototype was changed slower: 1,000 `res.end()` calls on such responses took twice as
 * long as on responses node:http created (measured with and without Express, and with a
 * bare `setPrototypeOf` and no Express at all). When the server creates them with that
 * prototype from the start, Express's `setPrototypeOf` finds the same prototype and does
 * nothing. node:http documents the `IncomingMessage`/`ServerResponse` server options for
 * extending its classes; its own are plain constructor functions, called here on the new
 * object (if a later Node makes them ES classes, this returns undefined and the server
 * keeps its defaults).
 */
export function prototypeClassesFor(app: unknown): { IncomingMessage: IncomingMessageClass; ServerResponse: ServerResponseClass } | undefined {
  if (typeof app !== 'function') return undefined;
  const { request, response } = app as { request?: unknown; response?: unknown };
  if (typeof request !== 'object' || request === null || typeof response !== 'object' || response === null) return undefined;
  if (!Object.prototype.isPrototypeOf.call(http.IncomingMessage.prototype, request)) return undefined;
  if (!Object.prototype.isPrototypeOf.call(http.ServerResponse.prototype, response)) return undefined;
  if (isClassSyntax(http.IncomingMessage) || isClassSyntax(http.ServerResponse)) return undefined;
  const BaseRequest = http.IncomingMessage as unknown as (this: unknown, socket: net.Socket) => void;
  const BaseResponse = http.ServerResponse as unknown as (this: unknown, req: IncomingMessage, options?: unknown) => void;
  function AppRequest(this: unknown, socket: net.Socket): void {
    BaseRequest.call(this, socket);
  }
  AppRequest.prototype = request;
  function AppResponse(this: unknown, req: IncomingMessage, options?: unknown): void {
    BaseResponse.call(this, req, options);
  }
  AppResponse.prototype = response;
  return {
    IncomingMessage: AppRequest as unknown as IncomingMessageClass,
    ServerResponse: AppResponse as unknown as ServerResponseClass,
  };
}

/**
 * Listens with a LIST-capable HTTP/1.1 front end (keep-alive and pipelining included).
 * `app` is any request listener, typically an Express app.
 */
export function createListener(app: RequestListener, options: ListenerOptions): Promise<Listener> {
  const secret = randomBytes(16).toString('hex');
  const markerLine = Buffer.from(`${LIST_MARKER_HEADER}: ${secret}\r\n`, 'latin1');
  const connections = new Map<net.Socket, { active: number }>();
  const inflight = new Set<ServerResponse>();
  let closing = false;
  let onDrained: (() => void) | undefined;

  const checkDrained = () => {
    if (closing && connections.size === 0 && onDrained) onDrained();
  };

  const server = http.createServer({ keepAliveTimeout: options.keepAliveTimeoutMs ?? 5000, ...prototypeClassesFor(app) }, (req, res) => {
    stripMarker(req, secret);
    const raw = (req.socket as unknown as FramedSocket).raw as net.Socket | undefined;
    const state = raw ? connections.get(raw) : undefined;
    if (state) state.active++;
    inflight.add(res);
    // During shutdown, answer but do not keep the connection.
    if (closing) res.setHeader('Connection', 'close');
    res.once('close', () => {
      inflight.delete(res);
      if (state) {
        state.active--;
        if (closing && state.active === 0 && raw) endSoon(raw);
      }
    });
    app(req, res);
  });

  const netServer = net.createServer({ noDelay: true }, (raw) => {
    if (closing) {
      raw.destroy();
      return;
    }
    connections.set(raw, { active: 0 });
    raw.once('close', () => {
      connections.delete(raw);
      checkDrained();
    });
    raw.on('error', () => {
      // Reported through the FramedSocket; this listener only prevents an unhandled 'error'.
    });
    const framer = new RequestFramer({ markerLine, maxBodyBytes: options.maxRequestBytes });
    server.emit('connection', new FramedSocket(raw, framer));
  });

  return new Promise<Listener>((resolve, reject) => {
    netServer.once('error', reject);
    netServer.listen(options.port, options.host ?? '127.0.0.1', () => {
      netServer.off('error', reject);
      const addr = netServer.address() as net.AddressInfo;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      let closed: Promise<void> | undefined;
      resolve({
        server,
        netServer,
        port: addr.port,
        url: `http://${host}:${addr.port}`,
        inFlight: () => inflight.size,
        close(closeOptions: CloseOptions = {}) {
          closed ??= new Promise<void>((done) => {
            closing = true;
            const drainTimeoutMs = closeOptions.drainTimeoutMs ?? 10000;
            netServer.close();
            for (const res of inflight) if (!res.headersSent) res.setHeader('Connection', 'close');
            for (const [raw, state] of connections) if (state.active === 0) endSoon(raw);
            const timer = setTimeout(() => {
              for (const raw of connections.keys()) raw.destroy();
            }, drainTimeoutMs);
            timer.unref();
            onDrained = () => {
              clearTimeout(timer);
              onDrained = undefined;
              // Stops http.Server's connection-checking interval.
              server.close(() => done());
            };
            checkDrained();
          });
          return closed;
        },
      });
    });
  });
}
