// runService in a process of its own: a stray rejected promise is logged and the service
// keeps answering (Node's default would end the process and every request in flight).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePortBelowEphemeral } from '@selfstack/testing';

const PROGRAM = path.join(__dirname, 'fixtures', 'rejecting-service.ts');

describe('runService in its own process', () => {
  jest.setTimeout(60_000);

  it('logs an unhandled rejection with its stack and keeps serving, then stops on SIGTERM', async () => {
    const port = await freePortBelowEphemeral();
    const child = spawn(process.execPath, ['--import', 'tsx', PROGRAM], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const by = Date.now() + 45_000;
      while (!output.includes('unhandled promise rejection')) {
        if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}:\n${output}`);
        if (Date.now() > by) throw new Error(`no rejection logged:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const line = output.split('\n').find((l) => l.includes('unhandled promise rejection')) as string;
      const logged = JSON.parse(line) as { level: string; err: string; service: string };
      expect(logged.level).toBe('error');
      expect(logged.service).toBe('rejecting-fixture');
      expect(logged.err).toContain('Error: stray background failure');
      expect(logged.err).toContain('rejecting-service.ts');
      // Still answering after it.
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('still here');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
