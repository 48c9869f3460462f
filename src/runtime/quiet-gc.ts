/**
 * Collects garbage once the process has gone quiet, so a steady control plane does not keep the
 * garbage of its last burst of work resident.
 *
 * V8 starts a full collection only when the heap (and, with the tuning of gc-tuning.ts, external
 * memory) has grown past a limit set from the live size at the last one: up to 1.5× the live heap.
 * After a cold sync or a push the garbage below that limit (frame Buffers of the responses,
 * parsed and encoded intermediates) stays resident for as long as nothing more is allocated,
 * which at steady state is forever. Measured at 5,000 ListenerSets with 200 delta Envoys: a heap
 * of ~470 MiB committed for ~310 live and ~190 MiB external for ~45 live (docs/operations.md
 * §11). One full collection when the event loop has been idle for a few
 * seconds returns it. It runs only when idle, and only when enough was allocated since the last
 * collection, so a steady process collects once per burst of work, never periodically.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance } from 'node:perf_hooks';

/** How quiet counts as quiet: at most this share of the last interval spent running the loop. */
export const QUIET_UTILIZATION = 0.05;

export interface QuietCollectorOptions {
  /** How often to look (ms). */
  intervalMs?: number;
  /** Collect only when heap used + external grew by this many bytes since the last collection. */
  minGrowthBytes?: number;
  /** Called after each collection with its duration (ms) and the bytes it freed. */
  onCollect?: (ms: number, freedBytes: number) => void;
}

/** Returns V8's gc() function, exposing it first (a flag V8 reads when a context is created). */
function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heldBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/**
 * Starts looking every `intervalMs`; returns a stop function.
 *
 * A collection runs when the last interval's event-loop utilisation was at most
 * QUIET_UTILIZATION and the heap plus external memory grew by at least `minGrowthBytes` since the
 * last collection. The timer is unref'd: it never keeps the process alive.
 */
export function startQuietCollector(opts: QuietCollectorOptions = {}): () => void {
  const intervalMs = opts.intervalMs ?? 2000;
  const minGrowth = opts.minGrowthBytes ?? 64 * 1024 * 1024;
  const gc = exposeGc();
  let baseline = heldBytes();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const before = heldBytes();
    if (busy > QUIET_UTILIZATION || before - baseline < minGrowth) return;
    const t0 = performance.now();
    gc();
    baseline = heldBytes();
    last = performance.eventLoopUtilization();
    opts.onCollect?.(performance.now() - t0, before - baseline);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
