// Adds up V8 CPU profiles (.cpuprofile files, e.g. the wake-up rounds written with
// SCHEDULER_BENCH_PROFILE) by function: self time and inclusive time, as a share of all
// sampled time, top N lines each.
//   npx tsx bench/profile-summary.ts DIR [N]
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url ? relative(process.cwd(), url.replace(/^file:\/\//, '')) : '';
  return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
}

export function summarize(profiles: Profile[]): { totalUs: number; self: Map<string, number>; inclusive: Map<string, number> } {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalUs = 0;
  for (const p of profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    for (let i = 0; i < p.samples.length; i++) {
      const dt = p.timeDeltas[i + 1] ?? 0;
      const id = p.samples[i] as number;
      const node = byId.get(id);
      if (!node) continue;
      totalUs += dt;
      const name = frameName(node);
      self.set(name, (self.get(name) ?? 0) + dt);
      // Inclusive: every distinct frame on the sample's stack.
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const f = byId.get(cur);
        if (!f) break;
        const fn = frameName(f);
        if (seen.has(fn)) continue;
        seen.add(fn);
        inclusive.set(fn, (inclusive.get(fn) ?? 0) + dt);
      }
    }
  }
  return { totalUs, self, inclusive };
}

function main(): void {
  const [dir, topArg] = process.argv.slice(2);
  if (!dir) {
    process.stderr.write('usage: npx tsx bench/profile-summary.ts DIR [N]\n');
    process.exit(2);
  }
  const top = Number(topArg ?? 40);
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const profiles = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile);
  const { totalUs, self, inclusive } = summarize(profiles);
  const print = (title: string, m: Map<string, number>) => {
    process.stdout.write(`\n${title} (${files.length} profiles, ${(totalUs / 1000).toFixed(1)} ms sampled)\n`);
    for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${(us / 1000 / files.length).toFixed(2).padStart(7)} ms/profile  ${name}\n`);
    }
  };
  print('self time', self);
  print('inclusive time', inclusive);
}

if (require.main === module) main();
