import type { RouteConfiguration } from '../../generated/envoy/config/route/v3/RouteConfiguration';

/**
 * Assembling a fleet's RouteConfiguration list (every port's HTTP configuration and its chains'
 * configurations, first of each name only) by patching the list assembled last time.
 *
 * The full assembly puts every name of 20,000 configurations into a set on every change. A change
 * usually replaces a few configurations by others of the same names (a route edited, a chain
 * translated again), which leaves every keep-or-skip decision as it was; then the last list is
 * copied and the replaced configurations are put at their places.
 */

/** One part of the input, in order: a port's HTTP configuration, or its chains' (undefined: none). */
export type RouteSegment = readonly (RouteConfiguration | undefined)[];

/** The last assembly of one fleet: its input, its output, and where each input element went. */
interface LastAssembly {
  readonly segments: readonly RouteSegment[];
  readonly output: readonly RouteConfiguration[];
  /** Per segment, per element: its index in `output`, or -1 (undefined or a repeated name). */
  readonly positions: readonly Int32Array[];
}

/** Above this share of replaced elements, the list is assembled anew (patching pays off for a few). */
const PATCH_MAX_SHARE = 1 / 8;

/** Returns the first configuration of each name, in input order: what the patched path must equal. */
export function assembleRoutes(segments: readonly RouteSegment[]): {
  output: RouteConfiguration[];
  positions: Int32Array[];
} {
  const names = new Set<string>();
  const output: RouteConfiguration[] = [];
  const positions = segments.map((segment) => {
    const at = new Int32Array(segment.length).fill(-1);
    segment.forEach((rc, i) => {
      if (!rc || names.has(rc.name!)) return;
      names.add(rc.name!);
      at[i] = output.length;
      output.push(rc);
    });
    return at;
  });
  return { output, positions };
}

/**
 * Per fleet, the last RouteConfiguration list assembled and how; the caller forgets a fleet when
 * it goes (forget).
 */
export class RouteListReuse {
  private readonly fleets = new Map<string, LastAssembly>();

  /**
   * Returns assembleRoutes(segments).output, patched from the fleet's last assembly when every
   * segment has its last length and each replaced element is undefined where it was undefined and
   * has its predecessor's name where it had one. The returned array is shared: do not modify it.
   *
   * Correct because whether an element is kept depends only on its name and the names before it:
   * with every name (and every undefined) at its place, each element is kept or skipped as last
   * time, at the same output index, so the last output with the replaced kept elements put at
   * their indices is the full assembly's output.
   */
  assemble(fleet: string, segments: readonly RouteSegment[]): readonly RouteConfiguration[] {
    const last = this.fleets.get(fleet);
    const patched = last && patch(last, segments);
    if (patched) {
      this.fleets.set(fleet, { segments, output: patched, positions: last.positions });
      return patched;
    }
    const { output, positions } = assembleRoutes(segments);
    this.fleets.set(fleet, { segments, output, positions });
    return output;
  }

  /** Drops what is remembered of a fleet. */
  forget(fleet: string): void {
    this.fleets.delete(fleet);
  }
}

/** The patched output, or undefined when the shape of the input changed (see assemble). */
function patch(last: LastAssembly, segments: readonly RouteSegment[]): RouteConfiguration[] | undefined {
  if (segments.length !== last.segments.length) return undefined;
  const replaced: [number, RouteConfiguration][] = [];
  let total = 0;
  for (let s = 0; s < segments.length; s++) {
    const now = segments[s];
    const was = last.segments[s];
    total += now.length;
    if (now === was) continue;
    if (now.length !== was.length) return undefined;
    const at = last.positions[s];
    for (let i = 0; i < now.length; i++) {
      const rc = now[i];
      const old = was[i];
      if (rc === old) continue;
      if (!rc || !old || rc.name !== old.name) return undefined;
      if (at[i] >= 0) replaced.push([at[i], rc]);
    }
  }
  if (replaced.length > total * PATCH_MAX_SHARE) return undefined;
  if (replaced.length === 0) return last.output as RouteConfiguration[];
  const output = last.output.slice();
  for (const [i, rc] of replaced) output[i] = rc;
  return output;
}
