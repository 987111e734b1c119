// Process glue of `secrets` (bin/secrets.cjs loads this file): the environment, the home
// directory and the standard streams in, the exit code out.
import { homedir } from 'node:os';
import { runCli } from './cli';

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

void runCli(process.argv.slice(2), {
  env: process.env,
  home: process.env.HOME || homedir(),
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin,
}).then((code) => {
  process.exitCode = code;
});
