/**
 * Recomputes some listeners' route configurations inside a fleet's last FleetModel, exactly as
 * buildFleet computes them: shared by the route fast paths (routes.ts for edits, route-added.ts for
 * creations; docs/architecture.md §8).
 */
import type { FleetModel, PortModel, VirtualHostModel } from '../../model/fleet';
import { deepEqual } from '../../util/deep-equal';
import type { ResolvedGateway, ResolvedListener } from '../resolved';
import type { BuildMemo } from '../build-memo';
import { HTTP_KINDS, routesOf } from '../fleet';
import type { AttachedRoute } from '../routes/types';
import { ListenerClaims } from '../routes/vhosts';
import type { ListenerRoutes } from '../routes/vhosts';
import type { VirtualHostEntry } from '../virtual-hosts';
import { VirtualHostMemo } from '../virtual-hosts';

/** One recomputed route configuration: the memo entry `previous` was built from, and the new one. */
export interface RecomputedConfig {
  before: VirtualHostEntry;
  after: VirtualHostEntry;
}

/** The ports of a fleet with some route configurations recomputed, not yet committed to the memo. */
export interface RecomputedRouteConfigs {
  ports: PortModel[];
  configs: RecomputedConfig[];
  /** Commit once the caller has checked `configs`: the memo then holds the new entries. */
  vhosts: VirtualHostMemo;
}

/**
 * Returns `previous`'s ports with the route configurations of `listeners` (qualifiedNames)
 * recomputed from `attached`, or undefined when buildFleet must run instead.
 *
 * The configurations are computed as buildFleet computes them (same listener groups, the port's
 * ListenerClaims, the same virtual-host memo), every other port and chain kept as is. `previous`
 * must be the FleetModel of `gw` as buildFleet (or a fast path) last made it, and `gw`'s listeners
 * those it was built from: a listener that is not ready has no configuration (skipped), and a memo
 * entry that does not hold exactly what `previous` serves is refused (undefined), so the memo and
 * the fleet never disagree. Nothing is committed to the memo.
 */
export function recomputeRouteConfigs(
  memo: BuildMemo,
  gw: ResolvedGateway,
  attached: ReadonlyMap<string, AttachedRoute[]>,
  previous: FleetModel,
  listeners: ReadonlySet<string>,
): RecomputedRouteConfigs | undefined {
  if (!gw.accepted) return undefined;
  const { byPort, byName, claims: claimsByPort } = portGroupsOf(gw.listeners);
  const vhosts = new VirtualHostMemo(memo.virtualHosts, gw.fleet, true);
  const ports = previous.ports.slice();
  const portIndex = new Map(ports.map((p, i) => [p.port, i]));
  /** Recomputed route configurations: memo key → the virtual hosts `previous` serves there. */
  const served = new Map<string, VirtualHostModel[]>();
  const httpDone = new Set<number>();
  for (const qn of listeners) {
    const l = byName.get(qn);
    if (!l || !l.ready) continue; // Not served: no route configuration of its own.
    const group = byPort.get(l.port)!;
    const first = group[0];
    const at = portIndex.get(l.port);
    if (at === undefined) return undefined;
    const port = ports[at];
    if (first.protocol === 'HTTP') {
      if (l.protocol !== 'HTTP' || httpDone.has(l.port)) continue;
      httpDone.add(l.port);
      const http = group.filter((x) => x.protocol === 'HTTP');
      const routes: ListenerRoutes[] = http.map((x) => ({
        listener: x,
        routes: routesOf(attached, x, HTTP_KINDS),
      }));
      if (!port.http) return undefined;
      const entry = vhosts.virtualHosts(routes, new ListenerClaims(http), l.port, 'http');
      served.set(VirtualHostMemo.key(routes, l.port, 'http'), port.http.virtualHosts);
      ports[at] = { ...port, http: { ...port.http, virtualHosts: entry.virtualHosts } };
    } else if (first.protocol === 'HTTPS' || first.protocol === 'TLS') {
      if (l.protocol !== 'HTTPS') continue;
      let claims = claimsByPort.get(l.port);
      if (!claims) {
        claims = new ListenerClaims(group.filter((x) => x.protocol === 'HTTPS' || x.protocol === 'TLS'));
        claimsByPort.set(l.port, claims);
      }
      const routes: ListenerRoutes[] = [{ listener: l, routes: routesOf(attached, l, HTTP_KINDS) }];
      const entry = vhosts.virtualHosts(routes, claims, l.port, 'https');
      const i = port.filterChains.findIndex((c) => c.name === l.qualifiedName);
      const chainHosts = i < 0 ? undefined : port.filterChains[i].virtualHosts;
      const key = VirtualHostMemo.key(routes, l.port, 'https');
      if (!chainHosts || served.has(key)) return undefined;
      served.set(key, chainHosts);
      const filterChains = port.filterChains.slice();
      filterChains[i] = { ...filterChains[i], virtualHosts: entry.virtualHosts };
      ports[at] = { ...port, filterChains };
    } else return undefined; // A route kind HTTP listeners serve, on a TCP or UDP port: not ours.
  }
  const configs: RecomputedConfig[] = [];
  for (const [key, hosts] of served) {
    // The memo entry of the last build must be the one `previous` was assembled from.
    const before = vhosts.previousEntry(key);
    const after = vhosts.nextEntry(key);
    if (!before || !after || !deepEqual(before.virtualHosts, hosts)) return undefined;
    configs.push({ before, after });
  }
  return { ports, configs, vhosts };
}

/** A Gateway's ready listeners by port and by name, and the TLS ports' claims (ListenerClaims). */
interface PortGroups {
  byPort: Map<number, ResolvedListener[]>;
  /** Every listener (ready or not) by qualified name, the first of a name. */
  byName: Map<string, ResolvedListener>;
  claims: Map<number, ListenerClaims>;
}

/**
 * Per listener list of a resolved Gateway (which route edits leave as they are: they share it with
 * the state of the last full build), its PortGroups: a route fast path looks up its listeners and
 * their siblings' claims instead of going over every listener of the Gateway (20,000 on one port at
 * xlarge). Neither the list nor its listeners' ports, names and hostnames change once resolved; a
 * fast path that changes a listener (route creation: attachedRoutes) makes a new list.
 */
const portGroups = new WeakMap<readonly ResolvedListener[], PortGroups>();

/** Returns the PortGroups of a Gateway's listeners (memoized by the list; see portGroups). */
function portGroupsOf(listeners: readonly ResolvedListener[]): PortGroups {
  let groups = portGroups.get(listeners);
  if (groups) return groups;
  groups = { byPort: new Map(), byName: new Map(), claims: new Map() };
  for (const l of listeners) {
    if (!groups.byName.has(l.qualifiedName)) groups.byName.set(l.qualifiedName, l);
    if (!l.ready) continue;
    const list = groups.byPort.get(l.port);
    if (list) list.push(l);
    else groups.byPort.set(l.port, [l]);
  }
  portGroups.set(listeners, groups);
  return groups;
}
