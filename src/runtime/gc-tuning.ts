/**
 * V8 garbage-collection tuning for a long-running control plane serving many Envoys.
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
 * route-edit fan-out p99 689 → 415 ms, RSS 868 → 734 MiB (garbage Buffers are freed by the young
 * generation's collections instead). Older V8 (Node 20) has no such flag and keeps its default.
 */
import { setFlagsFromString } from 'node:v8';

export const GC_FLAG = '--external-memory-accounted-in-global-limit';

/** V8 versions that know GC_FLAG (it first shipped with V8 13; Node 24 carries 13.6). */
export function supportsGcTuning(v8Version = process.versions.v8): boolean {
  return Number(v8Version.split('.')[0]) >= 13;
}

/** Applies GC_FLAG once, early in `convoy serve` (V8 reads it at each GC decision). */
export function tuneGarbageCollection(): boolean {
  if (!supportsGcTuning()) return false;
  setFlagsFromString(GC_FLAG);
  return true;
}
