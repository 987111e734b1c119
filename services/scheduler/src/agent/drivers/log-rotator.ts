// Rotating task log files (the anchor's logmon): `<task>.stdout.<n>` and `<task>.stderr.<n>`
// in the allocation's `alloc/logs` directory. A file grows to MaxFileSizeMB, then the next
// index starts; only the newest MaxFiles files are kept. A restarted task (or a restarted
// writer) appends to the newest file, so offsets read earlier stay valid.
import { closeSync, fstatSync, openSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface LogLimits {
  maxFiles: number;
  maxFileBytes: number;
}

/** Indexes of the existing files of one stream (`web.stdout`), ascending. */
export function logFileIndexes(dir: string, base: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) {
    if (!n.startsWith(`${base}.`)) continue;
    const rest = n.slice(base.length + 1);
    if (/^\d+$/.test(rest)) out.push(Number(rest));
  }
  return out.sort((a, b) => a - b);
}

export class LogRotator {
  private fd = -1;
  private index = 0;
  private size = 0;

  constructor(
    private readonly dir: string,
    private readonly base: string,
    private readonly limits: LogLimits,
  ) {
    const existing = logFileIndexes(dir, base);
    this.index = existing.at(-1) ?? 0;
    this.open();
  }

  private open(): void {
    this.fd = openSync(join(this.dir, `${this.base}.${this.index}`), 'a');
    this.size = fstatSync(this.fd).size;
  }

  write(data: Buffer): void {
    let rest = data;
    while (rest.length > 0) {
      const room = this.limits.maxFileBytes - this.size;
      if (room <= 0) {
        this.rotate();
        continue;
      }
      const part = rest.subarray(0, room);
      writeSync(this.fd, part);
      this.size += part.length;
      rest = rest.subarray(part.length);
    }
  }

  private rotate(): void {
    closeSync(this.fd);
    this.index += 1;
    this.open();
    for (const i of logFileIndexes(this.dir, this.base)) {
      if (i <= this.index - this.limits.maxFiles) {
        try {
          unlinkSync(join(this.dir, `${this.base}.${i}`));
        } catch {
          // already gone
        }
      }
    }
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
