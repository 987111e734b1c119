// The subscriber side of the scheduler-event-stream scenario, in a process of its own (a
// load generator must not share the server's CPU accounting or its event loop): opens N
// event streams, prints READY once every stream has its first heartbeat, then records,
// for every frame delivered to every stream, now - the sending time the writer put in the
// job's Meta (both clocks are this machine's wall clock, with sub-millisecond precision).
// It also records the fan-out spread: for every frame, its arrival on each stream minus
// its first arrival on any stream (the stream's own cost, without the write before it).
// On a line `report` on stdin it prints one JSON line of figures and exits.
//
// Lean on purpose (500 streams share one core with the server's): a line is not parsed
// as JSON; its Index is read from the envelope's start (`{"Index":N,`, the server's field
// order) and the sending time from the first `"sent":"` (the Job event's Meta comes
// before the Evaluation's, which has none). Indexes are checked per stream: each must be
// above the previous one (no repeat, no reordering). With JSON.parse of every frame this
// process used 36 % of a core for ~33 frames/s to 500 streams; scanning, 24 % for ~61.
import http from 'node:http';
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
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const INDEX = '{"Index":';
const SENT = '"sent":"';

for (let i = 0; i < count; i++) {
  let primed = false;
  let rest = '';
  let last = 0;
  const req = http.get(url, { agent }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const text = rest.length === 0 ? chunk : rest + chunk;
      let start = 0;
      let nl = text.indexOf('\n', start);
      const now = wallMs();
      while (nl !== -1) {
        if (nl - start === 2 && text.startsWith('{}', start)) {
          heartbeats++;
          if (!primed) {
            primed = true;
            if (++ready === count) process.stdout.write('READY\n');
          }
        } else if (text.startsWith(INDEX, start)) {
          allFrames++;
          const index = Number.parseInt(text.slice(start + INDEX.length, start + INDEX.length + 20), 10);
          if (!(index > last)) outOfOrder++;
          last = index;
          const first = firstSeen.get(index);
          if (first === undefined) firstSeen.set(index, now);
          spreads.push(first === undefined ? 0 : now - first);
          const s = text.indexOf(SENT, start);
          if (s !== -1 && s < nl) {
            const from = s + SENT.length;
            const sent = Number(text.slice(from, text.indexOf('"', from)));
            frames++;
            latencies.push(now - sent);
          }
        } else {
          // An error line ({"Error":...}) or anything else.
          errors++;
        }
        start = nl + 1;
        nl = text.indexOf('\n', start);
      }
      rest = text.slice(start);
    });
    res.on('error', () => errors++);
  });
  req.on('error', () => errors++);
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
