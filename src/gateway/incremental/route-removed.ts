/**
 * Removes deleted HTTPRoutes/GRPCRoutes from the state of the last build: the route-removal fast
 * path (docs/architecture.md §8), the inverse of route creation (route-added.ts).
 *
 * A deleted route changes only its own status (gone), the attachedRoutes of the listeners it was
 * attached to (hence their Gateway's or ListenerSet's status), the route configurations of those
 * listeners and the clusters only it used.
 */
import type { FleetModel } from '../../model/fleet';
import type { ObjectStatus } from '../../status/types';
import type { KubeObject } from '../../store/objects';
import { objectNamespace } from '../../store/objects';
import type { BuildMemo } from '../build-memo';
import type { BuildOptions, StoreView } from '../resolved';
import type { ParentTarget } from '../routes/attach';
import { attachRoute } from '../routes/attach';
import { routeIdentity } from '../routes/identity';
import type { AttachedRoute, CompiledRoute } from '../routes/types';
import { recomputeRouteConfigs } from './route-configs';
import { recountOwners } from './route-added';
import { StatusEdits, prunedFleet } from './removal';
import type { BuildState } from './state';

/** The result of removeRoutes: the patched fleets, the statuses changed and gone, the new state. */
export interface RoutesRemoved {
  /** The FleetModels that serve something differently (each `previousFleet`'s with nodes replaced). */
  fleets: FleetModel[];
  /** Every fleet a deleted route was attached to, served or not. */
  touched: string[];
  changed: ObjectStatus[];
  removed: string[];
  state: BuildState;
}

/**
 * Removes HTTPRoutes/GRPCRoutes deleted since the state's build (`deleted`: each as the state's
 * build saw it) and returns the patched fleets, the statuses changed and gone, and the new state;
 * or undefined when a full build is needed.
 *
 * A route's attachment depends on its parents alone (attachRoute), so it is taken out of exactly
 * the attachment lists a full build of the state's store put it in; those listeners get copies
 * with the new attachedRoutes (and their owners new statuses); the route configurations of the
 * ready ones are recomputed as buildFleet computes them, each of which must use no cluster or
 * route it did not use; and the fleet keeps the clusters its chains still name (prunedFleet).
 * Its own status goes (a deleted object has none). A route the state did not compile changes
 * nothing but its status, if it had one. Everything but the deleted routes must be as the
 * state's build saw it, `memo` the one that build used; `state` is left as it is.
 */
export function removeRoutes(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  deleted: KubeObject[],
  previousFleet: (fleet: string) => FleetModel | undefined,
): RoutesRemoved | undefined {
  const edits = new StatusEdits(state);
  const lists = new Map<string, AttachedRoute[]>();
  const byFleet = new Map<string, Set<string>>();
  const gone: CompiledRoute[] = [];
  for (const obj of deleted) {
    const kind = obj.kind;
    if (kind !== 'HTTPRoute' && kind !== 'GRPCRoute') return undefined;
    const ns = objectNamespace(obj);
    if (view.get(kind, ns, obj.metadata.name)) return undefined; // Created again since.
    const id = routeIdentity(kind, obj);
    const compiled = state.routes.get(id.key);
    if (edits.has(id.key)) edits.remove(id.key);
    if (!compiled) continue;
    gone.push(compiled);
    for (const qn of attachRoute(view, opts, state.parents, compiled).listeners.keys()) {
      const list = lists.get(qn) ?? state.attached.get(qn);
      const fleet = state.listenerFleet.get(qn);
      const i = list ? list.findIndex((a) => a.route === compiled) : -1;
      if (!list || !fleet || i < 0) return undefined;
      lists.set(
        qn,
        list.filter((_, k) => k !== i),
      );
      const qns = byFleet.get(fleet) ?? new Set<string>();
      qns.add(qn);
      byFleet.set(fleet, qns);
    }
  }
  // A full build lists only listeners some route is attached to.
  const emptied = [...lists].filter(([, list]) => list.length === 0).map(([qn]) => qn);
  const attached = state.attached.with([...lists].filter(([, list]) => list.length > 0)).without(emptied);
  const gateways = state.gateways.slice();
  const parents: [string, ParentTarget][] = [];
  const fleets: FleetModel[] = [];
  for (const [fleet, qns] of byFleet) {
    const owned = recountOwners(state, gateways, parents, fleet, lists, opts);
    if (!owned) return undefined;
    const gw = owned.gateway;
    for (const s of owned.statuses) if (!edits.replace(s)) return undefined;
    const served = new Set(
      [...qns].filter((qn) => gw.listeners.some((l) => l.ready && l.qualifiedName === qn)),
    );
    if (!gw.accepted || served.size === 0) continue; // Nothing served differently.
    const previous = previousFleet(fleet);
    const recomputed = previous && recomputeRouteConfigs(memo, gw, attached, previous, served);
    if (!recomputed) return undefined;
    const removed = new Set(gone);
    for (const { before, after } of recomputed.configs) {
      // Removing routes only takes entries away: nothing used may come in.
      const names = new Set(memo.virtualHosts.clusterNamesOf(before.virtualHosts));
      if (memo.virtualHosts.clusterNamesOf(after.virtualHosts).some((n) => !names.has(n))) return undefined;
      const used = new Set(before.used);
      if (after.used.some((r) => !used.has(r) || removed.has(r))) return undefined;
    }
    const model = prunedFleet(
      memo,
      previous,
      recomputed.ports,
      gone.flatMap((r) => r.clusters),
    );
    if (!model) return undefined;
    recomputed.vhosts.commit();
    fleets.push(model);
  }
  const statuses = edits.result();
  const next: BuildState = {
    ...state,
    gateways,
    parents: state.parents.with(parents),
    routes: state.routes.without(gone.map((r) => r.id.key)),
    attached,
    statuses: statuses.statuses,
    statusIndex: statuses.statusIndex,
  };
  return {
    fleets,
    touched: [...byFleet.keys()],
    changed: statuses.changed,
    removed: statuses.removed,
    state: next,
  };
}
