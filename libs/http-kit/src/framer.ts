// Node's HTTP parser (llhttp) rejects the `LIST` method with 400 HPE_INVALID_METHOD before
// any JavaScript runs (reference 0.1). Real Vault clients send LIST, so the listener puts
// this framer between the TCP socket and http.Server: it finds where each request starts
// on a keep-alive/pipelined connection (by following Content-Length and chunked framing)
// and rewrites a `LIST` request line to `GET`, adding a marker header whose value is a
// per-process secret so the request handler can restore the method. Clients cannot forge
// the marker without the secret. Anything the framer does not understand is passed through
// untouched for the rest of the connection, so Node answers malformed input with its usual
// 400 and closes.

const CR = 13;
const LF = 10;
const LIST_PREFIX = Buffer.from('LIST ', 'latin1');
const GET = Buffer.from('GET', 'latin1');

const enum State {
  Head,
  Body,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
  Passthrough,
}

export interface FramerOptions {
  /** The complete header line injected into rewritten requests (`name: value\r\n`). */
  markerLine: Buffer;
  /** Hard per-request body cap; negative or undefined = none. */
  maxBodyBytes?: number;
  /** Heads larger than this are passed through (Node rejects them with 431). */
  maxHeadBytes?: number;
}

export type PushResult = 'ok' | 'too-large';

/** Whether the bytes at `pos` are a prefix of (or start with) `LIST `. */
function mayBeList(data: Buffer, pos: number): boolean {
  const n = Math.min(5, data.length - pos);
  for (let i = 0; i < n; i++) if (data[pos + i] !== LIST_PREFIX[i]) return false;
  return true;
}

/** Index just past the blank line that ends a head (CRLF or bare LF), or -1. */
function findHeadEnd(data: Buffer, from: number): number {
  let i = data.indexOf(LF, from);
  while (i !== -1) {
    const n1 = data[i + 1];
    if (n1 === LF) return i + 2;
    if (n1 === CR) {
      const n2 = data[i + 2];
      if (n2 === LF) return i + 3;
      if (n2 === undefined) return -1;
    }
    if (n1 === undefined) return -1;
    i = data.indexOf(LF, i + 1);
  }
  return -1;
}

export class RequestFramer {
  private state: State = State.Head;
  private pending: Buffer | undefined;
  private pendingForwarded = 0;
  private remaining = 0;
  private bodyBytes = 0;
  private line = '';
  private readonly maxBody: number;
  private readonly maxHead: number;
  /** Number of LIST request lines rewritten so far (observability and tests). */
  rewritten = 0;

  constructor(private readonly options: FramerOptions) {
    this.maxBody = options.maxBodyBytes ?? -1;
    this.maxHead = options.maxHeadBytes ?? 64 * 1024;
  }

  get passthrough(): boolean {
    return this.state === State.Passthrough;
  }

  /** Appends the bytes to forward for `chunk` to `out`. */
  push(chunk: Buffer, out: Buffer[]): PushResult {
    if (this.state === State.Passthrough) {
      out.push(chunk);
      return 'ok';
    }
    let data = chunk;
    // Bytes of an unfinished head that were already forwarded (only when it cannot be LIST).
    let forwarded = 0;
    if (this.pending) {
      data = Buffer.concat([this.pending, chunk]);
      forwarded = this.pendingForwarded;
      this.pending = undefined;
      this.pendingForwarded = 0;
    }
    let pos = 0;
    const len = data.length;
    while (pos < len) {
      switch (this.state) {
        case State.Head: {
          if (forwarded === 0) {
            // RFC 9112 2.2: empty lines before a request line are ignored (llhttp agrees).
            let p = pos;
            while (p < len && (data[p] === CR || data[p] === LF)) p++;
            if (p > pos) {
              out.push(data.subarray(pos, p));
              pos = p;
              if (pos >= len) return 'ok';
            }
          }
          const end = findHeadEnd(data, pos);
          if (end === -1) {
            if (len - pos > this.maxHead) return this.toPassthrough(data, pos + forwarded, out);
            // Only a head that may still turn out to be LIST is held back; anything else
            // goes on at once (Node answers garbage without waiting for us).
            if (!mayBeList(data, pos)) {
              if (pos + forwarded < len) out.push(data.subarray(pos + forwarded));
              this.pendingForwarded = len - pos;
            }
            this.pending = data.subarray(pos);
            return 'ok';
          }
          const head = data.subarray(pos, end);
          pos = end;
          const understood = this.onHead(head, forwarded, out);
          forwarded = 0;
          if (!understood) return this.toPassthrough(data, pos, out);
          break;
        }
        case State.Body: {
          const take = Math.min(this.remaining, len - pos);
          out.push(data.subarray(pos, pos + take));
          pos += take;
          this.remaining -= take;
          if (this.countBody(take)) return 'too-large';
          if (this.remaining === 0) this.state = State.Head;
          break;
        }
        case State.ChunkSize:
        case State.Trailer: {
          const nl = data.indexOf(LF, pos);
          const stop = nl === -1 ? len : nl + 1;
          const piece = data.subarray(pos, stop);
          out.push(piece);
          pos = stop;
          this.line += piece.toString('latin1');
          if (this.line.length > 8192) return this.toPassthrough(data, pos, out);
          if (nl === -1) return 'ok';
          const text = this.line.replace(/\r?\n$/, '');
          this.line = '';
          if (this.state === State.Trailer) {
            if (text === '') this.state = State.Head;
            break;
          }
          const semi = text.indexOf(';');
          const hex = (semi === -1 ? text : text.slice(0, semi)).trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return this.toPassthrough(data, pos, out);
          const size = parseInt(hex, 16);
          if (size === 0) this.state = State.Trailer;
          else {
            this.remaining = size;
            this.state = State.ChunkData;
          }
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, len - pos);
          out.push(data.subarray(pos, pos + take));
          pos += take;
          this.remaining -= take;
          if (this.countBody(take)) return 'too-large';
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.remaining = 2;
          }
          break;
        }
        case State.ChunkDataEnd: {
          // Exactly CRLF after the chunk data; anything else is Node's to reject.
          const expected = this.remaining === 2 ? CR : LF;
          if (data[pos] !== expected) return this.toPassthrough(data, pos, out);
          out.push(data.subarray(pos, pos + 1));
          pos += 1;
          this.remaining -= 1;
          if (this.remaining === 0) this.state = State.ChunkSize;
          break;
        }
        default:
          out.push(data.subarray(pos));
          return 'ok';
      }
    }
    return 'ok';
  }

  private countBody(n: number): boolean {
    if (this.maxBody < 0) return false;
    this.bodyBytes += n;
    return this.bodyBytes > this.maxBody;
  }

  private toPassthrough(data: Buffer, pos: number, out: Buffer[]): PushResult {
    this.state = State.Passthrough;
    this.pending = undefined;
    this.pendingForwarded = 0;
    if (pos < data.length) out.push(data.subarray(pos));
    return 'ok';
  }

  /** Forwards one request head (minus its first `forwarded` bytes, already sent); false
   * when the framing is not understood. */
  private onHead(head: Buffer, forwarded: number, out: Buffer[]): boolean {
    const firstLf = head.indexOf(LF);
    const isList = head.length > 5 && head.compare(LIST_PREFIX, 0, 5, 0, 5) === 0;
    let contentLength = -1;
    let chunked = false;
    let understood = true;
    // Only the framing headers matter; a latin1 view keeps bytes 1:1.
    const text = head.toString('latin1', firstLf + 1);
    const lines = text.split('\n');
    const sp = head.indexOf(0x20);
    const method = sp > 0 ? head.toString('latin1', 0, sp) : '';
    if (method === 'CONNECT') understood = false;
    for (const rawLine of lines) {
      const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
      if (line === '') continue;
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).toLowerCase();
      if (name === 'content-length') {
        const value = line.slice(colon + 1).trim();
        if (contentLength !== -1 || !/^\d{1,15}$/.test(value)) understood = false;
        else contentLength = Number(value);
      } else if (name === 'transfer-encoding') {
        const codings = line.slice(colon + 1).split(',');
        const last = (codings[codings.length - 1] ?? '').trim().toLowerCase();
        if (chunked || last !== 'chunked') understood = false;
        chunked = true;
      } else if (name === 'upgrade') {
        // After an upgrade the bytes are no longer HTTP requests.
        understood = false;
      }
    }
    if (chunked && contentLength !== -1) understood = false;

    if (isList && firstLf > 0 && understood && forwarded === 0) {
      out.push(GET, head.subarray(4, firstLf + 1), this.options.markerLine, head.subarray(firstLf + 1));
      this.rewritten++;
    } else if (forwarded < head.length) {
      out.push(head.subarray(forwarded));
    }
    if (!understood) return false;
    this.bodyBytes = 0;
    if (chunked) {
      this.state = State.ChunkSize;
      this.line = '';
    } else if (contentLength > 0) {
      this.state = State.Body;
      // Over the cap, the head is still forwarded so the app answers 413 in its own
      // shape; the cap only trips if the client keeps sending the body.
      this.remaining = contentLength;
    } else {
      this.state = State.Head;
    }
    return true;
  }
}
