// The subscriber side of the scheduler-event-stream scenario, in a process of its own (a
// load generator must not share the server's CPU accounting or its event loop): opens N
// event streams, prints READY once every stream has its first heartbeat, then records,
// for every frame delivered to every stream, now - the sending time the writer put in the
// job's Meta (both clocks are this machine's wall clock, with sub-millisecond precision).
// On a line `report` on stdin it prints one JSON line of figures and exits.
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
let frames = 0;
let heartbeats = 0;
let ready = 0;
let errors = 0;
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

for (let i = 0; i < count; i++) {
  let primed = false;
  let rest = '';
  const req = http.get(url, { agent }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const text = rest + chunk;
      let start = 0;
      let nl = text.indexOf('\n', start);
      while (nl !== -1) {
        const line = text.slice(start, nl);
        start = nl + 1;
        nl = text.indexOf('\n', start);
        if (line === '{}') {
          heartbeats++;
          if (!primed) {
            primed = true;
            if (++ready === count) process.stdout.write('READY\n');
          }
          continue;
        }
        const frame = JSON.parse(line) as { Events?: Array<{ Topic: string; Payload: { Job?: { Meta?: { sent?: string } } } }>; Error?: string };
        if (frame.Error) {
          errors++;
          continue;
        }
        const sent = frame.Events?.find((e) => e.Topic === 'Job')?.Payload.Job?.Meta?.sent;
        if (sent === undefined) continue;
        frames++;
        latencies.push(wallMs() - Number(sent));
      }
      rest = text.slice(start);
    });
    res.on('error', () => errors++);
  });
  req.on('error', () => errors++);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'report') return;
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => (sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number));
  process.stdout.write(`${JSON.stringify({ streams: count, ready, frames, heartbeats, errors, p50: at(50), p99: at(99), max: at(100) })}\n`);
  process.exit(0);
});
