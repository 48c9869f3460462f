import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { encodeMessage } from '../envoy/protos';
import { forgetFleetTranslation } from '../envoy/translate';
import { ConsistencyChecker } from './consistency';
import { encodeListener } from './listener-bytes';
import { LayeredMap } from '../util/layered-map';
import type { EnvoyResources } from '../envoy/resources';
import { TypeUrl, messageNameOf } from '../envoy/resources';
import { PUSH_ORDER } from './served-types';
import type { CacheEntry, FleetChange, FleetSnapshot } from './snapshot';
import { TypeSnapshot, contentHash } from './snapshot';
import { commonEnds } from '../util/common-ends';

export type SetFleetResult =
  | { ok: true; changed: Record<string, string[]>; removed: Record<string, string[]> }
  | { ok: false; errors: string[] };

export type FleetListener = (change: FleetChange) => void;

/** Which list of EnvoyResources holds each type, and the field that names a resource. */
const LISTS: readonly { type: TypeUrl; key: keyof EnvoyResources; nameField: string }[] = [
  { type: TypeUrl.Secret, key: 'secrets', nameField: 'name' },
  { type: TypeUrl.Cluster, key: 'clusters', nameField: 'name' },
  { type: TypeUrl.Endpoint, key: 'endpoints', nameField: 'cluster_name' },
  { type: TypeUrl.Listener, key: 'listeners', nameField: 'name' },
  { type: TypeUrl.Route, key: 'routes', nameField: 'name' },
];

/**
 * Above this share of a list's objects replaced, setFleet rebuilds the type's entries instead of
 * patching the previous ones (patching pays off for a few changes among thousands).
 */
const PATCH_MAX_SHARE = 1 / 8;

/** A type's part of setFleet's result. */
interface TypeUpdate {
  snapshot: TypeSnapshot;
  changed: string[];
  removed: string[];
}

interface Interned {
  entry: CacheEntry;
  refs: number;
}

/**
 * Per-fleet snapshot cache. A fleet is the `namespace/name` of a Gateway; every Envoy whose
 * `node.cluster` names it shares the fleet's snapshot.
 *
 * Each resource is encoded once per content: the version is a hash of its bytes, and equal bytes
 * in any fleet share one CacheEntry (interned by hash, reference counted). Resource objects passed
 * to setFleet are remembered by identity, so handing in the same (memoized) object again skips
 * encoding entirely; callers must therefore not mutate an object after passing it in.
 */
export class XdsCache {
  private readonly logger: Logger;
  private readonly metrics: ConvoyMetrics;
  private readonly snapshots = new Map<string, FleetSnapshot>();
  private readonly listeners = new Set<FleetListener>();
  private readonly encoded = new WeakMap<object, CacheEntry>();
  private readonly interned = new Map<string, Interned>();
  /**
   * Per fleet: the consistency check, which re-checks only what changed since the last snapshot
   * and tells which resource lists are the very same objects as then.
   */
  private readonly checkers = new Map<string, ConsistencyChecker>();
  /** Per fleet: the resource lists of its snapshot, copied, to find the objects replaced since. */
  private readonly lists = new Map<string, Partial<Record<keyof EnvoyResources, readonly object[]>>>();

  constructor(opts: { logger: Logger; metrics: ConvoyMetrics }) {
    this.logger = opts.logger;
    this.metrics = opts.metrics;
  }

  /**
   * Replaces a fleet's resources. Runs the consistency check first; on failure keeps the previous
   * snapshot, logs, counts snapshotsRejected and returns the errors. `changed` and `removed` list
   * resource names per type URL (types without changes are omitted).
   */
  setFleet(fleet: string, resources: EnvoyResources): SetFleetResult {
    let checker = this.checkers.get(fleet);
    if (!checker) {
      checker = new ConsistencyChecker();
      this.checkers.set(fleet, checker);
    }
    const check = checker.check(resources);
    const errors = check.errors;
    const prev = this.snapshots.get(fleet);
    const types = {} as Record<TypeUrl, TypeSnapshot>;
    const changed = new Map<TypeUrl, string[]>();
    const removed = new Map<TypeUrl, string[]>();
    const lists: Partial<Record<keyof EnvoyResources, readonly object[]>> = { ...this.lists.get(fleet) };

    if (errors.length === 0) {
      for (const { type, key, nameField } of LISTS) {
        const list = resources[key] as readonly object[];
        const prevType = prev?.types[type];
        // The very same (memoized) objects as last time: nothing of this type changed.
        if (prevType && check.unchanged.has(key)) {
          types[type] = prevType;
          continue;
        }
        const prevList = this.lists.get(fleet)?.[key];
        const update =
          (prevType && prevList && this.patchType(type, nameField, list, prevList, prevType, errors)) ||
          this.rebuildType(type, nameField, list, prevType, errors);
        if (update.changed.length) changed.set(type, update.changed);
        if (update.removed.length) removed.set(type, update.removed);
        types[type] = update.snapshot;
        // Copied: a caller may reuse its arrays. Its objects' entries are those of the snapshot.
        lists[key] = [...list];
      }
    }

    if (errors.length > 0) {
      this.metrics.snapshotsRejected.inc({ fleet });
      this.logger.warn(
        { fleet, errors: errors.slice(0, 20), errorCount: errors.length, keptPrevious: prev !== undefined },
        'xds: fleet snapshot rejected by the consistency check; previous snapshot stays in service',
      );
      return { ok: false, errors };
    }

    // Commit: take references on the entries of new type snapshots, drop those of replaced ones.
    // Only changed and removed names can differ in version (references count versions), so a
    // type that changed a few of its thousands of entries costs a few map operations.
    for (const type of PUSH_ORDER) {
      const next = types[type];
      const old = prev?.types[type];
      if (next === old) continue;
      if (!old) {
        for (const entry of next.entries.values()) this.acquire(type, entry);
        continue;
      }
      for (const name of changed.get(type) ?? []) {
        this.acquire(type, next.entries.get(name)!);
        const was = old.entries.get(name);
        if (was) this.release(type, was);
      }
      for (const name of removed.get(type) ?? []) this.release(type, old.entries.get(name)!);
    }
    check.accept();
    this.lists.set(fleet, lists);
    const snapshot: FleetSnapshot = { fleet, types, clusterEds: check.clusterEds };
    this.snapshots.set(fleet, snapshot);

    const result = {
      ok: true as const,
      changed: Object.fromEntries(changed) as Record<string, string[]>,
      removed: Object.fromEntries(removed) as Record<string, string[]>,
    };
    if (prev && changed.size === 0 && removed.size === 0) return result;
    this.logger.debug(
      { fleet, changed: countPerType(changed), removed: countPerType(removed) },
      'xds: fleet snapshot updated',
    );
    this.notify({ fleet, snapshot, first: !prev, changed, removed });
    return result;
  }

  /** Drops a fleet. Its connected Envoys keep what they have and receive nothing more. */
  removeFleet(fleet: string): void {
    const prev = this.snapshots.get(fleet);
    if (!prev) return;
    this.snapshots.delete(fleet);
    this.checkers.delete(fleet);
    this.lists.delete(fleet);
    // What the translation remembered of the fleet to translate its next model faster goes too.
    forgetFleetTranslation(fleet);
    const removed = new Map<TypeUrl, string[]>();
    for (const type of PUSH_ORDER) {
      const ts = prev.types[type];
      for (const entry of ts.entries.values()) this.release(type, entry);
      if (ts.entries.size) removed.set(type, [...ts.entries.keys()]);
    }
    this.logger.info({ fleet }, 'xds: fleet removed');
    this.notify({ fleet, snapshot: undefined, first: false, changed: new Map(), removed });
  }

  fleets(): string[] {
    return [...this.snapshots.keys()].sort();
  }

  hasSnapshot(fleet: string): boolean {
    return this.snapshots.has(fleet);
  }

  /** The current snapshot of a fleet (for the ADS server and debugging). */
  snapshot(fleet: string): FleetSnapshot | undefined {
    return this.snapshots.get(fleet);
  }

  /** Registers a listener called synchronously after every accepted change. Returns an unsubscribe. */
  onChange(listener: FleetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Interning statistics: distinct encoded resources alive and their total bytes. */
  stats(): { fleets: number; entries: number; bytes: number } {
    let bytes = 0;
    for (const { entry } of this.interned.values()) bytes += entry.bytes.length;
    return { fleets: this.snapshots.size, entries: this.interned.size, bytes };
  }

  /**
   * A type's update built from all of `list`: every object's entry (encoded once per object),
   * compared with the previous snapshot's by name and version.
   */
  private rebuildType(
    type: TypeUrl,
    nameField: string,
    list: readonly object[],
    prevType: TypeSnapshot | undefined,
    errors: string[],
  ): TypeUpdate {
    const entries = new Map<string, CacheEntry>();
    for (const obj of list) {
      const name = (obj as Record<string, unknown>)[nameField] as string;
      try {
        entries.set(name, this.entryFor(type, name, obj, prevType));
      } catch (e) {
        errors.push(`${messageNameOf(type)} "${name}" cannot be encoded: ${(e as Error).message}`);
      }
    }
    const changed: string[] = [];
    const removed: string[] = [];
    for (const [name, entry] of entries) {
      if (prevType?.entries.get(name)?.version !== entry.version) changed.push(name);
    }
    if (prevType) for (const name of prevType.entries.keys()) if (!entries.has(name)) removed.push(name);
    const snapshot = !prevType
      ? new TypeSnapshot(type, entries)
      : changed.length === 0 && removed.length === 0
        ? prevType
        : TypeSnapshot.derive(prevType, entries, changed, removed);
    return { snapshot, changed, removed };
  }

  /**
   * The same update as rebuildType, from only the objects that differ from the previous list's:
   * those that replaced others at the same index under the same names (a route edited), or else
   * those between the lists' common head and tail (a resource added or removed); undefined when
   * too many objects differ.
   *
   * Correct because the objects handed in are immutable (this class's rule): an object also in
   * the previous list has the entry it had, so only the differing ones can change a version. In
   * place under the same names, the names are those of the previous snapshot (which had no
   * duplicates: as many entries as objects), so nothing is removed or added. Between head and
   * tail, the names that go are the previous middle's that the new middle lacks; the consistency
   * check that passed before this runs rules out empty and duplicate names in `list`.
   */
  private patchType(
    type: TypeUrl,
    nameField: string,
    list: readonly object[],
    prevList: readonly object[],
    prevType: TypeSnapshot,
    errors: string[],
  ): TypeUpdate | undefined {
    if (prevType.entries.size !== prevList.length) return undefined;
    const limit = Math.max(list.length, prevList.length) * PATCH_MAX_SHARE;
    const nameOf = (obj: object): string => (obj as Record<string, unknown>)[nameField] as string;
    const inPlace =
      list.length === prevList.length ? replacedInPlace(list, prevList, nameOf, limit) : undefined;
    if (inPlace === null) return undefined;
    let added: object[];
    let goneNames: string[] = [];
    if (inPlace) {
      added = inPlace.map((i) => list[i]);
    } else {
      const { head, tail } = commonEnds(prevList, list);
      added = list.slice(head, list.length - tail);
      const gone = prevList.slice(head, prevList.length - tail);
      if (added.length + gone.length > limit) return undefined;
      const addedNames = new Set(added.map(nameOf));
      goneNames = gone.map(nameOf).filter((n) => !addedNames.has(n));
    }
    const updated: CacheEntry[] = [];
    for (const obj of added) {
      const name = nameOf(obj);
      try {
        const entry = this.entryFor(type, name, obj, prevType);
        if (prevType.entries.get(name)?.version !== entry.version) updated.push(entry);
      } catch (e) {
        errors.push(`${messageNameOf(type)} "${name}" cannot be encoded: ${(e as Error).message}`);
      }
    }
    if (updated.length === 0 && goneNames.length === 0)
      return { snapshot: prevType, changed: [], removed: [] };
    // The previous entries with a layer of the changes: no copy of thousands of entries.
    // A type's entries are never changed once built (TypeSnapshot), so a plain Map is adopted as is.
    const prevEntries =
      prevType.entries instanceof LayeredMap
        ? (prevType.entries as LayeredMap<string, CacheEntry>)
        : LayeredMap.adopt(prevType.entries as Map<string, CacheEntry>);
    const entries = prevEntries.without(goneNames).with(updated.map((e) => [e.name, e] as const));
    const changed = updated.map((e) => e.name);
    const grown = goneNames.length > 0 || updated.some((e) => !prevType.entries.has(e.name));
    const snapshot = grown
      ? TypeSnapshot.derive(prevType, entries, changed, goneNames)
      : TypeSnapshot.replace(prevType, entries, updated);
    return { snapshot, changed, removed: goneNames };
  }

  /**
   * The entry of one object: remembered for this object, or encoded. `prevType` is the type's
   * previous snapshot, whose entry of the same name a Listener's encoding copies its unchanged
   * filter chains from (docs/xds.md §12.3).
   */
  private entryFor(type: TypeUrl, name: string, obj: object, prevType: TypeSnapshot | undefined): CacheEntry {
    // Encoded before (this object, unchanged): its entry has the same name, version and bytes as
    // any interned one, so it serves as is.
    const known = this.encoded.get(obj);
    if (known && known.name === name) return known;
    // A Listener splices in the cached bytes of its unchanged filter chains (listener-bytes.ts).
    // Its version hashes the chains' cached digests rather than all its bytes (listenerVersion).
    const { bytes, version } =
      type === TypeUrl.Listener
        ? encodeListener(obj, prevType?.entries.get(name)?.bytes)
        : encodedWithHash(encodeMessage(messageNameOf(type), obj));
    const entry = this.interned.get(internKey(type, version))?.entry ?? { name, version, bytes };
    this.encoded.set(obj, entry);
    return entry;
  }

  private acquire(type: TypeUrl, entry: CacheEntry): void {
    const key = internKey(type, entry.version);
    const rec = this.interned.get(key);
    if (rec) rec.refs++;
    else this.interned.set(key, { entry, refs: 1 });
  }

  private release(type: TypeUrl, entry: CacheEntry): void {
    const key = internKey(type, entry.version);
    const rec = this.interned.get(key);
    if (rec && --rec.refs <= 0) this.interned.delete(key);
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

/**
 * The indices at which `list` holds another object than `prevList` (of the same length), when
 * each has its predecessor's name; undefined when a name differs (not a replacement in place),
 * null when more than `limit` differ.
 */
function replacedInPlace(
  list: readonly object[],
  prevList: readonly object[],
  nameOf: (obj: object) => string,
  limit: number,
): number[] | undefined | null {
  const replaced: number[] = [];
  for (let i = 0; i < list.length; i++) {
    if (list[i] === prevList[i]) continue;
    if (nameOf(list[i]) !== nameOf(prevList[i])) return undefined;
    if (replaced.push(i) > limit) return null;
  }
  return replaced;
}

function encodedWithHash(bytes: Buffer): { bytes: Buffer; version: string } {
  return { bytes, version: contentHash(bytes) };
}

/** The type is part of the key only to rule out cross-type collisions (the name is in the bytes). */
function internKey(type: string, version: string): string {
  return type + ' ' + version;
}

function countPerType(m: Map<TypeUrl, string[]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [type, names] of m) out[messageNameOf(type).split('.').pop()!] = names.length;
  return out;
}
