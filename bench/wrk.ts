// HTTP load from an external C client, wrk (Debian's `wrk`, installed by
// scripts/ensure-test-env.sh), in a process of its own (issue 30, item 1).
//
// autocannon is JavaScript: on two cores, its thread competes with the server for CPU and
// its per-request cost bounds the bare baseline, which flatters every ratio. wrk spends a
// fraction of that per request, so the bare server is measured nearer its real rate and
// each ratio says what the service costs. `make bench` uses it by default (BENCH_CLIENT=wrk);
// the autocannon modes stay for comparison with older figures.
//
// A scenario's requests (bench/scenario.ts, HttpRequestSpec) become a Lua script: one
// request, a list cycled through in order (by wrk's thread, over its connections), or
// `{key}` replaced by a uniformly random integer below `keys` on every send. The script's
// done() prints the figures as one JSON line: wrk's own summary, latency in microseconds
// from its histogram.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpRequestSpec } from './scenario';

export interface WrkFigures {
  readonly requests: number;
  readonly durationUs: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly errors: { readonly connect: number; readonly read: number; readonly write: number; readonly status: number; readonly timeout: number };
}

export interface WrkOptions {
  readonly url: string;
  readonly requests?: readonly HttpRequestSpec[];
  readonly connections: number;
  readonly durationMs: number;
  /** wrk threads (-t); 1, as issue 30's figures (`wrk -t1 -c32`). */
  readonly threads?: number;
  /** wrk's socket/request timeout (-T). */
  readonly timeoutMs?: number;
}

const MARK = 'WRK_FIGURES ';

/** A Lua string literal: printable ASCII as is, every other byte (UTF-8) as a three-digit
 * decimal escape (Lua reads up to three digits: `\34` before a digit would swallow it). */
function luaString(s: string): string {
  return `"${Buffer.from(s, 'utf8')
    .toString('latin1')
    .replace(/[^\x20-\x7e]|["\\]/g, (c) => `\\${String(c.charCodeAt(0)).padStart(3, '0')}`)}"`;
}

/** The Lua script that sends `requests` (none: wrk's default GET of the URL's path). */
export function wrkScript(requests: readonly HttpRequestSpec[] | undefined): string {
  const lines: string[] = [];
  if (requests && requests.length > 0) {
    lines.push('local specs = {');
    for (const r of requests) {
      const headers = Object.entries(r.headers ?? {})
        .map(([k, v]) => `[${luaString(k)}] = ${luaString(v)}`)
        .join(', ');
      lines.push(
        `  { method = ${luaString(r.method ?? 'GET')}, path = ${luaString(r.path)}, headers = { ${headers} }, body = ${
          r.body === undefined ? 'nil' : luaString(r.body)
        }, keys = ${r.keys ?? 0} },`,
      );
    }
    lines.push('}');
    lines.push(
      ...[
        '-- Fixed requests are formatted once, in init(): wrk.format adds the Host header,',
        '-- which wrk knows only from then on. Those with {key} are formatted on every send.',
        'local ready = {}',
        'local n = 0',
        'function init(args)',
        '  math.randomseed(os.time() * 1000 + math.floor(os.clock() * 1e6) % 1000)',
        '  for i, s in ipairs(specs) do',
        '    if s.keys == 0 then ready[i] = wrk.format(s.method, s.path, s.headers, s.body) end',
        '  end',
        'end',
        'function request()',
        '  n = n % #specs + 1',
        '  local s = specs[n]',
        '  if s.keys == 0 then return ready[n] end',
        '  local key = tostring(math.random(0, s.keys - 1))',
        '  return wrk.format(s.method, (s.path:gsub("{key}", key)), s.headers, s.body)',
        'end',
      ],
    );
  }
  lines.push(
    ...[
      'function done(summary, latency, requests)',
      '  local e = summary.errors',
      `  io.write(string.format('${MARK}{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\\n',`,
      '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout))',
      'end',
    ],
  );
  return `${lines.join('\n')}\n`;
}

/** The figures line a wrkScript's done() printed, from wrk's whole output. */
export function parseWrkOutput(stdout: string): WrkFigures {
  const line = stdout.split('\n').find((l) => l.startsWith(MARK));
  if (!line) throw new Error(`wrk printed no figures:\n${stdout.trim()}`);
  return JSON.parse(line.slice(MARK.length)) as WrkFigures;
}

/** A wrk run ready to start: its script written (so that none of that counts as the run's CPU). */
export interface PreparedWrk {
  run(): Promise<WrkFigures>;
}

/** Runs wrk against the URL and returns its figures. wrk must be on PATH. */
export function runWrk(options: WrkOptions): Promise<WrkFigures> {
  return prepareWrk(options).run();
}

export function prepareWrk(options: WrkOptions): PreparedWrk {
  const dir = mkdtempSync(join(tmpdir(), 'selfstack-wrk-'));
  const script = join(dir, 'script.lua');
  writeFileSync(script, wrkScript(options.requests));
  const seconds = Math.max(1, Math.round(options.durationMs / 1000));
  const args = [
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${seconds}s`,
    `-T${Math.max(1, Math.round((options.timeoutMs ?? 10_000) / 1000))}s`,
    '-s',
    script,
    options.url,
  ];
  const run = () =>
    new Promise<WrkFigures>((resolve, reject) => {
      execFile('wrk', args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true });
        if (err) {
          const code = (err as NodeJS.ErrnoException).code;
          reject(
            code === 'ENOENT'
              ? new Error('wrk is not installed: BENCH_CLIENT=wrk (the default) needs it (apt-get install -y wrk; scripts/ensure-test-env.sh installs it)')
              : new Error(`wrk failed: ${err.message}\n${stderr}${stdout}`),
          );
          return;
        }
        try {
          resolve(parseWrkOutput(stdout));
        } catch (parseErr) {
          // A Lua error in the script's hooks goes to stderr: say it with the figures' absence.
          reject(stderr.trim() === '' ? (parseErr as Error) : new Error(`${(parseErr as Error).message}\nwrk stderr: ${stderr.trim()}`));
        }
      });
    });
  return { run };
}
