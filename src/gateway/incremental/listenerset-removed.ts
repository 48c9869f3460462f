/**
 * Removes a ListenerSet from the state of the last build: the ListenerSet-removal fast path
 * (docs/architecture.md §8), also the first half of replacing a set (ListenerSet updated, its
 * certificate Secret created or deleted: listenerset-replaced.ts).
 *
 * It applies only when removing the set cannot change anything but its Gateway's status, the
 * statuses of the routes that name it and its own filter chains (and what only they used).
 */
import type { FleetModel, PortModel } from '../../model/fleet';
import { deepEqual } from '../../util/deep-equal';
import type { ObjectStatus } from '../../status/types';
import { namespacedName, objectKey, objectNamespace } from '../../store/objects';
import { sameContent } from '../../store/store';
import { ConditionType } from '../../status/conditions';
import type { ClusterRef } from '../backends';
import type { BuildMemo } from '../build-memo';
import { staleRouteStatus } from '../build';
import { listenerConflict } from '../conflicts';
import { gatewayStatus } from '../gateway-status';
import { sniPortName } from '../port-name';
import type { BuildOptions, ResolvedGateway, ResolvedListener, StoreView } from '../resolved';
import { attachRoute } from '../routes/attach';
import { routeIdentity } from '../routes/identity';
import { ROUTE_KINDS } from '../routes/types';
import { coveringHostnames } from '../routes/vhosts';
import { carriesStatusOf } from './route-added';
import { StatusEdits, prunedFleet } from './removal';
import type { BuildState } from './state';
import { parentNamesOf } from './state';

/** The result of removeListenerSet. */
export interface ListenerSetRemoved {
  /** The set's Gateway (fleet name). */
  touched: string;
  /** Its FleetModel without the set's chains; undefined when nothing is served differently. */
  fleet: FleetModel | undefined;
  /** The statuses built anew (its Gateway's, the routes' that named it) and the keys gone. */
  changed: ObjectStatus[];
  removed: string[];
  /** The qualified names of the set's listeners (they no longer exist). */
  listeners: string[];
  state: BuildState;
  /** Where the set was: its index among its Gateway's sets and of its first listener (or -1). */
  place: SetPlace;
}

/** A ListenerSet's place in its resolved Gateway (ResolvedGateway.listenerSets and .listeners). */
export interface SetPlace {
  setAt: number;
  listenerAt: number;
}

/**
 * Removes ListenerSet `namespace/name` from the state's build and returns its Gateway's patched
 * fleet, the statuses it changed and removed, and the new state; or undefined when a full build
 * is needed.
 *
 * Removing it changes no other listener when no listener left on its ports is Conflicted with
 * one of its unconflicted listeners (only those claim a port: conflicts.ts) nor carries
 * OverlappingTLSConfig (removal can only clear that mark), no port range exists and its
 * Gateway is accepted. Its ready listeners must each be an HTTPS Terminate chain with an exact
 * hostname on a port keeping another chain and its name, where no ready listener has no
 * hostname or one covering it, so no sibling's route isolation or misdirected hosts depend on it.
 * Every route that names it is re-attached with the parents left (attachRoute, as a full build):
 * its attachment elsewhere must be unchanged; it gets the new status, or none (or the empty one
 * of a route that carries ours) when it names no parent left, as a full build gives. The view may
 * already hold a new version of the set (the caller then adds that): the set removed is the
 * state's. `memo` must be the one the state's build used; `state` is left as it is.
 */
export function removeListenerSet(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  namespace: string,
  name: string,
  previousFleet: (fleet: string) => FleetModel | undefined,
): ListenerSetRemoved | undefined {
  if (view.list('ListenerPortRange').length > 0) return undefined;
  // A superseded XListenerSet of the same name would come back (docs/gateway-api.md §29).
  if (opts.xListenerSets && view.get('XListenerSet', namespace, name)) return undefined;
  const setKey = objectKey('ListenerSet', namespace, name);
  const target = state.parents.get(setKey);
  if (!target || target.kind !== 'ListenerSet') return undefined;
  const at = state.gateways.findIndex((g) => g.fleet === target.fleet);
  if (at < 0) return undefined;
  const g = state.gateways[at];
  const setAt = g.listenerSets.findIndex(
    (s) =>
      s.object.kind === 'ListenerSet' &&
      objectNamespace(s.object) === namespace &&
      s.object.metadata.name === name,
  );
  if (!g.accepted || setAt < 0) return undefined;
  const set = g.listenerSets[setAt];
  const own = new Set(set.listeners);
  if (set.allowed && !othersUnaffected(g, set.listeners, own)) return undefined;
  const gw: ResolvedGateway = {
    ...g,
    listeners: set.allowed ? g.listeners.filter((l) => !own.has(l)) : g.listeners,
    listenerSets: g.listenerSets.filter((_, i) => i !== setAt),
  };
  const qns = set.listeners.map((l) => l.qualifiedName);
  const removedQns = new Set(qns);
  const parents = state.parents.without([setKey]);
  const edits = new StatusEdits(state);

  // The routes that name the set: each is attached again with the parents left.
  const attachedHere = new Set(qns.flatMap((qn) => (state.attached.get(qn) ?? []).map((a) => a.route)));
  const routesGone: string[] = [];
  const removedRefs: ClusterRef[] = [];
  for (const route of attachedHere) removedRefs.push(...route.clusters);
  let found = 0;
  const setName = namespacedName(namespace, name);
  for (const kind of state.namedParents.has(setName) ? ROUTE_KINDS : []) {
    for (const obj of view.list(kind)) {
      if (!parentNamesOf(obj).includes(setName)) continue;
      if (kind !== 'HTTPRoute' && kind !== 'GRPCRoute') return undefined;
      const id = routeIdentity(kind, obj);
      const compiled = state.routes.get(id.key);
      if (!compiled) {
        // Being deleted: a full build neither compiles it nor writes its status.
        if (obj.metadata.deletionTimestamp && !edits.has(id.key)) continue;
        return undefined;
      }
      if (compiled.object !== obj && !sameContent(compiled.object, obj)) return undefined;
      if (attachedHere.has(compiled)) found++;
      const was = attachRoute(view, opts, state.parents, compiled);
      const now = attachRoute(view, opts, parents, compiled);
      let elsewhere = 0;
      for (const [qn, hostnames] of was.listeners) {
        if (removedQns.has(qn)) continue;
        elsewhere++;
        if (!deepEqual(now.listeners.get(qn), hostnames)) return undefined;
      }
      if (elsewhere !== now.listeners.size) return undefined;
      if (now.status) {
        if (!edits.replace(now.status)) return undefined;
        continue;
      }
      routesGone.push(id.key);
      const replaced = carriesStatusOf(obj, opts.controllerName) && edits.replace(staleRouteStatus(obj));
      if (!replaced && !edits.remove(id.key)) return undefined;
    }
  }
  // Every route attached to the set was found naming it.
  if (found !== attachedHere.size) return undefined;
  if (!edits.replace(gatewayStatus(gw, opts))) return undefined;
  if (!edits.remove(objectKey(set.object.kind, namespace, name))) return undefined;

  let fleet: FleetModel | undefined;
  const ready = set.allowed ? set.listeners.filter((l) => l.ready) : [];
  if (ready.length > 0) {
    const previous = previousFleet(gw.fleet);
    const ports = previous && withoutChains(previous.ports, gw, ready);
    fleet = ports && prunedFleet(memo, previous, ports, removedRefs);
    if (!fleet) return undefined;
  }
  const statuses = edits.result();
  const gateways = state.gateways.slice();
  gateways[at] = gw;
  const next: BuildState = {
    ...state,
    gateways,
    parents,
    routes: state.routes.without(routesGone),
    attached: state.attached.without(qns),
    statuses: statuses.statuses,
    statusIndex: statuses.statusIndex,
    listenerFleet: state.listenerFleet.without(qns),
  };
  return {
    touched: gw.fleet,
    fleet,
    changed: statuses.changed,
    removed: statuses.removed,
    listeners: qns,
    state: next,
    place: {
      setAt,
      listenerAt: set.allowed && set.listeners.length > 0 ? g.listeners.indexOf(set.listeners[0]) : -1,
    },
  };
}

/**
 * Returns whether removing `removed` (listeners of one admitted set of `g`) leaves every other
 * listener's conditions as they are: no listener left on their ports carries OverlappingTLSConfig
 * or is Conflicted with one of them that was not conflicted itself.
 */
function othersUnaffected(
  g: ResolvedGateway,
  removed: readonly ResolvedListener[],
  own: ReadonlySet<ResolvedListener>,
): boolean {
  const conflicted = (l: ResolvedListener) =>
    l.conditions.some((c) => c.type === ConditionType.Conflicted && c.status === 'True');
  const claiming = removed.filter((l) => !conflicted(l));
  const ports = new Set(removed.map((l) => l.port));
  for (const o of g.listeners) {
    if (own.has(o) || !ports.has(o.port)) continue;
    if (o.conditions.some((c) => c.type === ConditionType.OverlappingTLSConfig)) return false;
    if (conflicted(o) && claiming.some((l) => listenerConflict(l, o) !== undefined)) return false;
  }
  return true;
}

/**
 * Returns `ports` without the chains of `ready` (listeners removed from `gw`, which no longer
 * lists them), or undefined when that is not all buildFleet would change: each must be an HTTPS
 * Terminate chain with an exact hostname that no listener left on its port covers or leaves
 * without a hostname, and the port must keep a chain and its name.
 */
function withoutChains(
  ports: readonly PortModel[],
  gw: ResolvedGateway,
  ready: readonly ResolvedListener[],
): PortModel[] | undefined {
  const out = ports.slice();
  const touched = new Set<number>();
  for (const l of ready) {
    const host = l.hostname?.toLowerCase();
    if (l.protocol !== 'HTTPS' || l.tlsMode !== 'Terminate' || !host || host.startsWith('*'))
      return undefined;
    const i = out.findIndex((p) => p.port === l.port);
    if (i < 0 || out[i].http) return undefined;
    const chain = out[i].filterChains.findIndex((c) => c.name === l.qualifiedName);
    if (chain < 0) return undefined;
    out[i] = { ...out[i], filterChains: out[i].filterChains.filter((_, k) => k !== chain) };
    touched.add(l.port);
  }
  for (const port of touched) {
    const covering = new Set(
      ready.filter((l) => l.port === port).flatMap((l) => coveringHostnames(l.hostname!.toLowerCase())),
    );
    let first: ResolvedListener | undefined;
    for (const x of gw.listeners) {
      if (!x.ready || x.port !== port || x.protocol === 'UDP') continue;
      first ??= x;
      if (!x.hostname || covering.has(x.hostname.toLowerCase())) return undefined;
    }
    const i = out.findIndex((p) => p.port === port);
    if (!first || out[i].filterChains.length === 0) return undefined;
    if (sniPortName(port, gw.listeners, first) !== out[i].name) return undefined;
  }
  return out;
}
