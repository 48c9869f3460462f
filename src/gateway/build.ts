/**
 * The whole gateway build: store view → one FleetModel per Gateway + every status Convoy writes.
 *
 *   resolveGateways (listeners.ts) → compile routes → attach routes (routes/attach.ts)
 *   → fill attachedRoutes → assemble FleetModels → statuses.
 *
 * Pure and deterministic: no I/O, time only from opts.now, every list sorted.
 */
import type {
  BuildOptions,
  GatewayBuildResult,
  ResolvedGateway,
  ResolvedListener,
  StoreView,
} from './resolved';
import type { FilterChainModel, FleetModel, PortModel, SecretModel, VirtualHostModel } from '../dag/model';
import type { ObjectStatus } from '../status/types';
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type { ParentReference } from './api';
import { GATEWAY_API_VERSION } from './api';
import { gatewayClassStatuses } from './gatewayclass';
import {
  gatewayAndListenerSetStatuses,
  gatewayStatus,
  resolveAddedListenerSet,
  resolveGateways,
} from './listeners';
import { listenerSetParent, listenerSetStatus, listenerSetVerdict } from './listenersets';
import { acceptedGatewayClasses } from './gatewayclass';
import type { BackendPolicy, ClusterRef } from './backends';
import { buildClusters } from './backends';
import { collectEndpointRefusals } from './endpoint-guard';
import { attachRoute, attachRoutes, hasValidRules, indexParents, parentKey, targetOf } from './routes/attach';
import type { AttachmentResult, ParentTarget } from './routes/attach';
import { compileGRPCRoute, compileHTTPRoute } from './routes/compile';
import { compileMemoized } from './routes/memo';
import { compileTLSRoute } from './routes/tls';
import { compareRouteIds, cmp, routeIdentity } from './routes/identity';
import { deepEqual } from '../dag/reuse';
import type { AttachedRoute, CompiledRoute, RouteKind } from './routes/types';
import {
  CATCH_ALL,
  ListenerClaims,
  coveringHostnames,
  isolateHostnames,
  virtualHostsOf,
} from './routes/vhosts';
import type { ListenerRoutes } from './routes/vhosts';

const COMPILERS: Record<
  RouteKind,
  (view: StoreView, obj: KubeObject, policy: BackendPolicy) => CompiledRoute
> = {
  HTTPRoute: compileHTTPRoute,
  GRPCRoute: compileGRPCRoute,
  TLSRoute: compileTLSRoute,
};

/** Compiles the routes that name at least one parent Convoy owns, sorted by precedence. */
export function compileRoutes(
  view: StoreView,
  gateways: ResolvedGateway[],
  policy: BackendPolicy = {},
): CompiledRoute[] {
  const parents = indexParents(gateways);
  const out: CompiledRoute[] = [];
  for (const kind of Object.keys(COMPILERS) as RouteKind[]) {
    for (const obj of view.list(kind)) {
      if (obj.metadata.deletionTimestamp) continue;
      const refs = (obj.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
      const ns = objectNamespace(obj);
      if (!Array.isArray(refs) || !refs.some((r) => targetOf(parents, r, ns))) continue;
      // Memoized on the route object and what it read: unchanged routes keep their CompiledRoute.
      out.push(compileMemoized(COMPILERS[kind], view, obj, policy));
    }
  }
  return out.sort((a, b) => compareRouteIds(a.id, b.id));
}

/**
 * What a full build knew, kept so that a route edit can be applied without a full build
 * (updateRoutes). updateRoutes produces a new state; addListenerSet updates it in place once its
 * checks passed (the caller holds only the latest state, and a failure is a full build).
 */
export interface BuildState {
  gateways: ResolvedGateway[];
  parents: Map<string, ParentTarget>;
  /** Compiled routes that name a parent Convoy owns, by RouteIdentity.key. */
  routes: Map<string, CompiledRoute>;
  /** Routes attached per listener, and attachedRoutes counts (statuses not kept up to date). */
  attachment: AttachmentResult;
  /** Every status of the build, in the build's order. */
  statuses: ObjectStatus[];
  policy: BackendPolicy;
  /** Position in `statuses` by `kind/namespace/name` (route updates replace statuses in place). */
  statusIndex: Map<string, number>;
  /** The Gateway each listener (qualifiedName) belongs to. */
  listenerGateway: Map<string, ResolvedGateway>;
  /**
   * `namespace/name` of every parentRef of every route in the view, whatever its kind (a superset
   * of the ListenerSets routes name: addListenerSet falls back when a new set's key is in it).
   */
  namedParents: Set<string>;
}

function namedParentsOf(view: StoreView): Set<string> {
  const out = new Set<string>();
  for (const kind of Object.keys(COMPILERS) as RouteKind[]) {
    for (const obj of view.list(kind)) addNamedParents(out, obj);
  }
  return out;
}

function addNamedParents(out: Set<string>, route: KubeObject): void {
  const refs = (route.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
  if (!Array.isArray(refs)) return;
  const ns = objectNamespace(route);
  for (const r of refs) {
    if (r && typeof r === 'object' && typeof r.name === 'string') out.add(`${r.namespace || ns}/${r.name}`);
  }
}

function statusKey(s: ObjectStatus): string {
  return `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}`;
}

export function buildGateways(
  view: StoreView,
  opts: BuildOptions,
): GatewayBuildResult & { state: BuildState } {
  const gateways = resolveGateways(view, opts);
  const endpoints = opts.endpoints ?? {};
  const policy: BackendPolicy = {
    externalNameServices: opts.externalNameServices,
    endpoints,
    refusedEndpoints: collectEndpointRefusals(view.list('EndpointSlice'), endpoints),
  };
  const routes = compileRoutes(view, gateways, policy);
  const attachment = attachRoutes(view, opts, gateways, routes);
  for (const gw of gateways) {
    for (const l of allListeners(gw)) l.attachedRoutes = attachment.counts.get(l.qualifiedName) ?? 0;
  }
  const fleets = gateways.map((gw) => buildFleet(view, gw, attachment)).sort((a, b) => cmp(a.fleet, b.fleet));
  const routeStatuses = [...attachment.statuses, ...staleRouteStatuses(view, opts, attachment.statuses)].sort(
    compareStatuses,
  );
  const statuses: ObjectStatus[] = [
    ...gatewayClassStatuses(view, opts),
    ...gatewayAndListenerSetStatuses(gateways, view, opts),
    ...routeStatuses,
  ];
  const parents = indexParents(gateways);
  const listenerGateway = new Map<string, ResolvedGateway>();
  for (const t of parents.values())
    for (const l of t.listeners) listenerGateway.set(l.qualifiedName, t.gateway);
  const state: BuildState = {
    gateways,
    parents,
    routes: new Map(routes.map((r) => [r.id.key, r])),
    attachment,
    statuses,
    policy,
    statusIndex: new Map(statuses.map((s, i) => [statusKey(s), i])),
    listenerGateway,
    namedParents: namedParentsOf(view),
  };
  return { fleets, statuses, state };
}

/**
 * A fleet after route edits: `patched` when it is `previousFleet` with only the recomputed
 * route configurations replaced (every other node keeps its identity), else a fresh buildFleet.
 */
export interface RouteUpdatedFleet {
  model: FleetModel;
  patched: boolean;
}

/** A route object as the last build saw it, and as it is now. */
export interface RouteEdit {
  previous: KubeObject;
  current: KubeObject;
}

/**
 * Applies edits of existing HTTPRoutes/GRPCRoutes to the state of the last build, when they
 * cannot change anything but the routes' own statuses and the virtual hosts of the listeners
 * they are attached to: same kind, parentRefs, hostnames and creation time (hence the same
 * precedence), a valid rule before and after, and attachment (listeners and hostnames per
 * listener, computed by the same attachRoute as a full build) unchanged, so attachedRoutes and
 * every Gateway/ListenerSet status stay as they are. Returns the rebuilt FleetModels of the
 * Gateways those listeners belong to (assembled by the same buildFleet as a full build, whose
 * memo reuses every untouched virtual-host list), every status with the routes' ones replaced, and
 * the new state; or undefined when a full build is needed. Everything except the routes must be
 * as the state's build saw it.
 */
export function updateRoutes(
  view: StoreView,
  opts: BuildOptions,
  state: BuildState,
  edits: RouteEdit[],
  previousFleet: (fleet: string) => FleetModel | undefined = () => undefined,
): { fleets: RouteUpdatedFleet[]; statuses: ObjectStatus[]; state: BuildState } | undefined {
  const routes = new Map(state.routes);
  const attached = new Map(state.attachment.attached);
  const { statusIndex, listenerGateway } = state;
  const statuses = [...state.statuses];
  const affected = new Map<ResolvedGateway, Set<string>>();
  const replaced = new Map<CompiledRoute, CompiledRoute>();
  for (const { previous, current } of edits) {
    const kind = current.kind;
    if ((kind !== 'HTTPRoute' && kind !== 'GRPCRoute') || previous.kind !== kind) return undefined;
    if (previous.metadata.deletionTimestamp || current.metadata.deletionTimestamp) return undefined;
    if (previous.metadata.creationTimestamp !== current.metadata.creationTimestamp) return undefined;
    const before = previous.spec as { parentRefs?: unknown; hostnames?: unknown } | undefined;
    const after = current.spec as { parentRefs?: unknown; hostnames?: unknown } | undefined;
    if (!deepEqual(before?.parentRefs, after?.parentRefs) || !deepEqual(before?.hostnames, after?.hostnames))
      return undefined;
    const id = routeIdentity(kind, current);
    const old = routes.get(id.key);
    if (!old || old.object !== previous) return undefined;
    const next = compileMemoized(COMPILERS[kind], view, current, state.policy);
    if (!hasValidRules(old) || !hasValidRules(next)) return undefined;
    const was = attachRoute(view, opts, state.parents, old);
    const now = attachRoute(view, opts, state.parents, next);
    if (!sameAttachment(was.listeners, now.listeners) || !was.status || !now.status) return undefined;
    const at = statusIndex.get(`${kind}/${id.namespace}/${id.name}`);
    if (at === undefined) return undefined;
    for (const [qn, hostnames] of now.listeners) {
      const list = attached.get(qn);
      const gw = listenerGateway.get(qn);
      const i = list ? list.findIndex((a) => a.route === old) : -1;
      if (!list || !gw || i < 0) return undefined;
      const copy = list.slice();
      copy[i] = { route: next, hostnames };
      attached.set(qn, copy);
      const set = affected.get(gw) ?? new Set<string>();
      set.add(qn);
      affected.set(gw, set);
    }
    routes.set(id.key, next);
    replaced.set(old, next);
    statuses[at] = now.status;
  }
  const attachment: AttachmentResult = { ...state.attachment, attached };
  const fleets = [...affected].map(([gw, listeners]) => {
    const previous = previousFleet(gw.fleet);
    const patched = previous && patchFleet(view, gw, attachment, previous, listeners, replaced);
    return patched
      ? { model: patched, patched: true }
      : { model: buildFleet(view, gw, attachment), patched: false };
  });
  return { fleets, statuses, state: { ...state, routes, attachment, statuses } };
}

/**
 * Adds a ListenerSet created since the state's build (with new HTTPRoutes/GRPCRoutes whose
 * parentRefs all name it; new Secrets are read from the view) when that cannot change anything but
 * its own status, its Gateway's status (attachedListenerSets), the new routes' statuses and its
 * own filter chains: its Gateway is accepted and owned, it sorts strictly last in precedence (newer
 * creationTimestamp than every other set of that Gateway), no other route names it, its listeners
 * give no existing listener a new condition (resolveAddedListenerSet), and each of its ready
 * listeners is HTTPS with an exact hostname on a port the fleet already serves by SNI, where no
 * ready listener has no hostname or one that covers it (so no other chain's hostname isolation
 * changes). Returns the patched FleetModel (undefined when nothing is served differently), every
 * status (the new ones appended), and the new state; or undefined when a full build is needed.
 */
export function addListenerSet(
  view: StoreView,
  opts: BuildOptions,
  state: BuildState,
  ls: KubeObject,
  added: KubeObject[],
  previousFleet: (fleet: string) => FleetModel | undefined,
): { fleet: FleetModel | undefined; statuses: ObjectStatus[]; state: BuildState } | undefined {
  if (ls.kind !== 'ListenerSet' || ls.metadata.deletionTimestamp) return undefined;
  const parent = listenerSetParent(ls);
  if (!parent) return undefined;
  const at = state.gateways.findIndex((g) => g.fleet === `${parent.namespace}/${parent.name}`);
  if (at < 0) return undefined;
  const g = state.gateways[at];
  const lsNs = objectNamespace(ls);
  const setKey = parentKey('ListenerSet', lsNs, ls.metadata.name);
  if (state.parents.has(setKey)) return undefined;
  const created = Date.parse(ls.metadata.creationTimestamp ?? '');
  if (Number.isNaN(created)) return undefined;
  for (const s of g.listenerSets) {
    const t = Date.parse(s.object.metadata.creationTimestamp ?? '');
    if (Number.isNaN(t) || t >= created) return undefined;
  }
  const resolved = resolveAddedListenerSet(view, opts, g, ls);
  if (!resolved) return undefined;
  const { set, allowed } = resolved;
  // g as a full build would resolve it now; g itself is only updated once nothing can fail.
  const gw: ResolvedGateway = {
    ...g,
    listeners: allowed ? [...g.listeners, ...set.listeners] : g.listeners,
    listenerSets: [...g.listenerSets, set],
  };
  const target: ParentTarget = {
    kind: 'ListenerSet',
    namespace: lsNs,
    name: ls.metadata.name,
    gateway: g,
    listeners: set.listeners,
    accepted: set.accepted,
  };
  const only = new Map([[setKey, target]]);
  // The new routes name only the new set; no other route may name it.
  const addedKeys = new Set<string>();
  const compiled: CompiledRoute[] = [];
  for (const obj of added) {
    const kind = obj.kind;
    if ((kind !== 'HTTPRoute' && kind !== 'GRPCRoute') || obj.metadata.deletionTimestamp) return undefined;
    const refs = (obj.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
    const ns = objectNamespace(obj);
    if (!Array.isArray(refs) || refs.length === 0) return undefined;
    for (const r of refs) if (targetOf(only, r, ns) !== target) return undefined;
    const id = routeIdentity(kind, obj);
    if (state.routes.has(id.key) || addedKeys.has(`${kind}/${ns}/${obj.metadata.name}`)) return undefined;
    addedKeys.add(`${kind}/${ns}/${obj.metadata.name}`);
    compiled.push(compileMemoized(COMPILERS[kind], view, obj, state.policy));
  }
  // Routes other than the new ones have the parentRefs of the state's build (route edits that
  // change them are full builds), so namedParents tells whether one of them names the new set.
  if (state.namedParents.has(`${lsNs}/${ls.metadata.name}`)) return undefined;
  compiled.sort((a, b) => compareRouteIds(a.id, b.id));
  // Every parentRef of the new routes names the new set, so `only` gives what the full index does.
  const newStatuses: ObjectStatus[] = [];
  const byListener = new Map<string, AttachedRoute[]>();
  for (const route of compiled) {
    const one = attachRoute(view, opts, only, route);
    if (!one.status) return undefined;
    for (const [qn, hostnames] of one.listeners) {
      if (!set.listeners.some((l) => l.qualifiedName === qn)) return undefined;
      const list = byListener.get(qn) ?? [];
      list.push({ route, hostnames });
      byListener.set(qn, list);
    }
    newStatuses.push(one.status);
  }
  for (const l of set.listeners) l.attachedRoutes = byListener.get(l.qualifiedName)?.length ?? 0;

  // Statuses: the Gateway's is replaced, the set's and the routes' are appended.
  const gwStatus = gatewayStatus(gw, view, opts, acceptedGatewayClasses(view, opts));
  const gwAt = state.statusIndex.get(statusKey(gwStatus));
  if (gwAt === undefined) return undefined;
  const setStatus = listenerSetStatus(set, listenerSetVerdict(set, allowed, gw.accepted), opts);
  const appended = [setStatus, ...newStatuses];
  const appendedKeys = new Set(appended.map(statusKey));
  if (appendedKeys.size !== appended.length) return undefined;
  for (const k of appendedKeys) if (state.statusIndex.has(k)) return undefined;

  // The fleet: a chain per ready listener of the set.
  let fleet: FleetModel | undefined;
  const ready = set.listeners.filter((l) => l.ready);
  if (ready.length > 0) {
    const previous = previousFleet(gw.fleet);
    if (!previous) return undefined;
    const ports = previous.ports.slice();
    const memo = new VirtualHostMemo(view, gw.fleet, true);
    let secrets = previous.secrets;
    let clusters = previous.clusters;
    const clusterByName = new Map(clusters.map((c) => [c.name, c]));
    const newRefs: ClusterRef[] = [];
    for (const l of ready) {
      const host = l.hostname?.toLowerCase();
      if (l.protocol !== 'HTTPS' || l.tlsMode !== 'Terminate' || !host || host.startsWith('*'))
        return undefined;
      const i = ports.findIndex((p) => p.port === l.port);
      if (i < 0 || ports[i].http) return undefined;
      const covering = new Set(coveringHostnames(host));
      for (const x of gw.listeners) {
        if (!x.ready || x.port !== l.port || x === l) continue;
        if (!x.hostname || covering.has(x.hostname.toLowerCase())) return undefined;
      }
      const routes = byListener.get(l.qualifiedName) ?? [];
      // No ready sibling covers `host` (checked above), so for the route hostnames `host` itself
      // claims of all siblings (buildFleet's) and of `l` alone give the same isolation.
      if (routes.some((a) => a.hostnames.some((h) => h !== host))) return undefined;
      const group: ListenerRoutes[] = [{ listener: l, routes }];
      const entry = memo.virtualHosts(group, new ListenerClaims([l]), l.port, 'https');
      for (const c of l.certificates)
        if (!secrets.some((x) => x.name === c.name)) secrets = sortedWith(secrets, c);
      const chain: FilterChainModel = {
        name: l.qualifiedName,
        serverNames: [host],
        mode: 'Terminate',
        protocol: 'HTTPS',
        secretNames: l.certificates.map((c) => c.name),
        routeConfigName: `https-${l.port}/${host}`,
        virtualHosts: entry.virtualHosts,
      };
      if (ports[i].filterChains.some((c) => c.name === chain.name)) return undefined;
      ports[i] = { ...ports[i], filterChains: sortedWith(ports[i].filterChains, chain) };
      const names = new Set(clusterNamesOf(entry.virtualHosts));
      for (const route of entry.used) {
        for (const ref of route.clusters) {
          if (!names.has(ref.name)) continue;
          const existing = clusterByName.get(ref.name);
          if (!existing) newRefs.push(ref);
          // The same cluster is unchanged only when this route asks for the same protocol.
          else if (existing.protocol !== ref.protocol || existing.externalName !== ref.externalName)
            return undefined;
        }
      }
    }
    // A full build also takes the refs of every other used route naming a new cluster (a rule
    // shadowed elsewhere can name one without it being served): any differing one → full build.
    const firstRef = new Map<string, ClusterRef>();
    for (const ref of newRefs) if (!firstRef.has(ref.name)) firstRef.set(ref.name, ref);
    for (const route of firstRef.size > 0 ? state.routes.values() : []) {
      for (const c of route.clusters) {
        const ref = firstRef.get(c.name);
        if (ref && !deepEqual(ref, c)) return undefined;
      }
    }
    for (const c of buildClusters(view, newRefs, `${gw.fleet}#added`)) clusters = sortedWith(clusters, c);
    memo.commit();
    fleet = { ...previous, ports, clusters, secrets };
  }

  // Nothing can fail any more: update the state in place (the caller replaces its last state by it).
  g.listeners = gw.listeners;
  g.listenerSets = gw.listenerSets;
  state.parents.set(setKey, target);
  for (const [qn, list] of byListener) {
    state.attachment.attached.set(qn, list);
    state.attachment.counts.set(qn, list.length);
  }
  for (const route of compiled) state.routes.set(route.id.key, route);
  state.statuses[gwAt] = gwStatus;
  for (const s of appended) {
    state.statusIndex.set(statusKey(s), state.statuses.length);
    state.statuses.push(s);
  }
  for (const l of set.listeners) state.listenerGateway.set(l.qualifiedName, g);
  for (const obj of added) addNamedParents(state.namedParents, obj);
  return { fleet, statuses: state.statuses, state };
}

/** `sorted` (by name) with `item` inserted at its place: a new array. */
function sortedWith<T extends { name: string }>(sorted: readonly T[], item: T): T[] {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cmp(sorted[mid].name, item.name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return [...sorted.slice(0, lo), item, ...sorted.slice(lo)];
}

/**
 * `previous` (this Gateway's last FleetModel, as buildFleet or this function made it) with the
 * route configurations of the given listeners recomputed exactly as buildFleet computes them (same
 * groups, claims and virtual-host memo), every other port and chain kept as is. Only valid when
 * the listeners and attachment of every other listener are those `previous` was built from, and the
 * routes attached to `listeners` changed only as `replaced` (old → new CompiledRoute) says.
 * Clusters are kept when they provably cannot differ from buildFleet's: each recomputed route
 * configuration names the same clusters and uses the same routes (modulo `replaced`) as before, and
 * every replaced route has the same ClusterRefs; otherwise (or when anything is not where it
 * should be) returns undefined and the caller runs buildFleet.
 */
function patchFleet(
  view: StoreView,
  gw: ResolvedGateway,
  attachment: AttachmentResult,
  previous: FleetModel,
  listeners: Set<string>,
  replaced: Map<CompiledRoute, CompiledRoute>,
): FleetModel | undefined {
  if (!gw.accepted) return undefined;
  for (const [old, next] of replaced) if (!deepEqual(old.clusters, next.clusters)) return undefined;
  const byPort = new Map<number, ResolvedListener[]>();
  for (const l of gw.listeners) {
    if (!l.ready) continue;
    const list = byPort.get(l.port);
    if (list) list.push(l);
    else byPort.set(l.port, [l]);
  }
  const memo = new VirtualHostMemo(view, gw.fleet, true);
  const ports = previous.ports.slice();
  const portIndex = new Map(ports.map((p, i) => [p.port, i]));
  /** Recomputed route configurations: memo key → the virtual hosts `previous` serves there. */
  const recomputed = new Map<string, VirtualHostModel[]>();
  const claimsByPort = new Map<number, ListenerClaims>();
  const httpDone = new Set<number>();
  for (const qn of listeners) {
    const l = gw.listeners.find((x) => x.qualifiedName === qn);
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
        routes: routesOf(attachment, x, HTTP_KINDS),
      }));
      if (!port.http) return undefined;
      const entry = memo.virtualHosts(routes, new ListenerClaims(http), l.port, 'http');
      recomputed.set(VirtualHostMemo.key(routes, l.port, 'http'), port.http.virtualHosts);
      ports[at] = { ...port, http: { ...port.http, virtualHosts: entry.virtualHosts } };
    } else if (first.protocol === 'HTTPS' || first.protocol === 'TLS') {
      if (l.protocol !== 'HTTPS') continue;
      let claims = claimsByPort.get(l.port);
      if (!claims) {
        claims = new ListenerClaims(group.filter((x) => x.protocol === 'HTTPS' || x.protocol === 'TLS'));
        claimsByPort.set(l.port, claims);
      }
      const routes: ListenerRoutes[] = [{ listener: l, routes: routesOf(attachment, l, HTTP_KINDS) }];
      const entry = memo.virtualHosts(routes, claims, l.port, 'https');
      const i = port.filterChains.findIndex((c) => c.name === l.qualifiedName);
      const served = i < 0 ? undefined : port.filterChains[i].virtualHosts;
      if (!served || recomputed.has(VirtualHostMemo.key(routes, l.port, 'https'))) return undefined;
      recomputed.set(VirtualHostMemo.key(routes, l.port, 'https'), served);
      const filterChains = port.filterChains.slice();
      filterChains[i] = { ...filterChains[i], virtualHosts: entry.virtualHosts };
      ports[at] = { ...port, filterChains };
    }
  }
  for (const [key, served] of recomputed) {
    // The memo entry of the last build must be the one `previous` was assembled from.
    const before = memo.previousEntry(key);
    const after = memo.nextEntry(key);
    if (!before || !after || !deepEqual(before.virtualHosts, served)) return undefined;
    if (!sameSet(clusterNamesOf(before.virtualHosts), clusterNamesOf(after.virtualHosts))) return undefined;
    if (
      !sameSet(
        before.used.map((r) => replaced.get(r) ?? r),
        after.used,
      )
    )
      return undefined;
  }
  memo.commit();
  return { ...previous, ports };
}

function sameSet<T>(a: readonly T[], b: readonly T[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const x of sa) if (!sb.has(x)) return false;
  return true;
}

function sameAttachment(a: Map<string, string[]>, b: Map<string, string[]>): boolean {
  if (a.size !== b.size) return false;
  for (const [qn, hostnames] of a) {
    const other = b.get(qn);
    if (!other || !deepEqual(hostnames, other)) return false;
  }
  return true;
}

/**
 * Routes that no longer name any parent Convoy owns but still carry a status.parents entry with our
 * controllerName (their parentRef changed, or the Gateway went away) get an empty parents list,
 * so the status writer removes our stale entries and keeps other controllers' ones.
 */
function staleRouteStatuses(view: StoreView, opts: BuildOptions, current: ObjectStatus[]): ObjectStatus[] {
  const emitted = new Set(current.map((s) => `${s.kind}/${s.metadata.namespace}/${s.metadata.name}`));
  const out: ObjectStatus[] = [];
  for (const kind of Object.keys(COMPILERS) as RouteKind[]) {
    for (const obj of view.list(kind)) {
      if (obj.metadata.deletionTimestamp) continue;
      const ns = objectNamespace(obj);
      if (emitted.has(`${kind}/${ns}/${obj.metadata.name}`)) continue;
      const parents = (obj.status as { parents?: { controllerName?: string }[] } | undefined)?.parents;
      if (!Array.isArray(parents) || !parents.some((p) => p?.controllerName === opts.controllerName))
        continue;
      out.push({
        apiVersion: GATEWAY_API_VERSION,
        kind,
        metadata: { namespace: ns, name: obj.metadata.name, generation: obj.metadata.generation },
        status: { parents: [] },
      });
    }
  }
  return out;
}

function allListeners(gw: ResolvedGateway): ResolvedListener[] {
  const seen = new Set<ResolvedListener>(gw.listeners);
  for (const s of gw.listenerSets) for (const l of s.listeners) seen.add(l);
  return [...seen];
}

function compareStatuses(a: ObjectStatus, b: ObjectStatus): number {
  return (
    cmp(a.kind, b.kind) ||
    cmp(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    cmp(a.metadata.name, b.metadata.name)
  );
}

// ------------------------------------------------------------------------------------------------
// Fleet assembly

const HTTP_KINDS: ReadonlySet<string> = new Set(['HTTPRoute', 'GRPCRoute']);

function routesOf(
  attachment: AttachmentResult,
  l: ResolvedListener,
  kinds: ReadonlySet<string>,
): AttachedRoute[] {
  return (attachment.attached.get(l.qualifiedName) ?? []).filter((a) => kinds.has(a.route.id.kind));
}

/** Builds the FleetModel of one Gateway from its ready listeners and the routes attached to them. */
export function buildFleet(view: StoreView, gw: ResolvedGateway, attachment: AttachmentResult): FleetModel {
  const namespace = objectNamespace(gw.object);
  const name = gw.object.metadata.name;
  const ready = gw.accepted ? gw.listeners.filter((l) => l.ready) : [];
  const byPort = new Map<number, ResolvedListener[]>();
  for (const l of ready) {
    const list = byPort.get(l.port);
    if (list) list.push(l);
    else byPort.set(l.port, [l]);
  }
  const usedRoutes = new Set<CompiledRoute>();
  const secrets = new Map<string, SecretModel>();
  const ports: PortModel[] = [];
  const memo = new VirtualHostMemo(view, gw.fleet);
  for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
    const listeners = byPort.get(port)!;
    const first = listeners[0];
    if (first.protocol === 'HTTP') {
      const http = listeners.filter((l) => l.protocol === 'HTTP');
      const group: ListenerRoutes[] = http.map((l) => ({
        listener: l,
        routes: routesOf(attachment, l, HTTP_KINDS),
      }));
      const { virtualHosts, used } = memo.virtualHosts(group, new ListenerClaims(http), port, 'http');
      for (const r of used) usedRoutes.add(r);
      ports.push({
        name: `http-${port}`,
        port,
        http: { routeConfigName: `http-${port}`, virtualHosts },
        filterChains: [],
      });
    } else if (first.protocol === 'HTTPS' || first.protocol === 'TLS') {
      const sni = listeners.filter((l) => l.protocol === 'HTTPS' || l.protocol === 'TLS');
      const claims = new ListenerClaims(sni);
      const filterChains: FilterChainModel[] = [];
      for (const l of sni) {
        const secretNames = l.tlsMode === 'Passthrough' ? [] : l.certificates.map((c) => c.name);
        for (const c of l.tlsMode === 'Passthrough' ? [] : l.certificates) secrets.set(c.name, c);
        if (l.protocol === 'HTTPS') {
          const group: ListenerRoutes[] = [{ listener: l, routes: routesOf(attachment, l, HTTP_KINDS) }];
          const { virtualHosts, used } = memo.virtualHosts(group, claims, port, 'https');
          for (const r of used) usedRoutes.add(r);
          filterChains.push({
            name: l.qualifiedName,
            serverNames: l.hostname ? [l.hostname.toLowerCase()] : [],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames,
            routeConfigName: `https-${port}/${l.hostname ? l.hostname.toLowerCase() : CATCH_ALL}`,
            virtualHosts,
          });
        } else {
          filterChains.push(
            ...tlsChains(l, routesOf(attachment, l, TLS_KINDS), claims, secretNames, usedRoutes),
          );
        }
      }
      filterChains.sort((a, b) => cmp(a.name, b.name));
      ports.push({ name: `${first.protocol.toLowerCase()}-${port}`, port, filterChains });
    }
  }
  memo.commit();
  return {
    fleet: gw.fleet,
    gateway: { namespace, name },
    ports,
    clusters: buildClusters(view, referencedClusters(ports, usedRoutes), gw.fleet),
    secrets: [...secrets.values()].sort((a, b) => cmp(a.name, b.name)),
  };
}

const TLS_KINDS: ReadonlySet<string> = new Set(['TLSRoute']);

interface VirtualHostEntry {
  isolated: ListenerRoutes[];
  port: number;
  virtualHosts: VirtualHostModel[];
  /** The routes with at least one entry in virtualHosts. */
  used: CompiledRoute[];
}

/** Last build's virtual hosts per store view, fleet and route configuration (listener names). */
const virtualHostMemos = new WeakMap<StoreView, Map<string, Map<string, VirtualHostEntry>>>();

/**
 * Virtual hosts of one route configuration, memoized between builds. They are a pure function of
 * the isolated listener routes (listener, compiled routes, kept hostnames) and the port, so when
 * those are the same as last time (compiled routes are memoized, see routes/memo.ts) the previous
 * VirtualHostModel[] is returned and the unchanged chain keeps its identity downstream.
 */
class VirtualHostMemo {
  private readonly previous: Map<string, VirtualHostEntry>;
  private readonly next: Map<string, VirtualHostEntry>;

  /** `carry`: keep every previous entry (a partial rebuild that only recomputes some). */
  constructor(
    private readonly view: StoreView,
    private readonly fleet: string,
    carry = false,
  ) {
    this.previous = virtualHostMemos.get(view)?.get(fleet) ?? new Map();
    this.next = carry ? new Map(this.previous) : new Map();
  }

  static key(group: ListenerRoutes[], port: number, scheme: 'http' | 'https'): string {
    return `${scheme}:${port}:${group.map((g) => g.listener.qualifiedName).join('\n')}`;
  }

  /** The entry of the last build (before this one) for a route configuration. */
  previousEntry(key: string): VirtualHostEntry | undefined {
    return this.previous.get(key);
  }

  virtualHosts(
    group: ListenerRoutes[],
    claims: ListenerClaims,
    port: number,
    scheme: 'http' | 'https',
  ): VirtualHostEntry {
    const isolated = isolateHostnames(group, claims);
    const key = VirtualHostMemo.key(group, port, scheme);
    const prev = this.previous.get(key);
    let entry = prev && prev.port === port && sameIsolation(prev.isolated, isolated) ? prev : undefined;
    if (!entry) {
      const virtualHosts = withRedirectPorts(virtualHostsOf(isolated), port, scheme);
      entry = { isolated, port, virtualHosts, used: usedRoutesOf(virtualHosts, isolated) };
    }
    this.next.set(key, entry);
    return entry;
  }

  /** The entry computed (or carried) in this build for a route configuration. */
  nextEntry(key: string): VirtualHostEntry | undefined {
    return this.next.get(key);
  }

  commit(): void {
    let byFleet = virtualHostMemos.get(this.view);
    if (!byFleet) {
      byFleet = new Map();
      virtualHostMemos.set(this.view, byFleet);
    }
    byFleet.set(this.fleet, this.next);
  }
}

function sameIsolation(a: ListenerRoutes[], b: ListenerRoutes[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if ((x.listener.hostname ?? '') !== (y.listener.hostname ?? '') || x.routes.length !== y.routes.length)
      return false;
    for (let j = 0; j < x.routes.length; j++) {
      const r = x.routes[j];
      const q = y.routes[j];
      if (r.route !== q.route || r.hostnames.length !== q.hostnames.length) return false;
      for (let k = 0; k < r.hostnames.length; k++) if (r.hostnames[k] !== q.hostnames[k]) return false;
    }
  }
  return true;
}

/**
 * Filter chains of one TLS listener: the listener's own chain (its hostname, or catch-all), plus
 * one chain per other SNI hostname its TLSRoutes bring (e.g. `a.example.com` under a `*.example.com`
 * listener). When several routes claim one hostname the oldest wins. A chain without a route
 * rejects connections (empty tcpBackends), so an unclaimed SNI never falls through to another chain.
 */
function tlsChains(
  l: ResolvedListener,
  attached: AttachedRoute[],
  claims: ListenerClaims,
  secretNames: string[],
  used: Set<CompiledRoute>,
): FilterChainModel[] {
  const own = l.hostname ? l.hostname.toLowerCase() : CATCH_ALL;
  const [isolated] = isolateHostnames([{ listener: l, routes: attached }], claims);
  const byHost = new Map<string, CompiledRoute | undefined>([[own, undefined]]);
  // `attached` is in route precedence order (oldest first): keep the first claim per hostname.
  for (const a of isolated.routes) {
    for (const h of a.hostnames) if (!byHost.get(h)) byHost.set(h, a.route);
  }
  return [...byHost.keys()].sort().map((h) => {
    const route = byHost.get(h);
    if (route) used.add(route);
    return {
      name: h === own ? l.qualifiedName : `${l.qualifiedName}/${h}`,
      serverNames: h === CATCH_ALL ? [] : [h],
      mode: l.tlsMode ?? 'Terminate',
      protocol: 'TLS' as const,
      secretNames,
      tcpBackends: route?.tcpBackends ? route.tcpBackends.map((b) => ({ ...b })) : [],
    };
  });
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/**
 * Redirect port derivation (HTTPRequestRedirectFilter.port): the filter's port; else the well-known
 * port of the filter's scheme; else the listener's port. The port is left out of the Location when
 * it is the default for the resulting scheme, so `port` in the model is set only when it must show.
 */
export function redirectPort(
  filter: { scheme?: string; port?: number },
  listenerPort: number,
  listenerScheme: 'http' | 'https',
): number | undefined {
  const scheme = filter.scheme ?? listenerScheme;
  const port = filter.port ?? (filter.scheme ? DEFAULT_PORTS[filter.scheme] : listenerPort);
  return port === DEFAULT_PORTS[scheme] ? undefined : port;
}

function withRedirectPorts(
  vhosts: VirtualHostModel[],
  port: number,
  scheme: 'http' | 'https',
): VirtualHostModel[] {
  return vhosts.map((vh) => {
    if (!vh.routes.some((r) => r.action.kind === 'redirect')) return vh;
    return {
      ...vh,
      routes: vh.routes.map((r) => {
        if (r.action.kind !== 'redirect') return r;
        const derived = redirectPort(r.action, port, scheme);
        if (derived === r.action.port) return r;
        const { port: _drop, ...rest } = r.action;
        return { ...r, action: derived === undefined ? rest : { ...rest, port: derived } };
      }),
    };
  });
}

/** The routes of `group` with at least one entry in `vhosts`. */
function usedRoutesOf(vhosts: VirtualHostModel[], group: ListenerRoutes[]): CompiledRoute[] {
  const names = new Set<string>();
  for (const vh of vhosts) for (const r of vh.routes) names.add(r.name);
  const used = new Set<CompiledRoute>();
  for (const g of group) {
    for (const a of g.routes) {
      if (a.route.entries.some((e) => names.has(e.model.name))) used.add(a.route);
    }
  }
  return [...used];
}

/** Cluster names the routes of some virtual hosts forward or mirror to (memoized per array). */
const clusterNamesMemo = new WeakMap<VirtualHostModel[], string[]>();

function clusterNamesOf(vhosts: VirtualHostModel[]): string[] {
  let names = clusterNamesMemo.get(vhosts);
  if (!names) {
    const set = new Set<string>();
    for (const vh of vhosts) {
      for (const r of vh.routes) {
        const a = r.action;
        if (a.kind !== 'forward') continue;
        for (const b of a.backends) set.add(b.cluster);
        for (const m of a.mirrors ?? []) set.add(m.cluster);
      }
    }
    names = [...set];
    clusterNamesMemo.set(vhosts, names);
  }
  return names;
}

/** Cluster references (with protocol) for every cluster the fleet's routes and chains name. */
function referencedClusters(ports: PortModel[], used: Set<CompiledRoute>): ClusterRef[] {
  const names = new Set<string>();
  for (const p of ports) {
    if (p.http) for (const n of clusterNamesOf(p.http.virtualHosts)) names.add(n);
    for (const fc of p.filterChains) {
      if (fc.virtualHosts) for (const n of clusterNamesOf(fc.virtualHosts)) names.add(n);
      for (const b of fc.tcpBackends ?? []) names.add(b.cluster);
    }
  }
  const refs: ClusterRef[] = [];
  for (const route of used) for (const c of route.clusters) if (names.has(c.name)) refs.push(c);
  return refs;
}
