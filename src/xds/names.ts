/**
 * Subscribed-name sets shared between streams.
 *
 * Every Envoy of a fleet subscribes to the same RDS, SDS and EDS names: at 5,000 hostnames that is
 * ~12,000 names per stream, and a private Set per stream and type costs ~350 KB, i.e. ~350 MB for
 * 1,000 Envoys. Subscriptions are therefore immutable sets, shared:
 *  - SotW: the encoded `resource_names` of a request are interned by content, with their decoded
 *    names and the set built from them, so every stream sending the same list holds the same objects;
 *  - delta: a subscription change is applied as a transition from the stream's current set, and
 *    transitions are memoized on (set, change), so streams making the same changes in the same
 *    order (the normal case: they all read the same Listeners and Clusters) share every set.
 * Interned values are held weakly and dropped when no stream uses them any more.
 */

export type NameSet = ReadonlySet<string>;

export const NO_NAMES: NameSet = Object.freeze(new Set<string>());

interface Cleanup {
  map: Map<string, WeakRef<object>>;
  key: string;
  ref: WeakRef<object>;
}

const registry = new FinalizationRegistry<Cleanup>(({ map, key, ref }) => {
  if (map.get(key) === ref) map.delete(key);
});

function remember<T extends object>(map: Map<string, WeakRef<object>>, key: string, value: T): T {
  const ref = new WeakRef(value);
  map.set(key, ref);
  registry.register(value, { map, key, ref });
  return value;
}

const transitions = new WeakMap<NameSet, Map<string, WeakRef<object>>>();

/**
 * `base` plus `added`, then minus `removed` (in that order), as a shared set. Returns `base` itself
 * when nothing changes. Never modifies `base`.
 */
export function withChanges(base: NameSet, added: readonly string[], removed: readonly string[]): NameSet {
  const add: string[] = [];
  const seen = new Set<string>();
  for (const n of added) {
    if (!base.has(n) && !seen.has(n)) {
      seen.add(n);
      add.push(n);
    }
  }
  const rem: string[] = [];
  const gone = new Set<string>();
  for (const n of removed) {
    if ((base.has(n) || seen.has(n)) && !gone.has(n)) {
      gone.add(n);
      rem.push(n);
    }
  }
  if (add.length === 0 && rem.length === 0) return base;
  const key = `${add.join('\n')}\0${rem.join('\n')}`;
  let byKey = transitions.get(base);
  if (!byKey) {
    byKey = new Map();
    transitions.set(base, byKey);
  }
  const hit = byKey.get(key)?.deref() as NameSet | undefined;
  if (hit) return hit;
  const next = new Set(base);
  for (const n of add) next.add(n);
  for (const n of rem) next.delete(n);
  return remember(byKey, key, next);
}

/** Interned encoded SotW names: the shared copy of the bytes and their decoded names. */
export interface EncodedNames {
  readonly raw: Buffer;
  readonly names: readonly string[];
}

const encoded = new Map<string, WeakRef<object>>();

/** The shared EncodedNames for these bytes (copied once; `raw` may be a view of a request). */
export function internEncodedNames(raw: Buffer, decode: (raw: Buffer) => string[]): EncodedNames {
  const key = raw.toString('latin1');
  const hit = encoded.get(key)?.deref() as EncodedNames | undefined;
  if (hit) return hit;
  const copy = Buffer.from(raw);
  return remember(encoded, key, { raw: copy, names: Object.freeze(decode(copy)) });
}

const explicitSets = new WeakMap<readonly string[], Map<boolean, NameSet>>();

/**
 * The set of explicitly named resources in a SotW subscription: the names, without `*` when the type
 * supports wildcards (there `*` means "everything"). Shared per names array.
 */
export function explicitNamesOf(names: readonly string[], wildcardCapable: boolean): NameSet {
  let byMode = explicitSets.get(names);
  if (!byMode) {
    byMode = new Map();
    explicitSets.set(names, byMode);
  }
  let set = byMode.get(wildcardCapable);
  if (!set) {
    const s = new Set<string>();
    for (const n of names) if (!(n === '*' && wildcardCapable)) s.add(n);
    set = s.size === 0 ? NO_NAMES : s;
    byMode.set(wildcardCapable, set);
  }
  return set;
}

/** What is in `to` and not in `from`, and in `from` and not in `to`, in each set's order. */
export interface NameSetDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

const diffs = new WeakMap<NameSet, WeakMap<NameSet, NameSetDiff>>();

/**
 * The difference between two subscription sets, computed once per pair: when a Listener change
 * adds a route configuration, 1,000 SotW streams move from the same shared set to the same new
 * one, and comparing 5,000 names per stream cost ~1.5 s of CPU per push at that size.
 */
export function diffNameSets(from: NameSet, to: NameSet): NameSetDiff {
  let byTo = diffs.get(from);
  if (!byTo) {
    byTo = new WeakMap();
    diffs.set(from, byTo);
  }
  let diff = byTo.get(to);
  if (!diff) {
    const added: string[] = [];
    const removed: string[] = [];
    for (const n of to) if (!from.has(n)) added.push(n);
    for (const n of from) if (!to.has(n)) removed.push(n);
    diff = { added, removed };
    byTo.set(to, diff);
  }
  return diff;
}

const starCounts = new WeakMap<readonly string[], number>();

/** How many `*` entries a (shared, frozen) names array holds; memoized per array. */
export function starCount(names: readonly string[]): number {
  let n = starCounts.get(names);
  if (n === undefined) {
    n = 0;
    for (const name of names) if (name === '*') n++;
    starCounts.set(names, n);
  }
  return n;
}
