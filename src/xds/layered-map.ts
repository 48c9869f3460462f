/**
 * A read-only map made of a shared base map and a small layer of changes over it, so that a type
 * snapshot which changed a few of its 40,000 entries need not copy all of them (docs/xds.md §12).
 */

/** Marks a base key removed in the layer. */
const GONE: unique symbol = Symbol('gone');

/**
 * Above this many changes in its layer (for a base of n keys: LAYER_MIN + sqrt(n) * LAYER_PER_ROOT),
 * a map is flattened into a plain Map: each patch copies the layer, so the layer stays small, and
 * the O(n) flattening comes once every O(sqrt(n)) patches.
 */
const LAYER_MIN = 32;
const LAYER_PER_ROOT = 2;

/**
 * An immutable map: `base` with the layer's values in place of its own (GONE: removed) and the
 * layer's other keys added. Iteration gives the base's keys in its order, then the added keys in
 * the order they were added.
 */
export class LayeredMap<V> implements ReadonlyMap<string, V> {
  private constructor(
    private readonly base: ReadonlyMap<string, V>,
    private readonly layer: ReadonlyMap<string, V | typeof GONE>,
    readonly size: number,
  ) {}

  /**
   * `prev` with the `set` entries put in and the `removed` keys taken out (a key in both is set).
   * Costs the size of the changes plus prev's layer, not prev's size, until the layer outgrows its
   * bound and the result is flattened.
   */
  static patched<V>(
    prev: ReadonlyMap<string, V>,
    set: Iterable<readonly [string, V]>,
    removed: Iterable<string>,
  ): ReadonlyMap<string, V> {
    const base = prev instanceof LayeredMap ? (prev.base as ReadonlyMap<string, V>) : prev;
    const layer = new Map<string, V | typeof GONE>(prev instanceof LayeredMap ? prev.layer : []);
    let size = prev.size;
    for (const key of removed) {
      if (!prev.has(key)) continue;
      size--;
      if (base.has(key)) layer.set(key, GONE);
      else layer.delete(key);
    }
    for (const [key, value] of set) {
      const inBase = base.has(key);
      const current = layer.get(key);
      if (current === GONE || (current === undefined && !inBase)) size++;
      layer.set(key, value);
    }
    const map = new LayeredMap(base, layer, size);
    return layer.size > LAYER_MIN + Math.sqrt(base.size) * LAYER_PER_ROOT ? new Map(map) : map;
  }

  get(key: string): V | undefined {
    const v = this.layer.get(key);
    if (v === GONE) return undefined;
    return v !== undefined ? v : this.base.get(key);
  }

  has(key: string): boolean {
    const v = this.layer.get(key);
    return v === GONE ? false : v !== undefined || this.base.has(key);
  }

  *entries(): MapIterator<[string, V]> {
    for (const [key, value] of this.base) {
      const v = this.layer.get(key);
      if (v === GONE) continue;
      yield [key, v !== undefined ? v : value];
    }
    for (const [key, v] of this.layer) if (v !== GONE && !this.base.has(key)) yield [key, v];
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [key, value] of this.entries()) fn(value, key, this);
  }
}
