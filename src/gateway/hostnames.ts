/**
 * Matches and intersects listener and route hostnames (docs/gateway-api.md §11).
 *
 * A wildcard `*.example.com` matches one or more labels in front of `example.com`, never
 * `example.com` itself. Comparison is case-insensitive; results are lower-case.
 */

/** Returns a hostname trimmed, lower-cased and without a trailing dot. */
function norm(h: string): string {
  return h.trim().toLowerCase().replace(/\.$/, '');
}

function isWildcard(h: string): boolean {
  return h.startsWith('*.');
}

/** Returns whether the concrete-or-wildcard `name` lies under wildcard `wild` (`*.a.b`). */
function underWildcard(wild: string, name: string): boolean {
  const suffix = wild.slice(1); // ".a.b"
  return name.length > suffix.length && name.endsWith(suffix);
}

/**
 * Returns whether a route hostname can receive traffic through a listener with the given hostname.
 *
 * An absent or empty listener hostname matches every route hostname.
 */
export function hostnameMatches(listenerHostname: string | undefined, routeHostname: string): boolean {
  return intersectOne(listenerHostname, routeHostname) !== undefined;
}

/**
 * Returns the hostname a route hostname serves on a listener hostname (the more specific of the
 * two), or undefined when they do not intersect.
 */
function intersectOne(listenerHostname: string | undefined, routeHostname: string): string | undefined {
  const r = norm(routeHostname);
  if (r === '') return undefined;
  if (listenerHostname === undefined || norm(listenerHostname) === '' || norm(listenerHostname) === '*')
    return r;
  const l = norm(listenerHostname);
  if (l === r) return r;
  const lw = isWildcard(l);
  const rw = isWildcard(r);
  if (lw && !rw) return underWildcard(l, r) ? r : undefined;
  if (!lw && rw) return underWildcard(r, l) ? l : undefined;
  if (lw && rw) {
    // Both wildcards: the more specific one, when one is nested in the other.
    if (underWildcard(l, r)) return r;
    if (underWildcard(r, l)) return l;
  }
  return undefined;
}

/**
 * Returns the hostnames a route serves on a listener:
 *  - no route hostnames: the listener's hostname, or `*` when the listener has none;
 *  - otherwise every route hostname intersected with the listener's (see intersectOne),
 *    de-duplicated and sorted. An empty result means the route does not match this listener.
 */
export function intersectHostnames(
  listenerHostname: string | undefined,
  routeHostnames: string[] | undefined,
): string[] {
  const listener = listenerHostname === undefined ? '' : norm(listenerHostname);
  if (!routeHostnames || routeHostnames.length === 0) return [listener === '' ? '*' : listener];
  const out = new Set<string>();
  for (const rh of routeHostnames) {
    const h = intersectOne(listenerHostname, rh);
    if (h !== undefined) out.add(h);
  }
  return [...out].sort();
}
