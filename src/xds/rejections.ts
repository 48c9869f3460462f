import { Debouncer } from '../store/debounce';
import { compareStrings } from '../util/compare';

/**
 * The fleet-wide view of what Envoys rejected: per resource, which Envoys of the fleet NACKed its
 * current version and what they said. The ADS server keeps each stream's rejections; this module
 * aggregates them per fleet and tells subscribers (the controller, which turns them into
 * conditions on the objects that own the resources) when a fleet's view changes.
 */

/** One resource that some Envoys of a fleet rejected and have not accepted a newer version of. */
export interface RejectedResource {
  typeUrl: string;
  name: string;
  /** The rejected version (content hash) most recently reported. */
  version: string;
  /** node.id of every connected Envoy of the fleet that holds this rejection, sorted. */
  nodes: string[];
  /** Envoy's message about it (the most recent), one line, truncated. */
  message: string;
}

export interface FleetRejections {
  fleet: string;
  /** Distinct Envoys (node.id) of the fleet connected now. */
  envoys: number;
  /** Sorted by type URL, then name. Empty when the fleet's Envoys accept everything. */
  resources: RejectedResource[];
}

/** One stream's record of a resource its Envoy rejected. */
export interface StreamRejection {
  version: string;
  message: string;
  /** Epoch ms of the NACK. */
  time: number;
}

/** What the aggregation reads of one connected stream. */
export interface StreamRejectionsView {
  nodeId: string;
  /** type URL → name → the rejection. */
  rejected: ReadonlyMap<string, ReadonlyMap<string, StreamRejection>>;
  /** False when the Envoy no longer subscribes to the resource (its rejection no longer matters). */
  interested(typeUrl: string, name: string): boolean;
}

/** How the controller reads and follows the fleets' rejections, and asks for a resource again. */
export interface RejectionFeed {
  /** The current view of every fleet with at least one rejected resource. */
  rejections(): FleetRejections[];
  /**
   * Calls `listener` with a fleet's new view whenever it changes (debounced; a view whose
   * resources became empty is delivered once). Returns the unsubscribe function.
   */
  onRejectionsChange(listener: (view: FleetRejections) => void): () => void;
  /**
   * Sends these resources again to the Envoys of the fleet that rejected their current version:
   * Envoy never retries a rejected resource by itself, and some rejections (a port in use) depend
   * on things outside the resource.
   */
  reoffer(fleet: string, resources: readonly { typeUrl: string; name: string }[]): void;
}

/**
 * The fleet's view from its connected streams: a rejection counts while its Envoy is connected,
 * still subscribes to the resource, and the resource still exists in the fleet's snapshot.
 */
export function aggregateRejections(
  fleet: string,
  streams: Iterable<StreamRejectionsView>,
  exists: (typeUrl: string, name: string) => boolean,
): FleetRejections {
  const nodes = new Set<string>();
  const byResource = new Map<
    string,
    { typeUrl: string; name: string; nodes: Set<string>; latest: StreamRejection }
  >();
  for (const s of streams) {
    nodes.add(s.nodeId);
    for (const [typeUrl, names] of s.rejected) {
      for (const [name, r] of names) {
        if (!s.interested(typeUrl, name) || !exists(typeUrl, name)) continue;
        const key = `${typeUrl}\n${name}`;
        const entry = byResource.get(key);
        if (!entry) byResource.set(key, { typeUrl, name, nodes: new Set([s.nodeId]), latest: r });
        else {
          entry.nodes.add(s.nodeId);
          if (newer(r, entry.latest)) entry.latest = r;
        }
      }
    }
  }
  const resources: RejectedResource[] = [...byResource.values()]
    .map((e) => ({
      typeUrl: e.typeUrl,
      name: e.name,
      version: e.latest.version,
      nodes: [...e.nodes].sort(compareStrings),
      message: e.latest.message,
    }))
    .sort((a, b) => compareStrings(a.typeUrl, b.typeUrl) || compareStrings(a.name, b.name));
  return { fleet, envoys: nodes.size, resources };
}

/** The later of two rejections; on a tie, the larger version and message, so the result is deterministic. */
function newer(a: StreamRejection, b: StreamRejection): boolean {
  if (a.time !== b.time) return a.time > b.time;
  const byVersion = compareStrings(a.version, b.version);
  return byVersion !== 0 ? byVersion > 0 : compareStrings(a.message, b.message) > 0;
}

/**
 * Two views say the same. The number of connected Envoys only matters while something is
 * rejected (it is part of the conditions' "N of M"), so Envoys coming and going in a healthy fleet
 * never count as a change.
 */
export function sameRejections(a: FleetRejections | undefined, b: FleetRejections): boolean {
  if (!a) return b.resources.length === 0;
  if (a.resources.length === 0 && b.resources.length === 0) return true;
  return a.envoys === b.envoys && JSON.stringify(a.resources) === JSON.stringify(b.resources);
}

/** Quiet period after the last rejection change of a burst (all Envoys of a fleet NACK at once). */
const QUIET_MS = 200;
/** Longest a stream of changes can postpone a view. */
const MAX_DELAY_MS = 1_000;

/**
 * Follows fleets marked as changed and, debounced, recomputes their views and tells the
 * listeners about those that differ from the last one delivered.
 */
export class RejectionTracker {
  private readonly views = new Map<string, FleetRejections>();
  private readonly dirty = new Set<string>();
  private readonly listeners = new Set<(view: FleetRejections) => void>();
  private readonly debouncer: Debouncer;
  private stopped = false;

  constructor(
    private readonly collect: (fleet: string) => FleetRejections,
    private readonly onListenerError: (err: unknown) => void,
    quietMs = QUIET_MS,
    maxDelayMs = MAX_DELAY_MS,
  ) {
    this.debouncer = new Debouncer(() => this.flush(), quietMs, maxDelayMs);
  }

  /** The fleet's rejections may have changed (a NACK, an ACK, a stream gone, a resource removed). */
  markChanged(fleet: string): void {
    if (this.stopped) return;
    this.dirty.add(fleet);
    this.debouncer.trigger();
  }

  /** True when the fleet's last delivered view has a rejected resource. */
  hasRejections(fleet: string): boolean {
    return (this.views.get(fleet)?.resources.length ?? 0) > 0;
  }

  current(): FleetRejections[] {
    return [...this.views.values()].sort((a, b) => compareStrings(a.fleet, b.fleet));
  }

  subscribe(listener: (view: FleetRejections) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Recomputes the views of the changed fleets now (the debouncer calls this). */
  flush(): void {
    this.debouncer.cancel();
    const fleets = [...this.dirty].sort(compareStrings);
    this.dirty.clear();
    for (const fleet of fleets) {
      const view = this.collect(fleet);
      if (sameRejections(this.views.get(fleet), view)) continue;
      if (view.resources.length > 0) this.views.set(fleet, view);
      else this.views.delete(fleet);
      for (const listener of this.listeners) {
        try {
          listener(view);
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.debouncer.cancel();
    this.dirty.clear();
  }
}
