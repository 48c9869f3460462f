/** Small helpers shared by the benchmark runner and its child processes. */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

/** Absolute time in ms with sub-ms resolution, comparable across processes on one machine. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return ms >= 1000 ? `${round(ms / 1000, 2)} s` : `${round(ms, ms < 10 ? 2 : 1)} ms`;
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  if (bytes >= 1024 * 1024) return `${round(mib(bytes), 1)} MiB`;
  if (bytes >= 1024) return `${round(bytes / 1024, 1)} KiB`;
  return `${Math.round(bytes)} B`;
}

export function gitShortRev(cwd: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Awaits `cond()` becoming true, polling; rejects with `what` after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs: number, what: string, stepMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** Peak RSS of this process so far (bytes). */
export function maxRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** Restricts every thread of process `pid` to the CPUs in `cpus` (taskset list syntax, e.g. "1"). */
export function pinToCpus(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * Times bench/tools/calibrate.js in a child process run by `node` (default: this one): the
 * machine's speed at the time, which every results file records beside its figures.
 */
export function calibrationMs(node: string = process.execPath): number {
  const out = execFileSync(node, [path.join(__dirname, 'tools', 'calibrate.js')], { encoding: 'utf8' });
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { calibrationMs: number }).calibrationMs;
}
