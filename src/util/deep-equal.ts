/**
 * Returns whether two plain-data values (objects, arrays, primitives) are deeply equal.
 *
 * Key order does not matter, list order does. The value under `ignoredKey`, at any depth, is not
 * compared, though the key must be present on both sides.
 *
 * Identical references short-circuit, so comparing models that already share unchanged nodes
 * costs only the changed parts. A key missing on one side and present with the value undefined
 * on the other makes the objects differ.
 */
export function deepEqual(a: unknown, b: unknown, ignoredKey?: string): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i], ignoredKey)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  const keys = Object.keys(oa);
  if (keys.length !== Object.keys(ob).length) return false;
  for (const k of keys) {
    if (!(k in ob)) return false;
    if (k === ignoredKey) continue;
    if (!deepEqual(oa[k], ob[k], ignoredKey)) return false;
  }
  return true;
}
