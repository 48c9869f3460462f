import type { TypeUrl } from '../envoy/resources';
import { PUSH_ORDER } from './served-types';
import type { CacheEntry, FleetChange } from './snapshot';

/**
 * The message that carries one fleet's snapshot change from the build thread to the thread that
 * serves ADS (docs/architecture.md §14): names, versions and the encoded bytes of the resources
 * that changed, and the names that went. Every resource's bytes are packed into one ArrayBuffer,
 * which postMessage transfers instead of copying; the rest is a few arrays of strings, so a
 * fast-path change costs the serving thread microseconds to receive.
 */
export interface FleetDelta {
  fleet: string;
  /** The fleet is gone (XdsCache.removeFleet): the serving thread drops its snapshot. */
  removedFleet: boolean;
  /**
   * Every resource of the fleet is listed (the build thread's first snapshot of it): resources the
   * receiver holds and the message does not name are removed.
   */
  full: boolean;
  types: TypeDelta[];
  /** The cluster → ClusterLoadAssignment names, when they differ from the last message's. */
  clusterEds?: [string, string][];
  /** All resources' bytes, back to back in `types` order; transferred, not copied. */
  bytes: ArrayBuffer;
}

/** One type's part of a FleetDelta: resource i spans bytes ends[i-1]..ends[i]. */
export interface TypeDelta {
  typeUrl: TypeUrl;
  names: string[];
  versions: string[];
  ends: number[];
  removed: string[];
  /** The type's set version after the change (TypeSnapshot.version), so the receiver need not hash. */
  setVersion: string;
}

/**
 * Turns the build thread's XdsCache changes into FleetDeltas. It remembers, per fleet, which
 * cluster → EDS map it last sent, so an unchanged map (the usual case) is not sent again.
 */
export class FleetDeltaEncoder {
  private readonly sentEds = new Map<string, ReadonlyMap<string, string>>();

  /** Returns the delta of one cache change; `full` lists every resource (a receiver's first view). */
  encode(change: FleetChange, full = change.first): FleetDelta {
    const snapshot = change.snapshot;
    if (!snapshot) {
      this.sentEds.delete(change.fleet);
      return { fleet: change.fleet, removedFleet: true, full: false, types: [], bytes: new ArrayBuffer(0) };
    }
    const picked: { typeUrl: TypeUrl; entries: CacheEntry[]; removed: string[]; setVersion: string }[] = [];
    let total = 0;
    for (const typeUrl of PUSH_ORDER) {
      const ts = snapshot.types[typeUrl];
      const entries = full
        ? [...ts.sorted]
        : (change.changed.get(typeUrl) ?? []).map((name) => ts.entries.get(name)!);
      const removed = full ? [] : [...(change.removed.get(typeUrl) ?? [])];
      if (!full && entries.length === 0 && removed.length === 0) continue;
      for (const e of entries) total += e.bytes.length;
      picked.push({ typeUrl, entries, removed, setVersion: ts.version });
    }
    const bytes = new Uint8Array(total);
    let offset = 0;
    const types = picked.map(({ typeUrl, entries, removed, setVersion }) => {
      const ends: number[] = [];
      for (const e of entries) {
        bytes.set(e.bytes, offset);
        offset += e.bytes.length;
        ends.push(offset);
      }
      return {
        typeUrl,
        names: entries.map((e) => e.name),
        versions: entries.map((e) => e.version),
        ends,
        removed,
        setVersion,
      };
    });
    const delta: FleetDelta = { fleet: change.fleet, removedFleet: false, full, types, bytes: bytes.buffer };
    const sent = this.sentEds.get(change.fleet);
    if (full || !sent || !sameMap(sent, snapshot.clusterEds)) {
      delta.clusterEds = [...snapshot.clusterEds];
      this.sentEds.set(change.fleet, snapshot.clusterEds);
    }
    return delta;
  }
}

/** True when both maps hold the same keys with the same values (identity is checked first). */
function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
