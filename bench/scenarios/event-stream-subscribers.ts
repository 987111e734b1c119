// The subscriber side of the scheduler-event-stream scenario, in a process of its own (a
// load generator must not share the server's CPU accounting or its event loop): opens N
// event streams, prints READY once every stream has its first heartbeat, then records,
// for every frame delivered to every stream, now - the sending time the writer put in the
// job's Meta (both clocks are this machine's wall clock, with sub-millisecond precision).
// It also records the fan-out spread: for every frame, its arrival on each stream minus
// its first arrival on any stream (the stream's own cost, without the write before it).
// On a line `report` on stdin it prints one JSON line of figures and exits.
//
// Lean on purpose (500 streams share two cores with the server, PostgreSQL and the
// writer): each stream is a raw TCP socket with a hand-written request, read as latin1
// text, and a line is not parsed as JSON: its Index is read from the envelope's start
// (`{"Index":N,`, the server's field order) and the sending time from the first
// `"sent":"` (the Job event's Meta comes before the Evaluation's, which has none). The
// chunked transfer coding is skipped rather than decoded: the server writes whole lines
// in each chunk, so a line that does not start with `{` is a chunk size or the CRLF after
// a chunk (a line split across chunks would show up as errors). Indexes are checked per
// stream: each must be above the previous one (no repeat, no reordering). Through
// node:http's client and JSON.parse, this process used more CPU than the server.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const [url, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!url || !Number.isInteger(count) || count <= 0) {
  process.stderr.write('usage: event-stream-subscribers.ts <stream url> <count>\n');
  process.exit(2);
}
const wallMs = (): number => performance.timeOrigin + performance.now();
const latencies: number[] = [];
const spreads: number[] = [];
// Index -> first arrival (wall ms) of that frame on any stream.
const firstSeen = new Map<number, number>();
// Frames carrying a job registration (timed), frames of any kind, lines not understood.
let frames = 0;
let allFrames = 0;
let heartbeats = 0;
let ready = 0;
let errors = 0;
let outOfOrder = 0;
const INDEX = '{"Index":';
const SENT = '"sent":"';
const target = new URL(url);
const request = `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nAccept: application/json\r\n\r\n`;

function onLine(text: string, start: number, end: number, stream: { primed: boolean; last: number }, now: number): void {
  if (end - start === 2 && text.startsWith('{}', start)) {
    heartbeats++;
    if (!stream.primed) {
      stream.primed = true;
      if (++ready === count) process.stdout.write('READY\n');
    }
  } else if (text.startsWith(INDEX, start)) {
    allFrames++;
    const index = Number.parseInt(text.slice(start + INDEX.length, start + INDEX.length + 20), 10);
    if (!(index > stream.last)) outOfOrder++;
    stream.last = index;
    const first = firstSeen.get(index);
    if (first === undefined) firstSeen.set(index, now);
    spreads.push(first === undefined ? 0 : now - first);
    const s = text.indexOf(SENT, start);
    if (s !== -1 && s < end) {
      const from = s + SENT.length;
      frames++;
      latencies.push(now - Number(text.slice(from, text.indexOf('"', from))));
    }
  } else if (text.charCodeAt(start) === 0x7b /* { */) {
    // An error line ({"Error":...}).
    errors++;
  }
  // Anything else: a chunk size line or the CRLF closing a chunk.
}

for (let i = 0; i < count; i++) {
  const stream = { primed: false, last: 0 };
  let headers = true;
  let rest = '';
  const socket = net.connect({ host: target.hostname, port: Number(target.port) });
  socket.setEncoding('latin1');
  socket.on('connect', () => socket.write(request));
  socket.on('data', (chunk: string) => {
    let text = rest.length === 0 ? chunk : rest + chunk;
    if (headers) {
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) {
        rest = text;
        return;
      }
      if (!text.startsWith('HTTP/1.1 200')) errors++;
      headers = false;
      text = text.slice(end + 4);
    }
    const now = wallMs();
    let start = 0;
    let nl = text.indexOf('\n');
    while (nl !== -1) {
      onLine(text, start, nl, stream, now);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    rest = text.slice(start);
  });
  socket.on('error', () => errors++);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'report') return;
  const pct = (values: number[]) => {
    const sorted = Float64Array.from(values).sort();
    return (p: number) => (sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number));
  };
  const at = pct(latencies);
  const spread = pct(spreads);
  process.stdout.write(
    `${JSON.stringify({ streams: count, ready, frames, allFrames, heartbeats, errors, outOfOrder, p50: at(50), p99: at(99), max: at(100), spreadP50: spread(50), spreadP99: spread(99) })}\n`,
  );
  process.exit(0);
});
