import type { Logger } from '../observability/logger';
import type { TypeUrl } from '../envoy/resources';
import type { FleetListener } from './cache';
import { PUSH_ORDER } from './served-types';
import type { FleetDelta } from './snapshot-delta';
import { TypeSnapshot } from './snapshot';
import type { CacheEntry, FleetChange, FleetSnapshot } from './snapshot';

/** What the ADS server reads from a snapshot cache: XdsCache in one thread, MirrorCache in two. */
export interface SnapshotSource {
  fleets(): string[];
  hasSnapshot(fleet: string): boolean;
  snapshot(fleet: string): FleetSnapshot | undefined;
  onChange(listener: FleetListener): () => void;
  stats(): { fleets: number; entries: number; bytes: number };
}

/**
 * The serving thread's copy of the build thread's XdsCache (docs/architecture.md §14): it applies
 * FleetDeltas and tells the ADS server what changed, exactly as XdsCache.setFleet would have.
 * Versions come with the bytes (content hashes computed once, by the build thread), and a type's
 * set version is computed from the same sorted name/version pairs, so every version and byte an
 * Envoy receives is the one a single-threaded Convoy would send. The consistency check ran before
 * the delta was made; this class only stores.
 */
export class MirrorCache implements SnapshotSource {
  private readonly snapshots = new Map<string, FleetSnapshot>();
  private readonly listeners = new Set<FleetListener>();

  constructor(private readonly logger: Logger) {}

  /** Applies one fleet's delta and notifies the listeners when anything changed (or it is new). */
  apply(delta: FleetDelta): void {
    const prev = this.snapshots.get(delta.fleet);
    if (delta.removedFleet) {
      this.removeFleet(delta.fleet);
      return;
    }
    const changed = new Map<TypeUrl, string[]>();
    const removed = new Map<TypeUrl, string[]>();
    const types = {} as Record<TypeUrl, TypeSnapshot>;
    const byType = new Map(delta.types.map((t) => [t.typeUrl, t]));
    let start = 0;
    for (const typeUrl of PUSH_ORDER) {
      const part = byType.get(typeUrl);
      const old = prev?.types[typeUrl];
      if (!part) {
        types[typeUrl] = delta.full || !old ? new TypeSnapshot(typeUrl, new Map()) : old;
        if (delta.full && old && old.entries.size > 0) removed.set(typeUrl, [...old.entries.keys()]);
        continue;
      }
      const entries = new Map<string, CacheEntry>(delta.full ? [] : (old?.entries ?? []));
      // A full delta lists every entry sorted by name: that order is the snapshot's.
      const sorted: CacheEntry[] = [];
      const ch: string[] = [];
      for (let i = 0; i < part.names.length; i++) {
        const name = part.names[i];
        const end = part.ends[i];
        const was = old?.entries.get(name);
        let entry = was;
        if (!was || was.version !== part.versions[i]) {
          entry = { name, version: part.versions[i], bytes: Buffer.from(delta.bytes, start, end - start) };
          ch.push(name);
        }
        entries.set(name, entry!);
        if (delta.full) sorted.push(entry!);
        start = end;
      }
      const rm = delta.full
        ? [...(old?.entries.keys() ?? [])].filter((n) => !entries.has(n))
        : part.removed.filter((n) => old?.entries.has(n));
      for (const n of rm) entries.delete(n);
      if (ch.length) changed.set(typeUrl, ch);
      if (rm.length) removed.set(typeUrl, rm);
      types[typeUrl] =
        old && ch.length === 0 && rm.length === 0
          ? old
          : delta.full
            ? new TypeSnapshot(typeUrl, entries, sorted, part.setVersion)
            : !old
              ? new TypeSnapshot(typeUrl, entries)
              : TypeSnapshot.derive(old, entries, ch, rm, part.setVersion);
    }
    const clusterEds = delta.clusterEds ? new Map(delta.clusterEds) : (prev?.clusterEds ?? new Map());
    const snapshot: FleetSnapshot = { fleet: delta.fleet, types, clusterEds };
    this.snapshots.set(delta.fleet, snapshot);
    if (prev && changed.size === 0 && removed.size === 0) return;
    this.notify({ fleet: delta.fleet, snapshot, first: !prev, changed, removed });
  }

  /** Drops every fleet not in `fleets` (a restarted build thread does not have them any more). */
  keepOnly(fleets: readonly string[]): void {
    const keep = new Set(fleets);
    for (const fleet of [...this.snapshots.keys()]) if (!keep.has(fleet)) this.removeFleet(fleet);
  }

  fleets(): string[] {
    return [...this.snapshots.keys()].sort();
  }

  hasSnapshot(fleet: string): boolean {
    return this.snapshots.has(fleet);
  }

  snapshot(fleet: string): FleetSnapshot | undefined {
    return this.snapshots.get(fleet);
  }

  onChange(listener: FleetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Distinct encoded resources (by type and version) and their bytes, as XdsCache.stats counts them. */
  stats(): { fleets: number; entries: number; bytes: number } {
    const seen = new Set<string>();
    let bytes = 0;
    for (const snap of this.snapshots.values()) {
      for (const type of PUSH_ORDER) {
        for (const e of snap.types[type].entries.values()) {
          const key = type + ' ' + e.version;
          if (seen.has(key)) continue;
          seen.add(key);
          bytes += e.bytes.length;
        }
      }
    }
    return { fleets: this.snapshots.size, entries: seen.size, bytes };
  }

  private removeFleet(fleet: string): void {
    const prev = this.snapshots.get(fleet);
    if (!prev) return;
    this.snapshots.delete(fleet);
    const removed = new Map<TypeUrl, string[]>();
    for (const type of PUSH_ORDER) {
      const names = [...prev.types[type].entries.keys()];
      if (names.length) removed.set(type, names);
    }
    this.logger.info({ fleet }, 'xds: fleet removed');
    this.notify({ fleet, snapshot: undefined, first: false, changed: new Map(), removed });
  }

  private notify(change: FleetChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (e) {
        this.logger.error({ err: e, fleet: change.fleet }, 'xds: fleet change listener failed');
      }
    }
  }
}
