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
