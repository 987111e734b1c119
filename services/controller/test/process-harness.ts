// Helpers to run the controller/worker program as a real child process in tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePortBelowEphemeral, waitFor } from '@selfstack/testing';

export { waitFor };

const MAIN = path.resolve(__dirname, '../src/main.ts');

/** A port for a child process's config: free and below the ephemeral range (libs/testing ports.ts). */
export const freePort = freePortBelowEphemeral;

export function writeConfig(text: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'controller-test-'));
  const file = path.join(dir, 'config.hcl');
  writeFileSync(file, text);
  return file;
}

export interface ServerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): void;
}

export function startProcess(configFile: string, env: Record<string, string | undefined> = {}): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '-config', configFile], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited, signal: (sig) => child.kill(sig) };
}

export interface HttpResult {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

export function request(port: number, pathAndQuery: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: pathAndQuery, method: init.method ?? 'GET', headers: { ...(init.headers ?? {}), connection: 'close' }, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(init.body);
  });
}

export interface WorkerInfo {
  state: string;
  active_session_count: number;
  upstream_connection_state: string;
}

export async function workerInfo(opsPort: number): Promise<WorkerInfo> {
  const res = await request(opsPort, '/health?worker_info=1');
  return (JSON.parse(res.body) as { worker_process_info: WorkerInfo }).worker_process_info;
}
