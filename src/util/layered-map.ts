/**
 * Provides immutable maps and sets that share structure with the one they were derived from, so
 * that a small change to a large index costs about the square root of its size instead of a full
 * copy.
 *
 * A LayeredMap is a large base map plus a small top map of the entries set since; neither is ever
 * changed after construction, so every LayeredMap handed out keeps its contents for good. `with`
 * copies only the top map; once the top map holds more than √(base size) entries the two are
 * merged into a new base. A change to a map of n entries thus copies about 2·√n entries on
 * average (the top map, plus a merge every √n changes) instead of n. Iteration follows Map order:
 * entries of the base in their order (with their newest value), then the entries added since.
 */

const EMPTY: ReadonlyMap<never, never> = new Map<never, never>();

/** Marks, in a top map, a key of the base that `without` removed. */
const REMOVED: unique symbol = Symbol('removed');
type Slot<V> = V | typeof REMOVED;

/** Below this many top entries `with` never merges: copying a few entries is cheaper than a merge. */
const MIN_TOP_BEFORE_MERGE = 32;

/** An immutable map sharing structure with the map it was derived from (see the file comment). */
export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    private readonly top: ReadonlyMap<K, Slot<V>>,
    readonly size: number,
  ) {}

  /** Wraps `entries` without copying it: the caller hands it over and must not change it afterwards. */
  static adopt<K, V>(entries: Map<K, V>): LayeredMap<K, V> {
    return new LayeredMap<K, V>(entries, EMPTY, entries.size);
  }

  /** Returns a map with `entries` set (later ones win), leaving this one as it is. */
  with(entries: Iterable<readonly [K, V]>): LayeredMap<K, V> {
    const list = [...entries];
    // A key `without` removed from the base comes back last, as in a Map: copy into a new base.
    if (list.some(([key]) => this.top.get(key) === REMOVED)) {
      const all = new Map(this.entries());
      for (const [key, value] of list) all.set(key, value);
      return LayeredMap.adopt(all);
    }
    const top = new Map(this.top);
    let size = this.size;
    let count = 0;
    for (const [key, value] of list) {
      if (!present(top, this.base, key)) size++;
      top.set(key, value);
      count++;
    }
    return count === 0 ? this : this.layered(top, size);
  }

  /**
   * Returns a map without `keys`, leaving this one as it is: a key of the base is marked removed in
   * the top map (merged away like any other top entry), so a removal costs what a `with` costs.
   */
  without(keys: Iterable<K>): LayeredMap<K, V> {
    const top = new Map(this.top);
    let size = this.size;
    let count = 0;
    for (const key of keys) {
      if (!present(top, this.base, key)) continue;
      size--;
      count++;
      if (this.base.has(key)) top.set(key, REMOVED);
      else top.delete(key);
    }
    return count === 0 ? this : this.layered(top, size);
  }

  /** Returns a map of this base and `top`, merged into a new base once the top is large (file comment). */
  private layered(top: Map<K, Slot<V>>, size: number): LayeredMap<K, V> {
    if (top.size > MIN_TOP_BEFORE_MERGE && top.size * top.size > this.base.size) {
      const base = new Map(this.base);
      for (const [key, value] of top) {
        if (value === REMOVED) base.delete(key);
        else base.set(key, value);
      }
      return new LayeredMap<K, V>(base, EMPTY, size);
    }
    return new LayeredMap<K, V>(this.base, top, size);
  }

  get(key: K): V | undefined {
    if (!this.top.has(key)) return this.base.get(key);
    const value = this.top.get(key);
    return value === REMOVED ? undefined : value;
  }

  has(key: K): boolean {
    return present(this.top, this.base, key);
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) {
      if (!this.top.has(key)) yield [key, value];
      else {
        const newer = this.top.get(key) as Slot<V>;
        if (newer !== REMOVED) yield [key, newer];
      }
    }
    for (const [key, value] of this.top) if (value !== REMOVED && !this.base.has(key)) yield [key, value];
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }
}

/** Returns whether `key` is in the map of `base` overlaid with `top`. */
function present<K, V>(top: ReadonlyMap<K, Slot<V>>, base: ReadonlyMap<K, V>, key: K): boolean {
  return top.has(key) ? top.get(key) !== REMOVED : base.has(key);
}

/** An immutable set sharing structure with the set it was derived from (a LayeredMap of members). */
export class LayeredSet<T> implements Iterable<T> {
  private constructor(private readonly members: LayeredMap<T, true>) {}

  /** Returns a set of `items`. */
  static of<T>(items: Iterable<T>): LayeredSet<T> {
    const members = new Map<T, true>();
    for (const item of items) members.set(item, true);
    return new LayeredSet(LayeredMap.adopt(members));
  }

  /** Returns a set with `items` added, leaving this one as it is. */
  with(items: Iterable<T>): LayeredSet<T> {
    const entries: [T, true][] = [];
    for (const item of items) entries.push([item, true]);
    return entries.length === 0 ? this : new LayeredSet(this.members.with(entries));
  }

  has(item: T): boolean {
    return this.members.has(item);
  }

  get size(): number {
    return this.members.size;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.members.keys();
  }
}
