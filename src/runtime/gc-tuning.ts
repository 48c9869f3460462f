/**
 * Tunes V8 garbage collection for a long-running control plane serving many Envoys.
 *
 * By default V8 starts a full mark-compact whenever memory held outside its heap (Buffers:
 * every xDS response grpc-js frames, every request it assembles) has grown by a fixed 64 MB since
 * the last one, however large the heap is. A control plane that streams hundreds of MB per second
 * to a fleet therefore marks its whole world (~280 MiB at 5,000 ListenerSets) several times a
 * second, mostly on the event loop: measured with 1,000 SotW Envoys on Node 24, 223 mark-compacts
 * in one benchmark run, each adding 100–170 ms of marking steps on the main thread, and an
 * event-loop delay of 190–300 ms while pushing a route edit.
 *
 * `--external-memory-accounted-in-global-limit` (V8 ≥ 13, Node 24) makes that limit grow with the
 * heap like V8's other limits. Same run: 2 mark-compacts, event-loop delay ≤ 40 ms while pushing,
 * route-edit fan-out p99 689 → 415 ms. Alone it lets garbage pile up to V8's default growing factor
 * (up to 4× the live heap): after 1,000 SotW Envoys were replaced by 1,000 delta ones, the heap held
 * 781 MiB and RSS reached 1.7 GiB. `--heap-growing-percent=50` caps the next limit at 1.5× the live
 * heap: 16 mark-compacts in that run, RSS 832 / 934 MiB with 1,000 SotW / delta streams.
 * Older V8 (Node 20) has no such flag and keeps its defaults.
 *
 * The growing factor is held back until the first snapshot is served (`coldStart`): a cold start
 * grows the heap from nothing to its whole world, and at 1.5× per step that growth costs a
 * mark-compact every half again of live heap, on a start where nothing else competes for memory
 * (docs/architecture.md §10.5).
 */
import { setFlagsFromString } from 'node:v8';

export const GC_FLAG = '--external-memory-accounted-in-global-limit';
export const HEAP_GROWING_FLAG = '--heap-growing-percent=50';

/** Returns whether a V8 version knows GC_FLAG (it first shipped with V8 13; Node 24 carries 13.6). */
export function supportsGcTuning(v8Version = process.versions.v8): boolean {
  return Number(v8Version.split('.')[0]) >= 13;
}

/** How often coldStart looks whether the first snapshot is served (ms). */
const READY_POLL_MS = 50;

/**
 * Applies both flags when this V8 supports them and returns whether it did.
 *
 * Called once, early in `convoy serve` (V8 reads them at each GC decision). With `coldStart`, the
 * growing factor waits until `coldStart.isReady()` (looked at every 50 ms on an unref'd timer),
 * so the cold start grows its heap with V8's own factor; `coldStart.onApplied` is called then.
 * Returns `stop`, which stops waiting (the factor is then applied at once), and `applied`, which
 * tells whether the wait is over (steady-gc.ts switches the factor only after that; true at once
 * on a V8 without the flag, where nothing waits).
 */
export function tuneGarbageCollection(
  env: NodeJS.ProcessEnv = process.env,
  coldStart?: { isReady: () => boolean; onApplied?: () => void },
): { tuned: boolean; stop: () => void; applied: () => boolean } {
  applyExtraV8Flags(env);
  if (!supportsGcTuning()) return { tuned: false, stop: () => undefined, applied: () => true };
  setFlagsFromString(GC_FLAG);
  if (!coldStart) {
    setFlagsFromString(HEAP_GROWING_FLAG);
    return { tuned: true, stop: () => undefined, applied: () => true };
  }
  let timer: NodeJS.Timeout | undefined;
  const apply = () => {
    if (timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
    setFlagsFromString(HEAP_GROWING_FLAG);
    coldStart.onApplied?.();
  };
  timer = setInterval(() => {
    if (coldStart.isReady()) apply();
  }, READY_POLL_MS);
  timer.unref();
  return { tuned: true, stop: apply, applied: () => timer === undefined };
}

/**
 * Applies the V8 flags in CONVOY_V8_FLAGS (space-separated), a diagnostic knob.
 *
 * Node refuses some V8 flags in NODE_OPTIONS (`--trace-gc` among them); this lets an operator or a
 * benchmark trace the collector of a running `convoy serve` (docs/operations.md §11).
 */
export function applyExtraV8Flags(env: NodeJS.ProcessEnv = process.env): string[] {
  const flags = (env.CONVOY_V8_FLAGS ?? '').split(/\s+/).filter((f) => f.startsWith('--'));
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
