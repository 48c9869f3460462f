/**
 * Times a fixed, single-threaded workload that looks like Convoy's build (object allocation,
 * string hashing, sorting, JSON), and prints the median of several rounds in milliseconds.
 *
 * Why: benchmark figures are only comparable between machines, or between runs on a shared
 * machine, next to a figure for how fast the machine was at the time (bench/README.md). Dividing a
 * result by this figure gives a number that travels.
 *
 * Usage: node dist/bench/tools/calibrate.js [rounds]   (default 5)
 */
import { createHash } from 'node:crypto';

/** Runs the workload once and returns a checksum, so the work cannot be optimized away. */
function workload(): number {
  const items: { name: string; port: number; hosts: string[] }[] = [];
  for (let i = 0; i < 200_000; i++) {
    items.push({
      name: `listener-${(i * 7919) % 200_000}`,
      port: 1024 + (i % 5000),
      hosts: [`svc-${i}.example.com`],
    });
  }
  items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.port - b.port));
  const text = JSON.stringify(items);
  const back = JSON.parse(text) as typeof items;
  const hash = createHash('sha256');
  for (const item of back) hash.update(item.name + item.hosts[0]);
  return hash.digest()[0]! + back.length;
}

/** Returns the median of `values` (the mean of the middle two for an even count). */
function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function main(): void {
  const rounds = Math.max(1, Number(process.argv[2] ?? 5) || 5);
  workload(); // warm-up: JIT
  const times: number[] = [];
  let check = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    check += workload();
    times.push(performance.now() - t0);
  }
  const med = median(times);
  process.stdout.write(
    `${JSON.stringify({ calibrationMs: Math.round(med), roundsMs: times.map(Math.round), node: process.version, check })}\n`,
  );
}

main();
