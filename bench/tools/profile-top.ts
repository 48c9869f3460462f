/**
 * Summarizes a V8 .cpuprofile (from --profile-changes or node --cpu-prof): the functions with the
 * most self time, and the garbage collector's share, so a profile can be read without DevTools.
 * With `--stretches MS`, it lists instead every busy stretch (samples without an idle one
 * between them) of at least MS milliseconds: when it started, how long it held the thread, and
 * the project functions (dist/src) that account for most of it, inclusive, and the top self time.
 *
 *   node dist/bench/tools/profile-top.js FILE.cpuprofile [--top 25] [--stretches 20]
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

const ms = (us: number): string => (us / 1000).toFixed(1).padStart(8);

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

/** Self time per function over the whole profile. */
function selfTimes(profile: Profile, byId: Map<number, ProfileNode>, top: number, file: string): void {
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
  console.log(`${file}: ${(total / 1000).toFixed(1)} ms sampled`);
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows)
    console.log(`${ms(us)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}

/** Busy stretches of at least `minMs`, each with its heaviest project functions. */
function stretches(profile: Profile, byId: Map<number, ProfileNode>, minMs: number, top: number): void {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const isIdle = (id: number): boolean => byId.get(id)?.callFrame.functionName === '(idle)';
  let t = profile.startTime;
  let start = -1;
  let busy: { id: number; dt: number }[] = [];
  const report = (): void => {
    const length = busy.reduce((s, b) => s + b.dt, 0);
    if (busy.length > 0 && length >= minMs * 1000) {
      const inclusive = new Map<string, number>();
      const self = new Map<string, number>();
      for (const b of busy) {
        const seen = new Set<string>();
        const leaf = byId.get(b.id)!;
        self.set(label(leaf), (self.get(label(leaf)) ?? 0) + b.dt);
        for (let id: number | undefined = b.id; id !== undefined; id = parent.get(id)) {
          const n = byId.get(id)!;
          if (!n.callFrame.url.includes('/dist/src/')) continue;
          const key = label(n);
          if (seen.has(key)) continue;
          seen.add(key);
          inclusive.set(key, (inclusive.get(key) ?? 0) + b.dt);
        }
      }
      console.log(`\n+${((start - profile.startTime) / 1e6).toFixed(3)} s: busy ${ms(length).trim()} ms`);
      for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
        console.log(`  incl ${ms(us)} ms  ${name}`);
      for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 5))
        console.log(`  self ${ms(us)} ms  ${name}`);
    }
    busy = [];
    start = -1;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    const id = profile.samples[i]!;
    if (isIdle(id)) {
      report();
      continue;
    }
    if (start < 0) start = t;
    busy.push({ id, dt: profile.timeDeltas[i + 1] ?? 0 });
  }
  report();
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: profile-top FILE.cpuprofile [--top N] [--stretches MS]');
  const top = option('--top', 25);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const minMs = option('--stretches', -1);
  if (minMs >= 0) stretches(profile, byId, minMs, top);
  else selfTimes(profile, byId, top, file);
}

main();
