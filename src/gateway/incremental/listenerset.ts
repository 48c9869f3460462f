/**
 * Adds a ListenerSet created since the last build (with new routes that name only it) to the state
 * of that build: the ListenerSet fast path (docs/architecture.md §8).
 *
 * It applies only when the set cannot change anything but its own status, its Gateway's, the new
 * routes' and its own filter chains.
 */
import type { FilterChainModel, FleetModel } from '../../model/fleet';
import { deepEqual } from '../../util/deep-equal';
import type { ObjectStatus } from '../../status/types';
import type { KubeObject } from '../../store/objects';
import { objectNamespace } from '../../store/objects';
import type { ParentReference } from '../api';
import { listenerSetSpec } from '../api';
import type { ClusterRef } from '../backends';
import { buildClusters } from '../backends';
import { ConditionType } from '../../status/conditions';
import type { ConflictInput } from '../conflicts';
import { PortClaims } from '../conflicts';
import type { BuildMemo } from '../build-memo';
import { gatewayStatus } from '../gateway-status';
import {
  markOverlappingTLS,
  notAllowedListener,
  tlsModeOf,
  validateListener,
  type CertificateState,
} from '../listener-validation';
import {
  listenerSetAllowed,
  listenerSetParent,
  listenerSetStatus,
  listenerSetVerdict,
} from '../listenersets';
import type {
  BuildOptions,
  ListenerOwner,
  ResolvedGateway,
  ResolvedListener,
  ResolvedListenerSet,
  StoreView,
} from '../resolved';
import type { ParentTarget } from '../routes/attach';
import { attachRoute, targetOf } from '../routes/attach';
import { ROUTE_COMPILERS } from '../routes/compilers';
import { compareRouteIds, routeIdentity } from '../routes/identity';
import type { AttachedRoute, CompiledRoute } from '../routes/types';
import { ROUTE_KINDS } from '../routes/types';
import { ListenerClaims, coveringHostnames } from '../routes/vhosts';
import type { ListenerRoutes } from '../routes/vhosts';
import { VirtualHostMemo } from '../virtual-hosts';
import { resolveFrontendValidation } from '../frontend-validation';
import { clientValidationOf } from '../fleet';
import { misdirectedHosts } from '../misdirected';
import type { SetPlace } from './listenerset-removed';
import type { BuildState } from './state';
import { parentNamesOf } from './state';
import { compareStrings } from '../../util/compare';
import { fleetName } from '../../model/names';
import { namespacedName, objectKey } from '../../store/objects';
import { statusKey } from '../../status/types';
import { rememberAppended, sortsLast } from './precedence';
import { mayOverlap, portSummary, rememberAppendedListeners } from './port-summary';

/**
 * Adds a ListenerSet created since the state's build to that state and returns the patched fleet,
 * every status, the statuses it changed and the new state, or undefined when a full build is needed.
 *
 * The set may come with new HTTPRoutes/GRPCRoutes whose parentRefs all name it (and routes created
 * earlier that name only it: withWaitingRoutes); new Secrets are read from the view. It is added only when that cannot change anything but its own status, its
 * Gateway's status (attachedListenerSets), the new routes' statuses and its own filter chains: its
 * Gateway is accepted and owned, it sorts strictly last in precedence (compareListenerSets: newer
 * creationTimestamp than every other set of that Gateway, or as new and after it by namespace/name), no route the state attached names it, its listeners give no existing
 * listener a new condition (resolveAddedListenerSet), and each of its ready listeners is HTTPS with
 * an exact hostname on a port the fleet already serves by SNI, where no ready listener has no
 * hostname or one that covers it (so no other chain's hostname isolation changes). Returns the
 * patched FleetModel (undefined when nothing is served differently), every status (the new ones
 * appended), and the new state (`state` itself is left as it is); or undefined when a full build is
 * needed. `memo` must be the one the state's build used.
 */
export function addListenerSet(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  ls: KubeObject,
  added: KubeObject[],
  previousFleet: (fleet: string) => FleetModel | undefined,
  place?: SetPlace,
):
  | { fleet: FleetModel | undefined; statuses: ObjectStatus[]; changed: ObjectStatus[]; state: BuildState }
  | undefined {
  if (ls.kind !== 'ListenerSet' || ls.metadata.deletionTimestamp) return undefined;
  // A port range claims ports across listeners (port-ranges.ts): only a full build decides them.
  if (view.list('ListenerPortRange').length > 0) return undefined;
  const parent = listenerSetParent(ls);
  if (!parent) return undefined;
  const at = state.gateways.findIndex((g) => g.fleet === fleetName(parent.namespace, parent.name));
  if (at < 0) return undefined;
  const g = state.gateways[at];
  const lsNs = objectNamespace(ls);
  const setKey = objectKey('ListenerSet', lsNs, ls.metadata.name);
  if (state.parents.has(setKey)) return undefined;
  if (Number.isNaN(Date.parse(ls.metadata.creationTimestamp ?? ''))) return undefined;
  // Last in precedence: a set created in the same second sorts by namespace/name (listenersets.ts).
  if (!place && !sortsLast(g.listenerSets, ls)) return undefined;
  const set = resolveAddedListenerSet(view, opts, g, ls, memo);
  if (!set) return undefined;
  // Back at its place (listenerset-replaced.ts): it claims what it claimed, so no listener's
  // conflict changes, as long as none of its own conflicts with any claim held now.
  const conflicted = (l: ResolvedListener) =>
    l.conditions.some((c) => c.type === ConditionType.Conflicted && c.status === 'True');
  if (place && set.allowed && (set.listeners.some(conflicted) || place.listenerAt < 0)) return undefined;
  // g as a full build would resolve it now (g itself is left as it is).
  const gw: ResolvedGateway = place
    ? {
        ...g,
        listeners: set.allowed ? g.listeners.toSpliced(place.listenerAt, 0, ...set.listeners) : g.listeners,
        listenerSets: g.listenerSets.toSpliced(place.setAt, 0, set),
      }
    : {
        ...g,
        listeners: set.allowed ? [...g.listeners, ...set.listeners] : g.listeners,
        listenerSets: [...g.listenerSets, set],
      };
  if (!place) {
    rememberAppended(g.listenerSets, gw.listenerSets);
    if (set.allowed) rememberAppendedListeners(g.listeners, gw.listeners, set.listeners);
  }
  const target: ParentTarget = {
    kind: 'ListenerSet',
    namespace: lsNs,
    name: ls.metadata.name,
    fleet: gw.fleet,
    listeners: set.listeners,
    accepted: set.accepted,
  };
  const only = new Map([[setKey, target]]);
  // Routes created before the set that name it wait for it (they named no parent of ours, so the
  // state has neither their compiled form nor a status): they attach now, like the new ones.
  const routes = withWaitingRoutes(view, state, namespacedName(lsNs, ls.metadata.name), added);
  if (!routes) return undefined;
  // The new routes name only the new set; no other route may name it.
  const addedKeys = new Set<string>();
  const compiled: CompiledRoute[] = [];
  for (const obj of routes) {
    const kind = obj.kind;
    if ((kind !== 'HTTPRoute' && kind !== 'GRPCRoute') || obj.metadata.deletionTimestamp) return undefined;
    const refs = (obj.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
    const ns = objectNamespace(obj);
    if (!Array.isArray(refs) || refs.length === 0) return undefined;
    for (const r of refs) if (targetOf(only, r, ns) !== target) return undefined;
    const id = routeIdentity(kind, obj);
    const key = objectKey(kind, ns, obj.metadata.name);
    if (state.routes.has(id.key) || addedKeys.has(key)) return undefined;
    addedKeys.add(key);
    compiled.push(memo.routes.compile(ROUTE_COMPILERS[kind], view, obj, state.policy));
  }
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
  const gwStatus = gatewayStatus(gw, opts);
  const gwAt = state.statusIndex.get(statusKey(gwStatus));
  if (gwAt === undefined) return undefined;
  const setStatus = listenerSetStatus(set, listenerSetVerdict(set, gw.accepted), opts);
  const built = [setStatus, ...newStatuses];
  if (new Set(built.map(statusKey)).size !== built.length) return undefined;
  // A waiting route may carry the empty status of a route naming no parent of ours (build.ts
  // staleRouteStatus, e.g. its set was just removed to be replaced): its real one replaces it.
  const appended: ObjectStatus[] = [];
  const replaced: [number, ObjectStatus][] = [];
  for (const st of built) {
    const at = state.statusIndex.get(statusKey(st));
    if (at === undefined) appended.push(st);
    else if (st !== setStatus && !state.routes.has(statusKey(st))) replaced.push([at, st]);
    else return undefined;
  }

  // The fleet: a chain per ready listener of the set.
  let fleet: FleetModel | undefined;
  const ready = set.listeners.filter((l) => l.ready);
  if (ready.length > 0) {
    const previous = previousFleet(gw.fleet);
    if (!previous) return undefined;
    const ports = previous.ports.slice();
    const vhosts = new VirtualHostMemo(memo.virtualHosts, gw.fleet, true);
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
      const entry = vhosts.virtualHosts(group, new ListenerClaims([l]), l.port, 'https');
      for (const c of l.certificates)
        if (secrets[insertionPoint(secrets, c.name)]?.name !== c.name) secrets = sortedWith(secrets, c);
      const chain: FilterChainModel = {
        name: l.qualifiedName,
        serverNames: [host],
        mode: 'Terminate',
        protocol: 'HTTPS',
        secretNames: l.certificates.map((c) => c.name),
        routeConfigName: `https-${l.port}/${host}`,
        virtualHosts: entry.virtualHosts,
        // An exact hostname: everything else is misdirected, whatever its siblings.
        misdirectedHosts: misdirectedHosts(l, []),
      };
      // The port's CA bundle is already served (by the chains of the Gateway's own listeners on
      // that port) or the full build adds it.
      const bundle = l.clientValidation?.bundle;
      if (bundle) {
        if (
          !deepEqual(
            previous.caBundles?.find((b) => b.name === bundle.name),
            bundle,
          )
        )
          return undefined;
        Object.assign(chain, clientValidationOf(l, new Map()));
      }
      if (ports[i].filterChains.some((c) => c.name === chain.name)) return undefined;
      ports[i] = { ...ports[i], filterChains: sortedWith(ports[i].filterChains, chain) };
      const names = new Set(memo.virtualHosts.clusterNamesOf(entry.virtualHosts));
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
    for (const c of buildClusters(view, newRefs, memo.clusters, `${gw.fleet}#added`))
      clusters = sortedWith(clusters, c);
    vhosts.commit();
    fleet = { ...previous, ports, clusters, secrets };
  }

  // The new state: what changed, over indexes shared with `state`.
  const gateways = state.gateways.slice();
  gateways[at] = gw;
  const statuses = [...state.statuses, ...appended];
  statuses[gwAt] = gwStatus;
  for (const [at, st] of replaced) statuses[at] = st;
  const next: BuildState = {
    ...state,
    gateways,
    parents: state.parents.with([[setKey, target]]),
    routes: state.routes.with(compiled.map((route) => [route.id.key, route])),
    attached: state.attached.with(byListener),
    statuses,
    statusIndex: state.statusIndex.with(appended.map((s, i) => [statusKey(s), state.statuses.length + i])),
    listenerFleet: state.listenerFleet.with(set.listeners.map((l) => [l.qualifiedName, gw.fleet])),
    namedParents: state.namedParents.with(routes.flatMap(parentNamesOf)),
  };
  // The known statuses first, the appended ones are new (StatusSink.publishChanges).
  return { fleet, statuses, changed: [gwStatus, ...replaced.map(([, st]) => st), ...appended], state: next };
}

/**
 * Returns `added` with every route of the view that names the set `setName` (`namespace/name`) and
 * is not among them, or undefined when such a route is of a kind other than HTTPRoute/GRPCRoute.
 *
 * Routes other than the new ones have the parentRefs of the state's build (route edits that change
 * them are full builds) or were added by a fast path that recorded them, so the state's
 * namedParents tells whether any names the set; only then is the view searched. The caller checks
 * the routes found as new ones: a route the state attached elsewhere makes it decline.
 */
function withWaitingRoutes(
  view: StoreView,
  state: BuildState,
  setName: string,
  added: KubeObject[],
): KubeObject[] | undefined {
  if (!state.namedParents.has(setName)) return added;
  const keys = new Set(added.map((o) => objectKey(o.kind, objectNamespace(o), o.metadata.name)));
  const out = [...added];
  for (const kind of ROUTE_KINDS) {
    for (const obj of view.list(kind)) {
      if (!parentNamesOf(obj).includes(setName)) continue;
      if (kind !== 'HTTPRoute' && kind !== 'GRPCRoute') return undefined;
      if (!keys.has(objectKey(kind, objectNamespace(obj), obj.metadata.name))) out.push(obj);
    }
  }
  return out;
}

/** Returns a new array: `sorted` (by name) with `item` inserted at its place. */
function sortedWith<T extends { name: string }>(sorted: readonly T[], item: T): T[] {
  return sorted.toSpliced(insertionPoint(sorted, item.name), 0, item);
}

/**
 * The index of the first item of `sorted` (by name, compareStrings) whose name is not below `name`:
 * where an item of that name is, or would go. A binary search, so a check or insertion among the
 * 5,000 secrets of a large fleet costs 13 comparisons instead of a scan.
 */
function insertionPoint(sorted: readonly { name: string }[], name: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareStrings(sorted[mid].name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Resolves `ls` as resolveGateway would and returns its ResolvedListenerSet (including whether `g`
 * admits it), or undefined when a full build is needed.
 *
 * `ls` sorts last in precedence among the sets of the accepted Gateway `g` (g as resolved without
 * it). Its listeners are checked against the claims detectConflicts would hold when it reaches them
 * (every listener of the Gateway's own, and the non-conflicted ones of admitted sets, which are
 * exactly g.listeners), so existing outcomes cannot change. Returns undefined when the Gateway is
 * not accepted or when adding the set would give an existing listener an OverlappingTLSConfig
 * condition it did not have: a full build is needed then.
 */
export function resolveAddedListenerSet(
  view: StoreView,
  opts: BuildOptions,
  g: ResolvedGateway,
  ls: KubeObject,
  certificates?: CertificateState,
): ResolvedListenerSet | undefined {
  if (!g.accepted) return undefined;
  const lsNs = objectNamespace(ls);
  const owner: ListenerOwner = { kind: 'ListenerSet', namespace: lsNs, name: ls.metadata.name };
  const specs = listenerSetSpec(ls)?.listeners ?? [];
  const gen = ls.metadata.generation;
  const allowed = listenerSetAllowed(view, g.object, lsNs);
  if (!allowed) {
    const listeners = specs.map((spec) => notAllowedListener(opts, owner, spec, gen));
    return { object: ls, allowed, accepted: false, listeners };
  }
  const ports = new Set(specs.map((s) => s.port));
  // The claims of each port's listeners (remembered per listener list, port-summary.ts), with a
  // layer for this set's own: the remembered claims stay as they are.
  const claims = new Map<number, PortClaims>();
  for (const port of ports) claims.set(port, PortClaims.over(portSummary(g.listeners, port).claims));
  const claim = (c: ConflictInput) => claims.get(c.port)!.add(c);
  const listeners: ResolvedListener[] = [];
  const validation = resolveFrontendValidation(view, g.object);
  for (const spec of specs) {
    const input: ConflictInput = {
      port: spec.port,
      protocol: spec.protocol,
      hostname: spec.hostname,
      tlsMode: tlsModeOf(spec),
    };
    const conflict = claims.get(spec.port)?.conflict(input);
    if (!conflict) claim(input);
    const frontend = validation.forPort(spec.port);
    listeners.push(
      validateListener(view, opts, { owner, spec, generation: gen, conflict, frontend }, certificates),
    );
  }
  // Overlap marking over copies: an existing listener newly marked would change its status.
  // markOverlappingTLS marks nothing on a port whose accepted HTTPS listeners all have a hostname
  // and none a wildcard one: skip it then (the common case, and 5,000 copies otherwise).
  const existingMayOverlap = [...ports].some((port) => portSummary(g.listeners, port).mayOverlap);
  if (!existingMayOverlap && !listeners.some(mayOverlap)) {
    return { object: ls, allowed, accepted: listeners.some((l) => l.ready), listeners };
  }
  const existing = g.listeners.filter((l) => ports.has(l.port));
  const copies = existing.map((l) => ({ ...l }));
  markOverlappingTLS([...copies, ...listeners], opts);
  for (let i = 0; i < copies.length; i++) {
    if (copies[i].conditions === existing[i].conditions) continue;
    if (!existing[i].conditions.some((c) => c.type === ConditionType.OverlappingTLSConfig)) return undefined;
  }
  return { object: ls, allowed, accepted: listeners.some((l) => l.ready), listeners };
}
