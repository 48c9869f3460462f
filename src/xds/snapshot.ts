import { createHash } from 'node:crypto';
import type { TypeUrl } from '../envoy/resources';
import { byName, compareStrings, lowerBoundByName } from '../util/compare';
import type { BlockedVersion, VersionBlock } from './set-version';
import type { BodyBytes } from './wire';
import { blockedVersion, patchedVersion } from './set-version';

/** One encoded resource. Immutable; shared by every fleet whose resource has the same bytes. */
export interface CacheEntry {
  readonly name: string;
  /**
   * A hash of `bytes` (contentHash; for a Listener of many chains, listenerVersion in
   * listener-bytes.ts): equal content gives an equal version on every replica and restart.
   */
  readonly version: string;
  /** The resource message itself (the `value` of its google.protobuf.Any). */
  readonly bytes: Buffer;
}

/** sha256, first 128 bits, base64url (22 characters). */
export function contentHash(...parts: (Buffer | string)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest().subarray(0, 16).toString('base64url');
}

/**
 * Version of a set of resources: a hash of the sorted `name version` pairs. What a SotW response
 * for named resources carries; a whole type's version is TypeSnapshot.version (set-version.ts).
 */
export function setVersion(sortedEntries: Iterable<{ name: string; version: string }>): string {
  // One update of the joined text (the same bytes as one update per part, ~4× faster at 5,000).
  let text = '';
  for (const e of sortedEntries) text += e.name + '\0' + e.version + '\n';
  return createHash('sha256').update(text).digest().subarray(0, 16).toString('base64url');
}

const MEMO_LIMIT = 32;
/** Bytes of memoized response bodies kept per type snapshot (the newest is always kept). */
const MEMO_BYTES = 16 * 1024 * 1024;
/** Memoized bodies at least this large are dropped once none was used for MEMO_IDLE_MS. */
export const MEMO_LARGE_BYTES = 256 * 1024;
export const MEMO_IDLE_MS = 30_000;

/** A memoized response: the encoded body and what the sender needs to know about it. */
export interface MemoResponse {
  /** A large body references the entries' bytes instead of holding a copy (wire.ts finishBody). */
  readonly body: BodyBytes;
  readonly version: string;
  readonly count: number;
}

/**
 * The resources of one type in one fleet. Immutable: a change of any resource gives a new
 * TypeSnapshot, an unchanged type keeps its object (and its memo of encoded responses).
 */
export class TypeSnapshot {
  /**
   * SotW version of the whole type: a hash of the sorted name/version pairs, taken per block of
   * names (set-version.ts, docs/xds.md §12.1) so that a derived snapshot re-hashes only the blocks
   * its changes touched.
   */
  readonly version: string;
  /** The blocks `version` was computed from; undefined when the version was given. */
  private readonly blocks: readonly VersionBlock[] | undefined;
  /** Entries sorted by name. */
  readonly sorted: readonly CacheEntry[];
  private readonly memo = new Map<string, MemoResponse>();
  private memoBytes = 0;
  /** When a large memoized body was last used, and the timer that drops them once idle. */
  private largeUsedAt = 0;
  private largeTimer: NodeJS.Timeout | undefined;

  /**
   * `version`, when given, must be the version of `sorted` as computed elsewhere (the build
   * thread's snapshot of the same entries: docs/architecture.md §14); it saves hashing every name
   * again. `blocks` are those of `version` (a derived snapshot's, set-version.ts).
   */
  constructor(
    readonly typeUrl: TypeUrl,
    readonly entries: ReadonlyMap<string, CacheEntry>,
    sorted?: readonly CacheEntry[],
    version?: string | { version: string; blocks: readonly VersionBlock[] },
  ) {
    this.sorted = sorted ?? [...entries.values()].sort(byName);
    const v = version ?? blockedVersion(this.sorted);
    if (typeof v === 'string') {
      this.version = v;
      this.blocks = undefined;
    } else {
      this.version = v.version;
      this.blocks = v.blocks;
    }
  }

  /**
   * The version of `sorted`, which differs from this snapshot's entries only in the `touched`
   * names: patched from this snapshot's blocks when it has them, else computed from every entry.
   */
  private versionAfter(sorted: readonly CacheEntry[], touched: readonly string[]): string | BlockedVersion {
    return this.blocks ? patchedVersion(this.sorted, this.blocks, sorted, touched) : blockedVersion(sorted);
  }

  /**
   * The snapshot of `entries`, which differ from `prev`'s in the `changed` (changed or added) and
   * `removed` names only. The sorted order is patched instead of sorting thousands of names again:
   * for a few changes each one is put in place by binary search (a copy of the pointer array and a
   * few moves of it, no look-up per name), otherwise the old order is merged with the added names.
   */
  static derive(
    prev: TypeSnapshot,
    entries: ReadonlyMap<string, CacheEntry>,
    changed: readonly string[],
    removed: readonly string[],
    version?: string,
  ): TypeSnapshot {
    const sorted =
      changed.length + removed.length <= SPLICE_MAX_CHANGES
        ? splicedOrder(prev, entries, changed, removed)
        : mergedOrder(prev, entries, changed, removed);
    return new TypeSnapshot(
      prev.typeUrl,
      entries,
      sorted,
      version ?? prev.versionAfter(sorted, removed.length === 0 ? changed : [...changed, ...removed]),
    );
  }

  /**
   * The snapshot of `entries`, which hold the same names as `prev`'s with the `updated` entries in
   * place of theirs. The sorted order keeps its shape: each updated entry takes its name's slot,
   * found by binary search, instead of walking every name again.
   */
  static replace(
    prev: TypeSnapshot,
    entries: ReadonlyMap<string, CacheEntry>,
    updated: readonly CacheEntry[],
  ): TypeSnapshot {
    const sorted = prev.sorted.slice();
    for (const entry of updated) sorted[indexOfName(sorted, entry.name)] = entry;
    return new TypeSnapshot(
      prev.typeUrl,
      entries,
      sorted,
      prev.versionAfter(
        sorted,
        updated.map((e) => e.name),
      ),
    );
  }

  /**
   * Encoded responses are built once per (type snapshot, key) and shared by every stream that
   * needs the same response; the memo dies with the snapshot. The key must determine the content.
   */
  memoize(key: string, build: () => MemoResponse): MemoResponse {
    let value = this.memo.get(key);
    if (value) {
      if (value.body.length >= MEMO_LARGE_BYTES) this.touchLarge();
      return value;
    }
    value = build();
    this.memo.set(key, value);
    this.memoBytes += value.body.length;
    for (const [k, v] of this.memo) {
      if (this.memo.size <= MEMO_LIMIT && this.memoBytes <= MEMO_BYTES) break;
      if (v === value) break;
      this.memo.delete(k);
      this.memoBytes -= v.body.length;
    }
    if (value.body.length >= MEMO_LARGE_BYTES) this.touchLarge();
    return value;
  }

  /**
   * Keeps the large memoized bodies (full-type responses: what a fleet's initial sync or a
   * reconnect storm sends every stream) for MEMO_IDLE_MS after their last use, then drops them.
   * Once the fleet is synced they would only hold a second copy of every resource's bytes (tens
   * of MiB at 5,000 ListenerSets); a later stream needing one encodes it again, to the same bytes.
   */
  private touchLarge(): void {
    this.largeUsedAt = Date.now();
    if (this.largeTimer) return;
    const sweep = (): void => {
      const idle = Date.now() - this.largeUsedAt;
      if (idle < MEMO_IDLE_MS) {
        this.largeTimer = setTimeout(sweep, MEMO_IDLE_MS - idle).unref();
        return;
      }
      this.largeTimer = undefined;
      this.dropLarge();
    };
    this.largeTimer = setTimeout(sweep, MEMO_IDLE_MS).unref();
  }

  /** Drops every memoized body of at least MEMO_LARGE_BYTES (they are built again on demand). */
  dropLarge(): void {
    for (const [k, v] of this.memo) {
      if (v.body.length < MEMO_LARGE_BYTES) continue;
      this.memo.delete(k);
      this.memoBytes -= v.body.length;
    }
  }

  get memoSize(): number {
    return this.memo.size;
  }
}

/**
 * Up to this many changed and removed names, derive puts each in place by binary search and an
 * array move (O(k·log n) comparisons and k moves of n pointers); above, one merge pass of O(n)
 * look-ups is cheaper.
 */
const SPLICE_MAX_CHANGES = 64;

/**
 * derive's order for a few changes: prev's sorted entries with the changed ones replaced, the
 * removed ones taken out and the added ones inserted, each found by binary search. Entries of names
 * outside `changed` are prev's own (derive's contract), so they need no look-up.
 */
function splicedOrder(
  prev: TypeSnapshot,
  entries: ReadonlyMap<string, CacheEntry>,
  changed: readonly string[],
  removed: readonly string[],
): CacheEntry[] {
  const sorted = prev.sorted.slice();
  const added: string[] = [];
  for (const name of changed) {
    if (prev.entries.has(name)) sorted[indexOfName(sorted, name)] = entries.get(name)!;
    else added.push(name);
  }
  for (const name of removed) {
    // A name not there is skipped, as the merge pass skips it.
    const at = lowerBoundByName(sorted, name);
    if (at < sorted.length && sorted[at].name === name) sorted.splice(at, 1);
  }
  for (const name of added) sorted.splice(lowerBoundByName(sorted, name), 0, entries.get(name)!);
  return sorted;
}

/** derive's order for many changes: one pass over prev's order, merging in the added names. */
function mergedOrder(
  prev: TypeSnapshot,
  entries: ReadonlyMap<string, CacheEntry>,
  changed: readonly string[],
  removed: readonly string[],
): CacheEntry[] {
  const added = changed.filter((n) => !prev.entries.has(n)).sort(compareStrings);
  const gone = new Set(removed);
  const sorted: CacheEntry[] = [];
  let i = 0;
  for (const old of prev.sorted) {
    if (gone.has(old.name)) continue;
    while (i < added.length && added[i] < old.name) sorted.push(entries.get(added[i++])!);
    sorted.push(entries.get(old.name)!);
  }
  while (i < added.length) sorted.push(entries.get(added[i++])!);
  return sorted;
}

/** The index of `name` in entries sorted by name (it must be there). */
function indexOfName(sorted: readonly CacheEntry[], name: string): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareStrings(sorted[mid].name, name);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  throw new Error(`no entry named "${name}"`);
}

/** One fleet's snapshot: every type, plus the cluster → ClusterLoadAssignment name map. */
export interface FleetSnapshot {
  readonly fleet: string;
  readonly types: Readonly<Record<TypeUrl, TypeSnapshot>>;
  /** EDS clusters: cluster name → CLA name (eds_cluster_config.service_name or the cluster name). */
  readonly clusterEds: ReadonlyMap<string, string>;
}

/** What a setFleet/removeFleet changed, as delivered to the ADS server. */
export interface FleetChange {
  readonly fleet: string;
  /** The fleet's snapshot after the change; undefined when the fleet was removed. */
  readonly snapshot: FleetSnapshot | undefined;
  /** True when the fleet had no snapshot before (held streams can now be answered). */
  readonly first: boolean;
  /** Per type: names added or changed. */
  readonly changed: ReadonlyMap<TypeUrl, readonly string[]>;
  /** Per type: names removed. */
  readonly removed: ReadonlyMap<TypeUrl, readonly string[]>;
}
