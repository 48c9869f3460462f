/**
 * Publishes the statuses of builds to the status sinks: lays the overlays over them (fleet hold,
 * Envoy rejections, certificate validity), merges each with the status published before for its
 * object (status/merge.ts) and hands the sinks what changed.
 *
 * A full build publishes its full set (O(N), as the build itself). A fast path publishes only the
 * statuses it changed and the keys gone (`publishChanges`): the overlays say which objects they
 * touch (`update` of each), and only those and the changed ones are laid over, merged and handed
 * on, so a single-object change costs that object and the overlaid few, never every status
 * (docs/architecture.md §8). The outcome is the one publishing the full set every time would give:
 * an object that is neither changed nor overlaid (now or at the last publication) would be laid
 * over and merged into the status already published for it.
 */
import type { Logger } from '../observability/logger';
import type { ObjectStatus, StatusSink } from '../status/types';
import { statusKey } from '../status/types';
import { mergeStatus, sameBuiltStatus } from '../status/merge';
import type { FleetModel } from '../model/fleet';
import type { GatewayStatusAddress } from '../gateway/api';
import type { ResolvedGateway } from '../gateway/resolved';
import type { FleetHold } from './fleet-hold';
import type { RejectionOverlay } from './rejection-overlay';
import type { ValidityOverlay } from './validity-overlay';

/** What the overlays are laid from, as it is at a publication. */
export interface OverlayInputs {
  /** Stamps new conditions (seconds, as conditions spell it). */
  now: string;
  /** The fleet models being served. */
  fleets: ReadonlyMap<string, FleetModel>;
  /** The last full build's Gateways (the listeners of each fleet's ports), if any. */
  gateways: readonly ResolvedGateway[] | undefined;
  /** Where a held fleet serves, for its Gateway's status.addresses (fleet-hold.ts heldAddresses). */
  heldAddresses: (fleet: string) => GatewayStatusAddress[] | undefined;
}

export interface StatusPublisherOptions {
  sinks: readonly StatusSink[];
  log: Logger;
  hold: FleetHold;
  rejections: RejectionOverlay;
  validity: ValidityOverlay;
  /** Called once per publication. */
  inputs: () => OverlayInputs;
}

/** Overlays, merges and publishes build statuses; keeps what it published, by object. */
export class StatusPublisher {
  /** The statuses as the builds produced them (before the overlays), by key, in the builds' order. */
  private built = new Map<string, ObjectStatus>();
  /** The statuses as last laid over (before merging), by key. */
  private overlaid = new Map<string, ObjectStatus>();
  /** The statuses published (merged), by key, in the order the sinks hold them. */
  private published = new Map<string, ObjectStatus>();
  /** The keys some overlay changed at the last publication. */
  private overlayKeys = new Set<string>();
  private hasBuild = false;

  constructor(private readonly o: StatusPublisherOptions) {}

  /**
   * Publishes a full build's statuses: every object, an object missing from `statuses` is no longer
   * Convoy's. With `onlyIfChanged`, nothing is handed over when every merged status is the one
   * already published.
   */
  publishAll(statuses: ObjectStatus[], onlyIfChanged = false): void {
    const inputs = this.o.inputs();
    this.hasBuild = true;
    this.built = new Map(statuses.map((s) => [statusKey(s), s]));
    this.overlayKeys = this.updateOverlays(inputs);
    const overlaid = this.overlay(statuses, inputs);
    const next = new Map<string, ObjectStatus>();
    const built = new Map<string, ObjectStatus>();
    let changed = overlaid.length !== this.published.size;
    for (const s of overlaid) {
      const key = statusKey(s);
      const previous = this.published.get(key);
      const merged = this.merge(key, previous, s);
      if (merged !== previous) changed = true;
      next.set(key, merged);
      built.set(key, s);
    }
    if (onlyIfChanged && !changed) return;
    this.published = next;
    this.overlaid = built;
    const all = [...next.values()];
    this.toSinks((sink) => sink.publish(all));
  }

  /**
   * Publishes a fast path's changes: `changed` are the statuses it built anew (new objects in the
   * order the build appends them), `removed` the keys of objects that have no status any more. The
   * sinks get the merged statuses that differ from the published ones, and the keys gone. With
   * `onlyIfChanged`, nothing is handed over when that is nothing.
   */
  publishChanges(changed: readonly ObjectStatus[], removed: readonly string[], onlyIfChanged = false): void {
    if (!this.hasBuild) return;
    const inputs = this.o.inputs();
    for (const key of removed) this.built.delete(key);
    const evaluate = new Set<string>();
    for (const s of changed) {
      const key = statusKey(s);
      this.built.set(key, s);
      evaluate.add(key);
    }
    const overlayKeys = this.updateOverlays(inputs);
    for (const key of this.overlayKeys) evaluate.add(key);
    for (const key of overlayKeys) evaluate.add(key);
    this.overlayKeys = overlayKeys;
    const subset: ObjectStatus[] = [];
    for (const key of evaluate) {
      const s = this.built.get(key);
      if (s) subset.push(s);
    }
    const out: ObjectStatus[] = [];
    for (const s of this.overlay(subset, inputs)) {
      const key = statusKey(s);
      const previous = this.published.get(key);
      const merged = this.merge(key, previous, s);
      this.overlaid.set(key, s);
      if (merged === previous) continue;
      this.published.set(key, merged);
      out.push(merged);
    }
    const gone = removed.filter((key) => !this.built.has(key) && this.published.delete(key));
    for (const key of gone) this.overlaid.delete(key);
    if (onlyIfChanged && out.length === 0 && gone.length === 0) return;
    this.toSinks((sink) => sink.publishChanges(out, gone));
  }

  /** Publishes the last statuses again with the overlays as they are now, if that changes any. */
  republish(): void {
    this.publishChanges([], [], true);
  }

  /** True once a full build's statuses were published. */
  hasStatuses(): boolean {
    return this.hasBuild;
  }

  /**
   * Returns the merged status of `s`: the published one when the build gives the same as last time
   * (the merge would give it again; its identity tells the sinks nothing changed), else a merge.
   */
  private merge(key: string, previous: ObjectStatus | undefined, s: ObjectStatus): ObjectStatus {
    const lastBuilt = this.overlaid.get(key);
    return previous && lastBuilt && sameBuiltStatus(lastBuilt, s) ? previous : mergeStatus(previous, s);
  }

  /** Brings every overlay up to date; returns the keys of the objects they change. */
  private updateOverlays(inputs: OverlayInputs): Set<string> {
    const keys = new Set(this.o.hold.heldKeys());
    for (const key of this.o.rejections.update(inputs.fleets, inputs.gateways)) keys.add(key);
    for (const key of this.o.validity.update(inputs.fleets.values())) keys.add(key);
    return keys;
  }

  /** Lays the overlays (as the last updateOverlays left them) over `statuses`. */
  private overlay(statuses: ObjectStatus[], inputs: OverlayInputs): ObjectStatus[] {
    const held = this.o.hold.apply(statuses, inputs.now, inputs.heldAddresses);
    return this.o.validity.apply(this.o.rejections.apply(held, inputs.now), inputs.now);
  }

  /** Hands a publication to every sink; a failing sink is logged, the others still get it. */
  private toSinks(publish: (sink: StatusSink) => void): void {
    for (const sink of this.o.sinks) {
      try {
        publish(sink);
      } catch (err) {
        this.o.log.error({ err }, 'status sink failed');
      }
    }
  }
}
