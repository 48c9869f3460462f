/**
 * Holds what the fleets' Envoys currently reject and lays it over build statuses as
 * `convoy.dev/EnvoyRejected` conditions (rejections.ts maps a rejected resource to the objects it
 * comes from), and offers a rejected resource again when one of those objects changes.
 *
 * The Controller owns one; it is separate so the build's control flow does not carry this
 * bookkeeping (docs/architecture.md §9).
 */
import type { Logger } from '../observability/logger';
import type { ObjectStatus } from '../status/types';
import { applyRejections, emptyRejections, type ObjectRejections } from '../status/rejections';
import type { FleetRejections, RejectionFeed } from '../xds/rejections';
import type { ResolvedGateway } from '../gateway/resolved';
import type { FleetModel } from '../model/fleet';
import { listenersByPort, mapRejections } from './rejections';
import type { FleetResource } from './rejections';

/** The fleets' current rejections, and the resources to offer again when their objects change. */
export class RejectionOverlay {
  /** The fleets' current rejections, by fleet (only fleets with a rejected resource). */
  private readonly views = new Map<string, FleetRejections>();
  /** objectKey → rejected resources to offer again when that object changes (mapRejections). */
  private reofferOn = new Map<string, FleetResource[]>();
  /** Resources to offer again once the current changes are built. */
  private readonly pending = new Map<string, FleetResource>();
  /** The notes of the last `update`, by object. */
  private notes: ObjectRejections = emptyRejections();

  constructor(
    private readonly feed: RejectionFeed | undefined,
    private readonly log: Logger,
  ) {}

  /** Records a fleet's rejections as they are now; a view without resources clears the fleet's. */
  set(view: FleetRejections): void {
    if (view.resources.length > 0) this.views.set(view.fleet, view);
    else this.views.delete(view.fleet);
  }

  /** Queues the resources whose rejection the object `key` owns; true when there are any. */
  noteReoffers(key: string): boolean {
    const resources = this.reofferOn.get(key);
    if (!resources) return false;
    for (const r of resources) this.pending.set(`${r.fleet}\n${r.typeUrl}\n${r.name}`, r);
    return true;
  }

  /**
   * Offers the queued resources to the Envoys that rejected them, after the build of the change
   * that queued them: when that build changed a resource, its new version has already gone out
   * and the reoffer (which only resends a rejected version that is still current) does nothing.
   */
  flushReoffers(): void {
    if (!this.feed || this.pending.size === 0) return;
    const byFleet = new Map<string, FleetResource[]>();
    for (const r of this.pending.values()) byFleet.set(r.fleet, [...(byFleet.get(r.fleet) ?? []), r]);
    this.pending.clear();
    for (const [fleet, resources] of byFleet) {
      try {
        this.feed.reoffer(fleet, resources);
      } catch (err) {
        this.log.error({ err, fleet }, 'offering rejected resources again failed');
      }
    }
  }

  /**
   * Maps the current rejections onto objects and remembers which objects' changes offer those
   * resources again; returns the keys (statusKey) of the objects `apply` changes. `gateways` are the
   * last full build's, for the listeners of each fleet's ports.
   */
  update(
    fleets: ReadonlyMap<string, FleetModel>,
    gateways: readonly ResolvedGateway[] | undefined,
  ): Set<string> {
    if (this.views.size === 0) {
      this.reofferOn = new Map();
      this.notes = emptyRejections();
      return new Set();
    }
    const accepted = new Map<string, ResolvedGateway>();
    for (const g of gateways ?? []) if (g.accepted) accepted.set(g.fleet, g);
    const mapping = mapRejections(this.views.values(), fleets, (fleet) =>
      listenersByPort(accepted.get(fleet)?.listeners ?? []),
    );
    this.reofferOn = mapping.reofferOn;
    this.notes = mapping.notes;
    const { listeners, objects, routes } = mapping.notes;
    return new Set([...listeners.keys(), ...objects.keys(), ...routes.keys()]);
  }

  /** Returns `statuses` with the rejections of the last `update` laid over them, stamped `now`. */
  apply(statuses: ObjectStatus[], now: string): ObjectStatus[] {
    return applyRejections(statuses, this.notes, now);
  }
}
