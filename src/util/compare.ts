/**
 * Orders two strings by UTF-16 code units, for Array.prototype.sort.
 *
 * Everything Convoy sorts for output (resources, statuses, names) must come out the same on every
 * platform and locale, so that the same objects give the same bytes and versions on every
 * replica; localeCompare would not, plain `<` does.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders objects by their `name` field, by code units (compareStrings). */
export function byName(a: { name: string }, b: { name: string }): number {
  return compareStrings(a.name, b.name);
}

/**
 * Returns the first index of `sorted` (ordered by byName) whose name is not below `name`: where
 * `name` is, or where it would be inserted. Binary search, so that patching a sorted list of
 * thousands of resources costs O(log n) comparisons per name.
 */
export function lowerBoundByName(sorted: readonly { name: string }[], name: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareStrings(sorted[mid].name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
