/**
 * Tightens V8's heap limits while `convoy serve` is quiet and relaxes them while it works, so a
 * steady control plane keeps less garbage resident without paying for tight limits in a burst.
 *
 * V8 sets its next collection limit from the live size at each full collection, times the heap
 * growing factor (1.5 with gc-tuning.ts). At steady state a file-mode Convoy still allocates (the
 * safety-net rescan every 10 s), so the heap and its external Buffers climb to that limit and sit
 * there: ~120 MiB of heap garbage and ~90–150 MiB of external memory at 5,000 ListenerSets
 * (docs/operations.md §11). A lower factor while quiet lowers that ceiling; the collections it
 * causes are the ordinary incremental and concurrent ones started by allocation, not an atomic
 * full collection. During a burst (a cold start, a change pushed to a fleet) the usual factor
 * applies: a low one costs CPU and event-loop time there (more mark-compacts per push).
 * The factor is read when a collection ends, so switching costs nothing by itself.
 */
import { setFlagsFromString } from 'node:v8';
import { performance } from 'node:perf_hooks';
import { HEAP_GROWING_FLAG, supportsGcTuning } from './gc-tuning';

/** The heap growing factor while quiet: the next limit at 1.2× the live size. */
export const QUIET_HEAP_GROWING_FLAG = '--heap-growing-percent=20';

/**
 * The V8 flags while quiet. Memory saver mode lets V8's memory reducer start an incremental
 * collection about 8 s after the loop went quiet (it otherwise waits for a low allocation rate,
 * which the 10 s rescans never give); without `--memory-reducer-favors-memory` that collection is
 * a regular one, not the compacting "reduce" kind, whose final pause was 470–600 ms at 5,000
 * ListenerSets on a loaded machine (bench/README.md, "Steady RSS, session 15").
 */
export const QUIET_FLAGS: readonly string[] = [
  QUIET_HEAP_GROWING_FLAG,
  '--memory-saver-mode',
  '--no-memory-reducer-favors-memory',
];

/** Busy means more than this share of the last interval spent running the event loop. */
export const BUSY_UTILIZATION = 0.25;

export interface SteadyGcOptions {
  /** Whether the first snapshot is served (before it, the cold start's settings stay). */
  isReady: () => boolean;
  /** How often to look (ms). */
  intervalMs?: number;
  /** V8 flags while quiet; each is undone by the matching entry of `busyFlags`. */
  quietFlags?: readonly string[];
  busyFlags?: readonly string[];
  /** Called at each switch with the new state. */
  onSwitch?: (quiet: boolean) => void;
}

/** Returns the flags that undo `quiet` ones: the busy growing factor, `--no-X` for boolean X. */
export function busyCounterparts(quiet: readonly string[]): string[] {
  return quiet.map((flag) => {
    if (flag.startsWith('--heap-growing-percent')) return HEAP_GROWING_FLAG;
    const name = flag.replace(/^--/, '').replace(/=.*$/, '');
    return name.startsWith('no-') ? `--${name.slice(3)}` : `--no-${name}`;
  });
}

/**
 * Starts looking every `intervalMs`; returns a stop function (which leaves the busy flags set).
 *
 * Switches to the quiet flags once the first snapshot is served and an interval's event-loop
 * utilisation was at most BUSY_UTILIZATION, and back as soon as one was above it. The timer is
 * unref'd. Does nothing on a V8 without the growing-factor flag (Node 20).
 */
export function startSteadyGcTuning(opts: SteadyGcOptions): () => void {
  if (!supportsGcTuning()) return () => undefined;
  const quietFlags = opts.quietFlags ?? QUIET_FLAGS;
  const busyFlags = opts.busyFlags ?? busyCounterparts(quietFlags);
  let quiet = false;
  let last = performance.eventLoopUtilization();
  const apply = (toQuiet: boolean) => {
    for (const flag of toQuiet ? quietFlags : busyFlags) setFlagsFromString(flag);
    quiet = toQuiet;
    opts.onSwitch?.(toQuiet);
  };
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const shouldBeQuiet = opts.isReady() && busy <= BUSY_UTILIZATION;
    if (shouldBeQuiet !== quiet) apply(shouldBeQuiet);
  }, opts.intervalMs ?? 1000);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (quiet) apply(false);
  };
}
