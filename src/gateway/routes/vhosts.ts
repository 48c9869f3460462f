/**
 * Builds the virtual hosts of one RouteConfiguration, with listener isolation
 * (GatewayHTTPListenerIsolation, docs/gateway-api.md §12).
 *
 * A request is served only by the routes of the most specific listener matching its host. A
 * hostname a route gets through a broad listener is dropped when a more specific sibling listener
 * on the same port covers it, and each virtual host only gathers routes of the listener owning it.
 *
 * Inside a virtual host, routes are ordered by Gateway API precedence: hostname specificity of the
 * route hostname that matched, then match precedence (exact path, longest prefix, method, headers,
 * query params), then oldest route, namespace/name, rule and match order.
 */
import type { RouteModel, VirtualHostModel } from '../../model/fleet';
import type { ResolvedListener } from '../resolved';
import { compareRouteIds } from './identity';
import type { AttachedRoute, CompiledRoute, RouteEntry } from './types';

export const CATCH_ALL = '*';

/** Returns whether a hostname is a wildcard (`*.…`). */
function isWildcard(h: string): boolean {
  return h.startsWith('*.');
}

/**
 * Returns whether every host matched by `h` is also matched by `pattern`.
 *
 * `pattern` undefined, '' or '*' matches everything; `*.a.b` matches names and wildcards strictly
 * under `.a.b`.
 */
export function hostnameCovers(pattern: string | undefined, h: string): boolean {
  if (pattern === undefined || pattern === '' || pattern === CATCH_ALL) return true;
  if (h === CATCH_ALL) return false;
  const p = pattern.toLowerCase();
  const n = h.toLowerCase();
  if (p === n) return true;
  if (!isWildcard(p)) return false;
  const suffix = p.slice(1);
  return n.length > suffix.length && n.endsWith(suffix);
}

/**
 * Returns the specificity of a listener or route hostname, for choosing between matches.
 *
 * Exact names beat wildcards, longer wildcards beat shorter ones, no hostname (or '*') comes last.
 */
export function hostnameSpecificity(h: string | undefined): number {
  if (h === undefined || h === '' || h === CATCH_ALL) return 0;
  if (isWildcard(h)) return 1 + h.length;
  return 1_000_000 + h.length;
}

export interface ListenerRoutes {
  listener: ResolvedListener;
  routes: AttachedRoute[];
}

/**
 * Indexes the hostnames of the ready listeners sharing a port.
 *
 * "Is this hostname claimed by a more specific sibling listener?" then costs a few map lookups
 * instead of a scan of all siblings. Build it once per port and share it between that port's route
 * configurations.
 */
export class ListenerClaims {
  private readonly byHostname = new Map<string, { qualifiedName: string; specificity: number }[]>();

  constructor(siblings: readonly ResolvedListener[]) {
    for (const s of siblings) {
      if (!s.hostname) continue; // A listener without hostname never claims anything.
      const h = s.hostname.toLowerCase();
      const list = this.byHostname.get(h);
      const entry = { qualifiedName: s.qualifiedName, specificity: hostnameSpecificity(h) };
      if (list) list.push(entry);
      else this.byHostname.set(h, [entry]);
    }
  }

  /** Returns whether a sibling other than `listener`, more specific than it, covers hostname `h`. */
  claimedElsewhere(listener: ResolvedListener, h: string): boolean {
    const own = hostnameSpecificity(listener.hostname);
    for (const key of coveringHostnames(h)) {
      for (const c of this.byHostname.get(key) ?? []) {
        if (c.qualifiedName !== listener.qualifiedName && c.specificity > own) return true;
      }
    }
    return false;
  }
}

/** Returns the hostnames each attached route keeps on its listener after isolation against its siblings. */
export function isolateHostnames(group: ListenerRoutes[], claims: ListenerClaims): ListenerRoutes[] {
  return group.map(({ listener, routes }) => {
    const kept: AttachedRoute[] = [];
    for (const r of routes) {
      const hostnames = r.hostnames.filter((h) => !claims.claimedElsewhere(listener, h));
      if (hostnames.length > 0) kept.push({ route: r.route, hostnames });
    }
    return { listener, routes: kept };
  });
}

/** Returns whether a listener of `group` other than `lr`, less specific than `h`, also matches `h`. */
function coveredByBroaderSibling(lr: ListenerRoutes, h: string, group: readonly ListenerRoutes[]): boolean {
  const covering = coveringHostnames(h);
  return group.some((o) => {
    if (o === lr) return false;
    const other = o.listener.hostname?.toLowerCase() ?? CATCH_ALL;
    return other !== h && covering.includes(other);
  });
}

/**
 * Orders route entries by match precedence: exact path, then regex, then longest prefix; method;
 * most headers; most query params; then oldest route, rule and match order.
 */
export function compareEntries(a: RouteEntry, ra: CompiledRoute, b: RouteEntry, rb: CompiledRoute): number {
  const pa = a.precedence;
  const pb = b.precedence;
  return (
    pa.pathRank - pb.pathRank ||
    pb.pathLength - pa.pathLength ||
    Number(pb.hasMethod) - Number(pa.hasMethod) ||
    pb.headers - pa.headers ||
    pb.queryParams - pa.queryParams ||
    compareRouteIds(ra.id, rb.id) ||
    pa.rule - pb.rule ||
    pa.match - pb.match
  );
}

/**
 * Returns the route hostnames that can cover `h`: `h` itself, every wildcard over one of its parent
 * domains (`*.b.c` and `*.c` for `a.b.c`), and the catch-all.
 */
export function coveringHostnames(h: string): string[] {
  if (h === CATCH_ALL) return [CATCH_ALL];
  const labels = h.split('.');
  const out = [h];
  for (let i = 1; i < labels.length; i++) {
    const w = `*.${labels.slice(i).join('.')}`;
    if (w !== h) out.push(w);
  }
  out.push(CATCH_ALL);
  return out;
}

/**
 * Builds the virtual hosts of one RouteConfiguration from the listeners sharing it.
 *
 * `claims` indexes all ready listeners competing for the same requests (same port), for isolation.
 * Cost is linear in the number of (route, hostname) pairs: each virtual host looks up only the
 * route hostnames that can cover it.
 */
export function buildVirtualHosts(group: ListenerRoutes[], claims: ListenerClaims): VirtualHostModel[] {
  return virtualHostsOf(isolateHostnames(group, claims));
}

/** Returns the virtual hosts of already isolated listener routes (see buildVirtualHosts). */
export function virtualHostsOf(isolated: ListenerRoutes[]): VirtualHostModel[] {
  // Owner of each virtual host: the most specific listener producing it.
  const owners = new Map<string, ListenerRoutes>();
  // Per listener: route hostname → routes carrying it (in route order).
  const indexes = new Map<ListenerRoutes, Map<string, AttachedRoute[]>>();
  for (const lr of isolated) {
    const index = new Map<string, AttachedRoute[]>();
    indexes.set(lr, index);
    for (const r of lr.routes) {
      for (const h of r.hostnames) {
        const list = index.get(h);
        if (list) list.push(r);
        else index.set(h, [r]);
        const prev = owners.get(h);
        if (
          !prev ||
          hostnameSpecificity(lr.listener.hostname) > hostnameSpecificity(prev.listener.hostname)
        ) {
          owners.set(h, lr);
        }
      }
    }
  }
  // A listener with a hostname owns that hostname even with no route for it: its requests get
  // Envoy's 404 there instead of falling through to a broader sibling's routes (§12).
  for (const lr of isolated) {
    const h = lr.listener.hostname?.toLowerCase();
    if (h && h !== CATCH_ALL && !owners.has(h) && coveredByBroaderSibling(lr, h, isolated)) owners.set(h, lr);
  }
  const names = [...owners.keys()].sort();
  return names.map((h) => {
    const index = indexes.get(owners.get(h)!)!;
    // The most specific of each route's hostnames that matches this virtual host.
    const best = new Map<CompiledRoute, number>();
    for (const key of coveringHostnames(h)) {
      const rank = hostnameSpecificity(key);
      for (const r of index.get(key) ?? []) {
        if ((best.get(r.route) ?? -1) < rank) best.set(r.route, rank);
      }
    }
    const items: { entry: RouteEntry; route: CompiledRoute; hostRank: number }[] = [];
    for (const [route, hostRank] of best)
      for (const entry of route.entries) items.push({ entry, route, hostRank });
    items.sort((a, b) => b.hostRank - a.hostRank || compareEntries(a.entry, a.route, b.entry, b.route));
    const routes: RouteModel[] = [];
    const seen = new Set<string>();
    for (const it of items) {
      if (seen.has(it.entry.model.name)) continue;
      seen.add(it.entry.model.name);
      routes.push(it.entry.model);
    }
    return { name: h, domains: [h], routes };
  });
}
