/**
 * Summarizes a V8 .cpuprofile (from --profile-changes or node --cpu-prof): the functions with the
 * most self time, and the garbage collector's share, so a profile can be read without DevTools.
 *
 *   node dist/bench/tools/profile-top.js FILE.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function label(n: ProfileNode): string {
  const f = n.callFrame;
  const file = f.url ? f.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1') : '';
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: profile-top FILE.cpuprofile [--top N]');
  const topArg = process.argv.indexOf('--top');
  const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 25;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    total += dt;
    const key = label(node);
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const ms = (us: number) => (us / 1000).toFixed(1).padStart(8);
  console.log(`${file}: ${(total / 1000).toFixed(1)} ms sampled`);
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows)
    console.log(`${ms(us)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}

main();
