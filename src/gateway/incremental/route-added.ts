/**
 * Adds HTTPRoutes/GRPCRoutes created since the last build to the state of that build: the
 * route-creation fast path (docs/architecture.md §8).
 *
 * A new route changes only its own status, the attachedRoutes of the listeners it attaches to
 * (hence the status of their Gateway or ListenerSet), the route configurations of those listeners
 * and, for backends no served route named yet, the fleet's clusters.
 */
import type { ClusterModel, FleetModel } from '../../model/fleet';
import { deepEqual } from '../../util/deep-equal';
import type { ObjectStatus } from '../../status/types';
import { statusKey } from '../../status/types';
import type { KubeObject } from '../../store/objects';
import { objectKey, objectNamespace } from '../../store/objects';
import type { ParentReference } from '../api';
import type { ClusterRef } from '../backends';
import { buildClusters, protocolKept } from '../backends';
import type { BuildMemo } from '../build-memo';
import { gatewayStatus } from '../gateway-status';
import { listenerSetStatus, listenerSetVerdict } from '../listenersets';
import type { BuildOptions, ResolvedGateway, ResolvedListener, StoreView } from '../resolved';
import type { ParentTarget } from '../routes/attach';
import { attachRoute, targetOf } from '../routes/attach';
import { ROUTE_COMPILERS } from '../routes/compilers';
import { compareRouteIds, routeIdentity } from '../routes/identity';
import type { AttachedRoute, CompiledRoute } from '../routes/types';
import { compareStrings } from '../../util/compare';
import type { BuildState } from './state';
import { parentNamesOf } from './state';
import type { RecomputedConfig } from './route-configs';
import { recomputeRouteConfigs } from './route-configs';

/** The result of addRoutes: the patched fleets, every status, those it changed, and the new state. */
export interface RoutesAdded {
  /** The FleetModels that serve something new (each `previousFleet`'s with nodes replaced). */
  fleets: FleetModel[];
  /** Every fleet (Gateway `namespace/name`) a new route attaches to, served or not. */
  touched: string[];
  statuses: ObjectStatus[];
  /** The statuses it changed: the new routes' and their Gateways' and ListenerSets'. */
  changed: ObjectStatus[];
  state: BuildState;
}

/**
 * Adds HTTPRoutes/GRPCRoutes created since the state's build to that state and returns the patched
 * fleets, every status and the new state, or undefined when a full build is needed.
 *
 * A route's attachment and status depend on its parents alone, never on other routes (attachRoute),
 * so each new route is attached with the state's parent index exactly as a full build attaches it,
 * and inserted in precedence order into the attachment lists of its listeners. What else a full
 * build computes differently is then: the attachedRoutes of those listeners (their copies carry the
 * new counts, and the statuses of their Gateways and ListenerSets are recomputed), the route
 * configurations of the ready ones (recomputeRouteConfigs, as buildFleet computes them), and the
 * fleet's clusters, which may only gain the new backends (checked: every recomputed configuration
 * keeps the clusters and routes it used, and a backend a fleet already has a cluster for is named
 * with the same protocol). A route naming no parent Convoy owns changes nothing but the parents the
 * state knows are named. Returns undefined when a route is not a new HTTPRoute/GRPCRoute, or any
 * check fails. Everything but the new routes must be as the state's build saw it (and Secrets no
 * listener refers to), `memo` the one that build used, and `previousFleet` give each fleet's last
 * FleetModel; `state` itself is left as it is.
 */
export function addRoutes(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  added: KubeObject[],
  previousFleet: (fleet: string) => FleetModel | undefined,
): RoutesAdded | undefined {
  const compiled: CompiledRoute[] = [];
  const routeStatuses: ObjectStatus[] = [];
  /** Listener qualifiedName → the new routes attached to it, with their hostnames there. */
  const gained = new Map<string, AttachedRoute[]>();
  const keys = new Set<string>();
  for (const obj of added) {
    const kind = obj.kind;
    if ((kind !== 'HTTPRoute' && kind !== 'GRPCRoute') || obj.metadata.deletionTimestamp) return undefined;
    const id = routeIdentity(kind, obj);
    if (keys.has(id.key) || state.routes.has(id.key) || state.statusIndex.has(id.key)) return undefined;
    keys.add(id.key);
    const refs = (obj.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
    const ns = objectNamespace(obj);
    if (!Array.isArray(refs) || !refs.some((r) => targetOf(state.parents, r, ns))) {
      // A full build neither compiles it nor writes its status, unless it carries one of ours.
      if (carriesStatusOf(obj, opts.controllerName)) return undefined;
      continue;
    }
    const route = memo.routes.compile(ROUTE_COMPILERS[kind], view, obj, state.policy);
    const one = attachRoute(view, opts, state.parents, route);
    if (!one.status) return undefined;
    compiled.push(route);
    routeStatuses.push(one.status);
    for (const [qn, hostnames] of one.listeners) {
      const list = gained.get(qn) ?? [];
      list.push({ route, hostnames });
      gained.set(qn, list);
    }
  }
  // Attachment lists are in route precedence order (attachRoutes walks the sorted routes).
  const lists = new Map<string, AttachedRoute[]>();
  /** Fleet → the listeners (qualifiedName) whose attachment changed. */
  const byFleet = new Map<string, Set<string>>();
  for (const [qn, routes] of gained) {
    const fleet = state.listenerFleet.get(qn);
    if (!fleet) return undefined;
    lists.set(qn, mergeByPrecedence(state.attached.get(qn) ?? [], routes));
    const set = byFleet.get(fleet) ?? new Set<string>();
    set.add(qn);
    byFleet.set(fleet, set);
  }
  const attached = state.attached.with(lists);
  const gateways = state.gateways.slice();
  const statuses = [...state.statuses];
  const parents: [string, ParentTarget][] = [];
  const fleets: FleetModel[] = [];
  /** The owners' recomputed statuses (the new routes' come after them). */
  const ownerChanged: ObjectStatus[] = [];
  for (const [fleet, qns] of byFleet) {
    const owned = recountOwners(state, gateways, parents, fleet, lists, opts);
    if (!owned) return undefined;
    const gw = owned.gateway;
    for (const s of owned.statuses) {
      const i = state.statusIndex.get(statusKey(s));
      if (i === undefined) return undefined;
      statuses[i] = s;
      ownerChanged.push(s);
    }
    const served = [...qns].filter((qn) => gw.listeners.some((l) => l.ready && l.qualifiedName === qn));
    if (!gw.accepted || served.length === 0) continue; // Nothing served differently.
    const previous = previousFleet(fleet);
    if (!previous) return undefined;
    const model = patchFleet(view, memo, state, gw, attached, previous, new Set(served), compiled);
    if (!model) return undefined;
    fleets.push(model);
  }
  const appendedKeys = routeStatuses.map(statusKey);
  const next: BuildState = {
    ...state,
    gateways,
    parents: state.parents.with(parents),
    routes: state.routes.with(compiled.map((route) => [route.id.key, route])),
    attached,
    statuses: [...statuses, ...routeStatuses],
    statusIndex: state.statusIndex.with(appendedKeys.map((k, i) => [k, statuses.length + i])),
    namedParents: state.namedParents.with(added.flatMap(parentNamesOf)),
  };
  return {
    fleets,
    touched: [...byFleet.keys()],
    statuses: next.statuses as ObjectStatus[],
    changed: [...ownerChanged, ...routeStatuses],
    state: next,
  };
}

/** Returns whether a route's status holds an entry written by `controllerName` (a stale one to clear). */
export function carriesStatusOf(route: KubeObject, controllerName: string): boolean {
  const parents = (route.status as { parents?: { controllerName?: string }[] } | undefined)?.parents;
  return Array.isArray(parents) && parents.some((p) => p?.controllerName === controllerName);
}

/** Returns `list` (in route precedence order) with `routes` inserted at their places. */
function mergeByPrecedence(list: readonly AttachedRoute[], routes: AttachedRoute[]): AttachedRoute[] {
  const out = list.slice();
  for (const a of routes) {
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareRouteIds(out[mid].route.id, a.route.id) < 0) lo = mid + 1;
      else hi = mid;
    }
    out.splice(lo, 0, a);
  }
  return out;
}

/**
 * Recounts the routes attached to `fleet`'s Gateway after the attachment `lists` changed, puts the
 * recounted Gateway in its place in `gateways` and each owner's parent target (with the recounted
 * listeners) in `parents`; returns the Gateway and its owners' new statuses. Shared by the route
 * fast paths that add and remove routes, so both recount alike (docs/architecture.md §8).
 * Undefined when the fleet's Gateway or an owner's target is unknown: the caller gives way to a
 * full build.
 */
export function recountOwners(
  state: BuildState,
  gateways: ResolvedGateway[],
  parents: [string, ParentTarget][],
  fleet: string,
  lists: ReadonlyMap<string, AttachedRoute[]>,
  opts: BuildOptions,
): { gateway: ResolvedGateway; statuses: ObjectStatus[] } | undefined {
  const at = gateways.findIndex((g) => g.fleet === fleet);
  if (at < 0) return undefined;
  const counted = recount(gateways[at], lists, (qn) => state.attached.get(qn)?.length ?? 0);
  if (!counted) return undefined;
  gateways[at] = counted.gateway;
  for (const owner of counted.owners) {
    const target = state.parents.get(owner);
    if (!target) return undefined;
    parents.push([owner, { ...target, listeners: target.listeners.map(counted.copy) }]);
  }
  return { gateway: counted.gateway, statuses: ownerStatuses(counted.gateway, counted.owners, opts) };
}

/**
 * Returns `g` with a copy, carrying the new attachedRoutes, of each listener whose attachment
 * `lists` (qualifiedName → new attachment list) changed; the parent keys (objectKey) of the owners
 * of those listeners; and the old → copy mapping. Undefined when a listener's count is not
 * `before` (the length of its old list, as every build leaves it), so the new one could be wrong.
 */
export function recount(
  g: ResolvedGateway,
  lists: ReadonlyMap<string, AttachedRoute[]>,
  before: (qualifiedName: string) => number,
):
  | { gateway: ResolvedGateway; owners: string[]; copy: (l: ResolvedListener) => ResolvedListener }
  | undefined {
  const copies = new Map<ResolvedListener, ResolvedListener>();
  const owners = new Set<string>();
  const all = [...g.listeners, ...g.listenerSets.flatMap((s) => s.listeners)];
  for (const l of all) {
    const list = lists.get(l.qualifiedName);
    if (!list || copies.has(l)) continue;
    if (l.attachedRoutes !== before(l.qualifiedName)) return undefined;
    copies.set(l, { ...l, attachedRoutes: list.length });
    owners.add(objectKey(l.owner.kind, l.owner.namespace, l.owner.name));
  }
  const copy = (l: ResolvedListener) => copies.get(l) ?? l;
  const gateway: ResolvedGateway = {
    ...g,
    listeners: g.listeners.map(copy),
    listenerSets: g.listenerSets.map((s) =>
      s.listeners.some((l) => copies.has(l)) ? { ...s, listeners: s.listeners.map(copy) } : s,
    ),
  };
  return { gateway, owners: [...owners], copy };
}

/** Returns the statuses of the Gateway and ListenerSets among `owners` (objectKeys), as now resolved. */
export function ownerStatuses(
  gw: ResolvedGateway,
  owners: readonly string[],
  opts: BuildOptions,
): ObjectStatus[] {
  const wanted = new Set(owners);
  const out: ObjectStatus[] = [];
  const gwKey = objectKey('Gateway', objectNamespace(gw.object), gw.object.metadata.name);
  if (wanted.has(gwKey)) out.push(gatewayStatus(gw, opts));
  for (const set of gw.listenerSets) {
    const key = objectKey(set.object.kind, objectNamespace(set.object), set.object.metadata.name);
    if (wanted.has(key)) out.push(listenerSetStatus(set, listenerSetVerdict(set, gw.accepted), opts));
  }
  return out;
}

/**
 * Returns `previous` with the route configurations of `listeners` recomputed and the clusters of
 * the new routes' new backends added, or undefined when buildFleet must run instead.
 *
 * buildFleet's clusters are one per cluster name its virtual hosts use, from the used routes'
 * references. So they are those of `previous` plus the new names when every recomputed
 * configuration still uses every cluster and route it used (a new route only adds entries), every
 * reference a new route makes to a cluster `previous` has leaves it as it is (protocolKept), and every
 * reference to a new name, by a new route or any route of the state, is the same.
 */
function patchFleet(
  view: StoreView,
  memo: BuildMemo,
  state: BuildState,
  gw: ResolvedGateway,
  attached: ReadonlyMap<string, AttachedRoute[]>,
  previous: FleetModel,
  listeners: ReadonlySet<string>,
  added: readonly CompiledRoute[],
): FleetModel | undefined {
  const recomputed = recomputeRouteConfigs(memo, gw, attached, previous, listeners);
  if (!recomputed) return undefined;
  const existing = new Map(previous.clusters.map((c) => [c.name, c]));
  const servedNames = new Set<string>();
  const used = new Set<CompiledRoute>();
  for (const config of recomputed.configs) {
    if (!keepsWhatItUsed(memo, config)) return undefined;
    for (const n of memo.virtualHosts.clusterNamesOf(config.after.virtualHosts)) servedNames.add(n);
    for (const r of config.after.used) used.add(r);
  }
  const newRefs = new Map<string, ClusterRef>();
  for (const route of added) {
    if (!used.has(route)) continue;
    for (const ref of route.clusters) {
      const cluster = existing.get(ref.name);
      if (cluster) {
        if (!protocolKept(cluster.protocol, ref.protocol) || cluster.externalName !== ref.externalName)
          return undefined;
      } else if (servedNames.has(ref.name)) {
        const other = newRefs.get(ref.name);
        if (other && !deepEqual(other, ref)) return undefined;
        newRefs.set(ref.name, ref);
      }
    }
  }
  let clusters: ClusterModel[] = previous.clusters;
  if (newRefs.size > 0) {
    // A route of the state may name a new cluster without serving it (buildFleet would take its
    // reference too, when it is used): any reference other than the new routes' → full build.
    for (const route of state.routes.values()) {
      for (const c of route.clusters) {
        const ref = newRefs.get(c.name);
        if (ref && !deepEqual(ref, c)) return undefined;
      }
    }
    const built = buildClusters(view, newRefs.values(), memo.clusters, `${gw.fleet}#added`);
    clusters = [...previous.clusters, ...built].sort((a, b) => compareStrings(a.name, b.name));
  }
  recomputed.vhosts.commit();
  return { ...previous, ports: recomputed.ports, clusters };
}

/** Returns whether a recomputed configuration still uses every cluster and route it used. */
function keepsWhatItUsed(memo: BuildMemo, { before, after }: RecomputedConfig): boolean {
  const names = new Set(memo.virtualHosts.clusterNamesOf(after.virtualHosts));
  for (const n of memo.virtualHosts.clusterNamesOf(before.virtualHosts)) if (!names.has(n)) return false;
  const routes = new Set(after.used);
  return before.used.every((r) => routes.has(r));
}
