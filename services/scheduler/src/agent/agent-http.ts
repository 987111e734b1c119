// The agent's HTTP listener (issue 26 item 5): the client endpoints the servers forward
// to (features/client), under the same paths the anchor's clients serve:
//   GET  /v1/client/fs/logs/:alloc   task, type (stdout|stderr), follow, offset, origin
//                                    (start|end), plain (raw bytes) or framed JSON
//   GET  /v1/client/fs/ls|stat|cat/:alloc?path=
//   GET  /v1/client/allocation/:id/stats
//   PUT|POST /v1/client/allocation/:id/restart   {TaskName, AllTasks}
//   GET  /v1/client/stats
//   GET  /v1/agent/health                        (unauthenticated: {client: {ok, message}})
// Only signed requests from a server are served (agent-auth.ts). Errors are plain text
// with the anchor's status codes; a path that leaves the allocation directory is a 400
// (`..`) or 403 (a symlink pointing out), never served.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import os from 'node:os';
import { join, posix, relative, isAbsolute } from 'node:path';
import { parseGoBool } from '@selfstack/config';
import type { Logger } from '@selfstack/logger';
import { AGENT_AUTH_HEADER, verifyAgentRequest } from './agent-auth';
import type { AllocRunner } from './alloc-runner';
import { logFileIndexes } from './drivers/log-rotator';
import { diskOf } from './fingerprint';

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface AgentHttpDeps {
  secret: () => string;
  /** GET /v1/agent/health (unauthenticated, as the anchor's): is the node registered? */
  registered?: () => boolean;
  runners: ReadonlyMap<string, AllocRunner>;
  allocRoot: string;
  logger: Logger;
}

function modeString(st: Stats): string {
  const t = st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'L' : '-';
  const bits = 'rwxrwxrwx';
  let out = t;
  for (let i = 0; i < 9; i++) out += st.mode & (1 << (8 - i)) ? bits[i] : '-';
  return out;
}

function fileInfo(name: string, st: Stats): Record<string, unknown> {
  return { Name: name, IsDir: st.isDirectory(), Size: st.size, FileMode: modeString(st), ModTime: st.mtime.toISOString(), ContentType: st.isDirectory() ? '' : 'text/plain; charset=utf-8' };
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null || v === '') return false;
  const b = parseGoBool(v);
  if (b === undefined) throw new HttpError(400, `Failed to parse ${name} field to boolean: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
  return b;
}

/** The file a request names, inside the allocation directory (or an error). */
export function resolveAllocPath(allocDir: string, requested: string): string {
  const p = requested === '' ? '/' : requested;
  if (p.includes('\0')) throw new HttpError(400, 'invalid path');
  const segments = p.split(/[\\/]+/);
  if (segments.includes('..')) throw new HttpError(400, `path ${JSON.stringify(p)} escapes the allocation directory`);
  const full = join(allocDir, posix.normalize(`/${p}`));
  const rel = relative(allocDir, full);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new HttpError(400, `path ${JSON.stringify(p)} escapes the allocation directory`);
  // A symlink inside may point anywhere: the real path must stay inside too.
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    throw new HttpError(404, `stat ${p}: no such file or directory`);
  }
  const realRel = relative(realpathSync(allocDir), real);
  if (realRel.startsWith('..') || isAbsolute(realRel)) throw new HttpError(403, 'Permission denied');
  return real;
}

interface LogPart {
  file: string;
  name: string;
  size: number;
}

function logParts(logDir: string, task: string, type: string): LogPart[] {
  const base = `${task}.${type}`;
  return logFileIndexes(logDir, base).map((i) => {
    const name = `${base}.${i}`;
    let size = 0;
    try {
      size = statSync(join(logDir, name)).size;
    } catch {
      // rotated away meanwhile
    }
    return { file: join(logDir, name), name, size };
  });
}

function readRange(file: string, from: number, max: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const size = fstatSync(fd).size;
    const len = Math.max(0, Math.min(max, size - from));
    const buf = Buffer.alloc(len);
    const n = len > 0 ? readSync(fd, buf, 0, len, from) : 0;
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

export function createAgentHttp(deps: AgentHttpDeps) {
  function runnerOf(id: string): AllocRunner {
    const r = deps.runners.get(id);
    if (!r) throw new HttpError(404, `Unknown allocation ${JSON.stringify(id)}`);
    return r;
  }

  function sendJson(res: ServerResponse, body: unknown, status = 200): void {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  }

  async function logs(req: IncomingMessage, res: ServerResponse, allocId: string, q: URLSearchParams): Promise<void> {
    const task = q.get('task') ?? '';
    if (task === '') throw new HttpError(400, 'must provide task name');
    const type = q.get('type') ?? '';
    if (type === '') throw new HttpError(400, 'must provide log type (stdout/stderr)');
    if (type !== 'stdout' && type !== 'stderr') throw new HttpError(400, `Invalid log type: ${JSON.stringify(type)}`);
    const follow = boolParam(q, 'follow');
    const plain = boolParam(q, 'plain');
    const offsetText = q.get('offset') ?? '';
    let offset = 0;
    if (offsetText !== '') {
      if (!/^-?\d+$/.test(offsetText)) throw new HttpError(400, `Failed to parse offset field to integer: strconv.ParseInt: parsing ${JSON.stringify(offsetText)}: invalid syntax`);
      offset = Number(offsetText);
      if (offset < 0) throw new HttpError(400, 'offset must be non-negative');
    }
    const origin = q.get('origin') ?? 'start';
    if (origin !== 'start' && origin !== 'end') throw new HttpError(400, 'origin must be start or end');
    const runner = runnerOf(allocId);
    if (!runner.hasTask(task) && !runner.taskNames().includes(task)) throw new HttpError(404, `unknown task name ${JSON.stringify(task)}`);
    const logDir = runner.dirs.logDir;

    // Position as (file index in the rotation, byte offset in it), over the concatenation.
    let parts = logParts(logDir, task, type);
    const total = parts.reduce((n, p) => n + p.size, 0);
    let skip = origin === 'start' ? offset : Math.max(0, total - offset);
    let fileIdx = 0;
    let pos = 0;
    while (fileIdx < parts.length && skip >= (parts[fileIdx] as LogPart).size && fileIdx < parts.length - 1) {
      skip -= (parts[fileIdx] as LogPart).size;
      fileIdx++;
    }
    pos = Math.min(skip, parts[fileIdx]?.size ?? 0);
    let currentName = parts[fileIdx]?.name ?? '';

    res.statusCode = 200;
    res.setHeader('Content-Type', plain ? 'text/plain; charset=utf-8' : 'application/json');
    res.setHeader('X-Accel-Buffering', 'no');
    let closed = false;
    req.on('close', () => (closed = true));
    res.on('close', () => (closed = true));
    const write = (data: Buffer, file: string, at: number) => {
      if (data.length === 0) return;
      if (plain) res.write(data);
      else res.write(JSON.stringify({ Data: data.toString('base64'), File: `alloc/logs/${file}`, Offset: at + data.length, FileEvent: '' }));
    };
    let lastBeat = Date.now();
    for (;;) {
      // Drain everything available.
      for (;;) {
        const part = parts[fileIdx];
        if (!part) break;
        if (part.name !== currentName) {
          currentName = part.name;
          pos = 0;
        }
        const chunk = readRange(part.file, pos, 64 * 1024);
        if (chunk.length > 0) {
          write(chunk, part.name, pos);
          pos += chunk.length;
          lastBeat = Date.now();
          continue;
        }
        if (fileIdx < parts.length - 1) {
          fileIdx++;
          continue;
        }
        break;
      }
      if (!follow || closed) break;
      const state = runner.record.TaskStates[task];
      if (state?.State === 'dead' || runner.terminal) {
        // One last look: the task may have written right before it ended.
        const again = logParts(logDir, task, type);
        const last = again.at(-1);
        if (!last || (last.name === currentName && last.size <= pos)) break;
        parts = again;
        fileIdx = Math.max(0, parts.findIndex((p) => p.name === currentName));
        continue;
      }
      await new Promise((r) => setTimeout(r, 200));
      if (closed) break;
      const now = logParts(logDir, task, type);
      const at = now.findIndex((p) => p.name === currentName);
      parts = now;
      fileIdx = at >= 0 ? at : 0;
      if (at < 0) pos = 0;
      if (!plain && Date.now() - lastBeat > 10_000) {
        res.write('{}');
        lastBeat = Date.now();
      }
    }
    res.end();
  }

  function fsOp(res: ServerResponse, op: string, allocId: string, q: URLSearchParams): void {
    const runner = runnerOf(allocId);
    const allocDir = runner.dirs.allocDir;
    const requested = q.get('path') ?? '/';
    const target = resolveAllocPath(allocDir, requested);
    const st = lstatSync(target);
    if (op === 'stat') return sendJson(res, fileInfo(target === realpathSync(allocDir) ? '/' : posix.basename(target), st));
    if (op === 'ls') {
      if (!st.isDirectory()) throw new HttpError(400, `${requested} is not a directory`);
      const entries = readdirSync(target)
        .map((name) => {
          try {
            return fileInfo(name, lstatSync(join(target, name)));
          } catch {
            return null;
          }
        })
        .filter((e) => e !== null);
      return sendJson(res, entries);
    }
    // cat
    if (st.isDirectory()) throw new HttpError(400, `file ${JSON.stringify(requested)} is a directory`);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(readRange(target, 0, st.size));
  }

  function allocStats(res: ServerResponse, allocId: string): void {
    const runner = runnerOf(allocId);
    const ts = Date.now() * 1_000_000;
    const tick = 100;
    const tasks: Record<string, unknown> = {};
    let rss = 0;
    let ticks = 0;
    for (const [name, u] of Object.entries(runner.taskUsage())) {
      const usage = u ?? { rssBytes: 0, cpuTotalTicks: 0, pids: [] };
      rss += usage.rssBytes;
      ticks += usage.cpuTotalTicks;
      tasks[name] = { ResourceUsage: resourceUsage(usage.rssBytes, usage.cpuTotalTicks, tick), Timestamp: ts, Pids: Object.fromEntries(usage.pids.map((p) => [String(p), null])) };
    }
    sendJson(res, { ResourceUsage: resourceUsage(rss, ticks, tick), Tasks: tasks, Timestamp: ts });
  }

  function resourceUsage(rss: number, ticks: number, tickHz: number) {
    return {
      MemoryStats: { RSS: rss, Cache: 0, Swap: 0, Usage: rss, MaxUsage: 0, KernelUsage: 0, KernelMaxUsage: 0, Measured: ['RSS'] },
      CpuStats: { SystemMode: 0, UserMode: 0, TotalTicks: (ticks / tickHz) * 1000, ThrottledPeriods: 0, ThrottledTime: 0, Percent: 0, Measured: ['Total Ticks'] },
      DeviceStats: [],
    };
  }

  function hostStats(res: ServerResponse): void {
    const free = os.freemem();
    const total = os.totalmem();
    const disk = diskOf(deps.allocRoot);
    const mhz = Math.max(...os.cpus().map((c) => c.speed), 0) || 1000;
    const cpus = os.cpus().map((c, i) => {
      const t = c.times;
      const sum = t.user + t.nice + t.sys + t.idle + t.irq || 1;
      return { CPU: `cpu${i}`, User: (100 * t.user) / sum, System: (100 * t.sys) / sum, Idle: (100 * t.idle) / sum, Total: (100 * (sum - t.idle)) / sum };
    });
    const diskStat = { Device: '', Mountpoint: deps.allocRoot, Size: disk.totalMb * 1048576, Used: (disk.totalMb - disk.freeMb) * 1048576, Available: disk.freeMb * 1048576, UsedPercent: disk.totalMb ? (100 * (disk.totalMb - disk.freeMb)) / disk.totalMb : 0, InodesUsedPercent: 0 };
    sendJson(res, {
      Memory: { Total: total, Available: free, Used: total - free, Free: free },
      CPU: cpus,
      DiskStats: [diskStat],
      AllocDirStats: diskStat,
      DeviceStats: [],
      Uptime: Math.floor(os.uptime()),
      Timestamp: Date.now() * 1_000_000,
      CPUTicksConsumed: cpus.reduce((n, c) => n + (c.Total / 100) * mhz, 0),
    });
  }

  async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > 1 << 20) throw new HttpError(413, 'request body too large');
      chunks.push(c as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8').trim();
    if (text === '') return {};
    try {
      const v = JSON.parse(text) as unknown;
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch {
      throw new HttpError(400, 'Request body is not a JSON object');
    }
  }

  async function restart(req: IncomingMessage, res: ServerResponse, allocId: string): Promise<void> {
    const body = await readBody(req);
    const runner = runnerOf(allocId);
    const taskName = body['TaskName'];
    if (taskName !== undefined && typeof taskName !== 'string') throw new HttpError(400, 'TaskName must be a string');
    if (taskName && !runner.hasTask(taskName)) throw new HttpError(400, `Failed to restart task ${JSON.stringify(taskName)}: task not found`);
    if (runner.terminal) throw new HttpError(400, 'Failed to restart: allocation is not running');
    await runner.restart(taskName || undefined);
    sendJson(res, {});
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    if (url.split('?')[0] === '/v1/agent/health' && (method === 'GET' || method === 'HEAD')) {
      const ok = deps.registered?.() ?? true;
      return sendJson(res, { client: { ok, message: ok ? 'ok' : 'not registered with a server yet' } }, ok ? 200 : 500);
    }
    if (!verifyAgentRequest(deps.secret(), req.headers[AGENT_AUTH_HEADER] as string | undefined, method, url)) throw new HttpError(403, 'Permission denied');
    const u = new URL(url, 'http://agent');
    const q = u.searchParams;
    const parts = u.pathname.split('/').slice(1).map((s) => decodeURIComponent(s));
    const read = method === 'GET' || method === 'HEAD';
    // /v1/client/...
    if (parts[0] !== 'v1' || parts[1] !== 'client') throw new HttpError(404, '');
    const [, , a, b, c, d] = parts;
    if (a === 'stats' && b === undefined) {
      if (!read) throw new HttpError(405, '');
      return hostStats(res);
    }
    if (a === 'fs' && b && c && d === undefined) {
      if (!read) throw new HttpError(405, '');
      if (b === 'logs') return logs(req, res, c, q);
      if (b === 'ls' || b === 'stat' || b === 'cat') return fsOp(res, b, c, q);
    }
    if (a === 'allocation' && b && c && d === undefined) {
      if (c === 'stats') {
        if (!read) throw new HttpError(405, '');
        return allocStats(res, b);
      }
      if (c === 'restart') {
        if (method !== 'PUT' && method !== 'POST') throw new HttpError(405, '');
        return restart(req, res, b);
      }
    }
    throw new HttpError(404, '');
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      if (status === 500) deps.logger.error('agent request failed', { url: req.url, err: err instanceof Error ? err.message : String(err) });
      if (res.headersSent) return res.end();
      res.statusCode = status;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end(status === 500 ? 'internal error' : (err as Error).message);
    });
  });
  return server;
}
