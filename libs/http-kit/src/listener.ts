import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { RequestFramer } from './framer';
import { createIdleGc, type IdleGcOptions } from './idle-gc';
import { onResponseClose } from './response-close';
import { SlotSet } from './slot-set';

/** Header added to rewritten LIST requests; removed again before the app sees them. */
export const LIST_MARKER_HEADER = 'x-selfstack-original-method';

export interface ListenerOptions {
  port: number;
  host?: string;
  /** Hard cap on any request body at the connection layer (the connection is dropped when a
   * client keeps sending past it). The app's own limit answers 413 first. Default: none. */
  maxRequestBytes?: number;
  keepAliveTimeoutMs?: number;
  /** Collect V8's young generation when the listener has been quiet for `idleMs` while
   * holding at least `minHeld` requests (see idle-gc.ts). Default: off. */
  idleGc?: IdleGcOptions;
  /**
   * Serve HTTPS: the TLS server options (certificate, key, protocol versions). Each
   * connection is handed to the same http.Server after its handshake, so keep-alive,
   * pipelining and the LIST method work as on plain HTTP.
   */
  tls?: tls.TlsOptions;
  /**
   * Answers, in the service's own error shape, the requests node:http rejects before any
   * JavaScript runs (malformed request 400, unknown method, header block too large 431,
   * request timeout 408). With it, a method node:http's parser does not know (other than
   * LIST, which is served) is answered 405, as the kit's method table answers any other
   * method. Without it, node:http's bare status line.
   */
  clientErrorResponse?: (status: number) => ClientErrorResponse;
}

/** A response written by the listener itself, before any request object exists. */
export interface ClientErrorResponse {
  headers: Record<string, string>;
  body: string;
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
 * through to the real socket, for a connection that has sent `LIST` (see createListener).
 * The socket-like methods http.Server and Express use are delegated.
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
    raw.on('data', (chunk: Buffer) => this.feed(chunk));
    raw.on('end', () => this.push(null));
    raw.on('error', (err) => this.destroy(err));
    raw.on('close', () => {
      if (!this.destroyed) this.destroy();
    });
    raw.on('timeout', () => this.emit('timeout'));
  }

  /** Frames bytes read from the socket (also the bytes a takeover starts with). */
  feed(chunk: Buffer): void {
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
    releaseAfterLinger(this.raw);
    if (this.raw.isPaused()) this.raw.resume();
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

/** The end of a lingering close: the socket goes when the client closes, or after LINGER_MS. */
function releaseAfterLinger(raw: net.Socket): void {
  const timer = setTimeout(() => raw.destroy(), LINGER_MS);
  timer.unref();
  raw.once('close', () => clearTimeout(timer));
  raw.once('end', () => raw.destroy());
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

/** Gives `target` the own properties and the prototype of `source` (see prototypeClassesFor). */
function adoptPrototype(target: object, source: object): void {
  Object.setPrototypeOf(target, Object.getPrototypeOf(source));
  for (const key of Reflect.ownKeys(source)) {
    if (key === 'constructor') continue;
    Object.defineProperty(target, key, Object.getOwnPropertyDescriptor(source, key) as PropertyDescriptor);
  }
}

const classesByApp = new WeakMap<object, { IncomingMessage: IncomingMessageClass; ServerResponse: ServerResponseClass }>();

/**
 * Request and response classes whose instances are born with `app`'s own prototypes, for
 * an Express app (which exposes them as `app.request` / `app.response`); undefined for
 * any other listener.
 *
 * Express gives every request and response its app's prototype in `app.handle`
 * (`Object.setPrototypeOf`). In V8 an object whose prototype is changed gets a map (hidden
 * class) of its own: every response of such a server had a different map, so every
 * property access in node:http and Express on it missed its inline caches (1,000
 * `res.end()` calls took twice as long as on responses node:http created). Born with the
 * app's prototype, Express's `setPrototypeOf` finds it already there and does nothing.
 *
 * The classes extend node:http's (node:http documents the `IncomingMessage` /
 * `ServerResponse` server options for that), and the app's `request` / `response` become
 * their prototypes, which take over the app's own properties (`app`) and sit on Express's
 * request/response objects: instances are ordinary fast-property objects sharing one map
 * per point of their life (plain functions calling node:http's constructors made them
 * dictionary-mode objects: libs/http-kit/README.md). One set of classes per app, so every
 * listener of an app shares them.
 */
export function prototypeClassesFor(app: unknown): { IncomingMessage: IncomingMessageClass; ServerResponse: ServerResponseClass } | undefined {
  if (typeof app !== 'function') return undefined;
  const known = classesByApp.get(app);
  if (known) return known;
  const { request, response } = app as { request?: unknown; response?: unknown };
  if (typeof request !== 'object' || request === null || typeof response !== 'object' || response === null) return undefined;
  if (!Object.prototype.isPrototypeOf.call(http.IncomingMessage.prototype, request)) return undefined;
  if (!Object.prototype.isPrototypeOf.call(http.ServerResponse.prototype, response)) return undefined;
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse {}
  adoptPrototype(AppRequest.prototype, request);
  adoptPrototype(AppResponse.prototype, response);
  const target = app as unknown as { request: object; response: object };
  target.request = AppRequest.prototype;
  target.response = AppResponse.prototype;
  const classes = {
    IncomingMessage: AppRequest as unknown as IncomingMessageClass,
    ServerResponse: AppResponse as unknown as ServerResponseClass,
  };
  classesByApp.set(app, classes);
  return classes;
}

/** Node's own answers to a parse error it handles itself (node:_http_server socketOnError). */
const CLIENT_ERROR_RESPONSES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/** What node:http does with a client error when nobody listens for 'clientError'; with
 * `respond`, the status line plus the service's headers and body, then `close` (a
 * lingering close: the client may still be sending the rest of an oversized head, and a
 * reset would discard the answer before it reads it). */
function defaultClientError(
  err: NodeJS.ErrnoException,
  socket: net.Socket | Duplex,
  respond?: (status: number) => ClientErrorResponse,
  close?: (socket: net.Socket | Duplex) => void,
): void {
  const message = (socket as { _httpMessage?: { _headerSent?: boolean } | null })._httpMessage;
  if (socket.writable && (!message || !message._headerSent)) {
    let line = CLIENT_ERROR_RESPONSES[err.code ?? ''] ?? '400 Bad Request';
    if (respond === undefined) {
      socket.write(`HTTP/1.1 ${line}\r\nConnection: close\r\n\r\n`);
    } else {
      // Shared ARCHITECTURE "the one method table": anything else -> 405.
      if (err.code === 'HPE_INVALID_METHOD') line = '405 Method Not Allowed';
      const { headers, body } = respond(Number(line.slice(0, 3)));
      let head = `HTTP/1.1 ${line}\r\n`;
      for (const [name, value] of Object.entries(headers)) {
        if (!/[\r\n]/.test(name + value)) head += `${name}: ${value}\r\n`;
      }
      socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      if (close) {
        close(socket);
        return;
      }
    }
  }
  socket.destroy(err);
}

const LIST_START = Buffer.from('LI', 'latin1');

/**
 * The bytes a `LIST` request starts with, from the parse error node:http raised on it, or
 * null if the error is not that. llhttp rejects `LIST` at its `S` (`L` and `LI` begin
 * `LINK`), so the request starts two bytes before the error; when those arrived in an
 * earlier read, they are known (`L` or `LI`) and put back.
 */
export function listRequestStart(err: { code?: string; bytesParsed?: number; rawPacket?: Buffer }): Buffer | null {
  const { bytesParsed, rawPacket } = err;
  if (err.code !== 'HPE_INVALID_METHOD' || typeof bytesParsed !== 'number' || !Buffer.isBuffer(rawPacket)) return null;
  if (bytesParsed < 0 || bytesParsed > rawPacket.length) return null;
  const missing = Math.max(0, 2 - bytesParsed);
  const start = missing > 0 ? Buffer.concat([LIST_START.subarray(0, missing), rawPacket]) : rawPacket.subarray(bytesParsed - 2);
  const n = Math.min(5, start.length);
  for (let i = 0; i < n; i++) if (start[i] !== 'LIST '.charCodeAt(i)) return null;
  return start;
}

const NODE_SOCKET_EVENTS = ['data', 'end', 'close', 'drain', 'error', 'timeout', 'resume', 'pause'] as const;
type SocketListeners = Array<[string, (...args: unknown[]) => void]>;

interface HttpCommon {
  freeParser?: (parser: unknown, req: unknown, socket: unknown) => void;
}
// node:http's own parser release (unconsume, detach, back to its pool), as it does on an
// upgrade; a manual detach if a later Node stops exporting it.
function loadHttpCommon(): HttpCommon {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('_http_common') as HttpCommon;
  } catch {
    return {};
  }
}
const httpCommon = loadHttpCommon();

interface ConnectionState {
  active: number;
  /** node:http's listeners on the socket (removed when the connection is taken over). */
  nodeListeners: SocketListeners;
  /** A LIST arrived: the bytes node:http had read from it on, kept for the framed path
   * until the in-flight responses have ended (the rest waits in the kernel). */
  takeover: Buffer | null;
  /** Moved to the LIST framer (FramedSocket) for the rest of the connection. */
  framed: boolean;
  /** Closing on node:http's path: reading and dropping until the client closes. */
  lingering: boolean;
}

/**
 * Listens with a LIST-capable HTTP/1.1 front end (keep-alive and pipelining included).
 * `app` is any request listener, typically an Express app.
 *
 * A connection starts on node:http's own path: its C++ parser reads the socket directly,
 * as in any Node server. llhttp does not know `LIST` (reference 0.1) and raises a parse
 * error at it; the listener then takes the connection over: node:http's parser and
 * listeners are detached (after the responses to earlier pipelined requests have ended),
 * and from the `LIST` on the connection's bytes pass through RequestFramer, which rewrites
 * `LIST` to `GET` plus a secret marker header, into the same http.Server. Any other parse
 * error is answered as node:http answers it (400 and close).
 *
 * Also on node:http's path: an orderly close after a response lingers (as the framed path
 * does), and a body still arriving after its response ended (node:http reads and drops
 * it) is cut off past `maxRequestBytes`.
 */
export function createListener(app: RequestListener, options: ListenerOptions): Promise<Listener> {
  const secret = randomBytes(16).toString('hex');
  const markerLine = Buffer.from(`${LIST_MARKER_HEADER}: ${secret}\r\n`, 'latin1');
  const maxBody = options.maxRequestBytes ?? -1;
  const connections = new Map<net.Socket, ConnectionState>();
  // Not a Set: slot-set.ts (a Set churned per request kept every response alive for scavenges).
  const inflight = new SlotSet<ServerResponse>();
  let closing = false;
  let onDrained: (() => void) | undefined;
  const idleGc = options.idleGc && options.idleGc.idleMs > 0 ? createIdleGc(options.idleGc, () => inflight.size) : undefined;

  const checkDrained = () => {
    if (closing && connections.size === 0 && onDrained) onDrained();
  };

  const server = http.createServer({ keepAliveTimeout: options.keepAliveTimeoutMs ?? 5000, ...prototypeClassesFor(app) }, (req, res) => {
    stripMarker(req, secret);
    const socket = req.socket as net.Socket | FramedSocket;
    const raw = socket instanceof FramedSocket ? socket.raw : socket;
    const state = connections.get(raw);
    if (state) state.active++;
    const slot = inflight.add(res);
    idleGc?.arrived();
    // During shutdown, answer but do not keep the connection.
    if (closing) res.setHeader('Connection', 'close');
    onResponseClose(res, () => {
      inflight.delete(slot);
      idleGc?.finished();
      if (state) {
        if (maxBody >= 0 && !req.complete && !state.framed) capDroppedBody(req, raw);
        state.active--;
        if (state.active === 0) {
          if (state.takeover) takeOver(raw, state);
          else if (closing) endSoon(raw);
        }
      }
    });
    app(req, res);
  });

  /**
   * After its response, node:http reads and drops the rest of a request body nobody read;
   * past the connection's cap the connection is closed instead (lingering, so the
   * response already written is not lost to a reset). Counting needs the bytes in
   * JavaScript: a 'data' listener moves node:http's parser from reading the socket itself
   * to reading its 'data' events (node:http does that for any such listener), for the rest
   * of this connection.
   */
  function capDroppedBody(req: IncomingMessage, raw: net.Socket): void {
    let seen = 0;
    const count = (chunk: Buffer) => {
      if (req.complete) {
        raw.removeListener('data', count);
        return;
      }
      seen += chunk.length;
      if (seen > maxBody) {
        raw.removeListener('data', count);
        lingerNative(raw);
      }
    };
    raw.on('data', count);
  }

  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket | Duplex) => {
    const state = socket instanceof net.Socket ? connections.get(socket) : undefined;
    // Waiting for a takeover: node:http's end-of-input check on its stopped parser.
    if (state?.takeover) return;
    const start = state && !state.framed ? listRequestStart(err) : null;
    if (!state || !start) {
      defaultClientError(err, socket, options.clientErrorResponse, closeAfterClientError);
      return;
    }
    // Stop node:http's parser (it would raise the same error on every later read) and the
    // reads: what follows stays in the kernel's buffer (backpressure on the client) until
    // the framed path takes the connection.
    const raw = socket as net.Socket;
    stopNodeParser(raw, state);
    setReading(raw, false);
    state.takeover = start;
    // Not from inside the parser's own callback; and only once earlier pipelined
    // requests on this connection have been answered (their responses go out first).
    setImmediate(() => {
      if (state.active === 0) takeOver(raw, state);
    });
  });

  /**
   * Starts or stops reading the socket's handle, as node:http does for a socket its parser
   * consumes (net's own pause/resume do not reach the handle then: its Readable still
   * counts the read it started before the parser took the handle over).
   */
  function setReading(raw: net.Socket, on: boolean): void {
    const handle = (raw as unknown as { _handle?: { reading: boolean; readStart(): number; readStop(): number } | null })._handle;
    if (!handle || handle.reading === on || raw.destroyed) return;
    handle.reading = on;
    if (on) handle.readStart();
    else handle.readStop();
  }

  /** Detaches node:http's parser and its data listener from a socket (the rest stay). */
  function stopNodeParser(raw: net.Socket, state: ConnectionState): void {
    const parser = (raw as { parser?: { _consumed?: boolean; unconsume?: () => void } | null }).parser;
    if (parser?._consumed) {
      parser.unconsume?.();
      parser._consumed = false;
    }
    state.nodeListeners = state.nodeListeners.filter(([event, fn]) => {
      if (event !== 'data' && event !== 'resume' && event !== 'pause') return true;
      raw.removeListener(event, fn);
      return false;
    });
  }

  /** Releases everything node:http attached to the socket. */
  function detachNode(raw: net.Socket, state: ConnectionState): void {
    stopNodeParser(raw, state);
    for (const [event, fn] of state.nodeListeners) raw.removeListener(event, fn);
    state.nodeListeners = [];
    const parser = (raw as { parser?: unknown }).parser;
    if (parser) {
      if (typeof httpCommon.freeParser === 'function') httpCommon.freeParser(parser, null, raw);
      else (raw as { parser?: unknown }).parser = null;
    }
    // node:http's wrappers of on/addListener/prependListener and its setEncoding guard.
    for (const own of ['on', 'addListener', 'prependListener', 'setEncoding', 'destroySoon']) {
      if (Object.prototype.hasOwnProperty.call(raw, own)) delete (raw as unknown as Record<string, unknown>)[own];
    }
    // node:http's keep-alive timer; the framed connection sets its own.
    raw.setTimeout(0);
  }

  function takeOver(raw: net.Socket, state: ConnectionState): void {
    const start = state.takeover;
    if (!start || state.framed || state.lingering || raw.destroyed) return;
    // Reads are stopped until the end of this function: the framed socket sees the bytes
    // in order.
    detachNode(raw, state);
    state.takeover = null;
    const framed = new FramedSocket(raw, new RequestFramer({ markerLine, maxBodyBytes: options.maxRequestBytes }));
    state.framed = true;
    server.emit('connection', framed);
    framed.feed(start);
    if (raw.readableEnded) framed.push(null);
    else setReading(raw, true);
  }

  /** After a client error answered in the service's shape: close without losing the answer. */
  function closeAfterClientError(socket: net.Socket | Duplex): void {
    // FramedSocket: a destroy without an error lingers (see its _destroy).
    if (socket instanceof FramedSocket) socket.destroy();
    else if (socket instanceof net.Socket && connections.has(socket)) lingerNative(socket);
    else socket.destroy();
  }

  /**
   * Lingering close on node:http's path (node:http calls destroySoon after a response that
   * closes the connection): half-close after the pending writes, stop parsing, read and
   * drop what still arrives, and release the socket when the client closes or after
   * LINGER_MS. As FramedSocket.linger.
   */
  function lingerNative(raw: net.Socket): void {
    const state = connections.get(raw);
    if (!state || state.framed || state.lingering) return;
    state.lingering = true;
    state.takeover = null;
    if (raw.readableEnded || raw.destroyed) {
      endSoon(raw);
      return;
    }
    stopNodeParser(raw, state);
    raw.on('data', () => undefined);
    setReading(raw, true);
    releaseAfterLinger(raw);
    raw.end();
  }

  const onConnection = (raw: net.Socket): void => {
    if (closing) {
      raw.destroy();
      return;
    }
    raw.once('close', () => {
      connections.delete(raw);
      checkDrained();
    });
    raw.on('error', () => {
      // node:http (or the FramedSocket) reports errors; this only prevents an unhandled 'error'.
    });
    const before = NODE_SOCKET_EVENTS.map((event) => raw.listeners(event));
    server.emit('connection', raw);
    const nodeListeners: SocketListeners = [];
    NODE_SOCKET_EVENTS.forEach((event, i) => {
      const had = before[i] as unknown[];
      for (const fn of raw.listeners(event)) if (!had.includes(fn)) nodeListeners.push([event, fn as (...args: unknown[]) => void]);
    });
    connections.set(raw, { active: 0, nodeListeners, takeover: null, framed: false, lingering: false });
    (raw as { destroySoon: () => void }).destroySoon = () => lingerNative(raw);
  };
  // A TLS connection comes here after its handshake (a tls.TLSSocket is a net.Socket):
  // node:http parses it exactly like a plain one, and a LIST moves it to the framer the
  // same way (issue 28, item 2). A failed handshake never reaches the http.Server.
  const netServer = options.tls
    ? tls.createServer({ ...options.tls, noDelay: true } as tls.TlsOptions, onConnection)
    : net.createServer({ noDelay: true }, onConnection);

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
        url: `${options.tls ? 'https' : 'http'}://${host}:${addr.port}`,
        inFlight: () => inflight.size,
        close(closeOptions: CloseOptions = {}) {
          closed ??= new Promise<void>((done) => {
            closing = true;
            idleGc?.close();
            const drainTimeoutMs = closeOptions.drainTimeoutMs ?? 10000;
            netServer.close();
            inflight.forEach((res) => {
              if (!res.headersSent) res.setHeader('Connection', 'close');
            });
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
