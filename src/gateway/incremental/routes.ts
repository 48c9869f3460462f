/**
 * Applies edits of existing HTTPRoutes/GRPCRoutes to the state of the last build: the route fast
 * path (docs/architecture.md §8).
 *
 * It applies only when the edits cannot change anything but the routes' statuses and the virtual
 * hosts of the listeners they are attached to.
 */
import type { FleetModel } from '../../model/fleet';
import { deepEqual } from '../../util/deep-equal';
import type { ObjectStatus } from '../../status/types';
import type { KubeObject } from '../../store/objects';
import type { BuildOptions, ResolvedGateway, StoreView } from '../resolved';
import type { BuildMemo } from '../build-memo';
import { buildFleet } from '../fleet';
import { attachRoute, hasValidRules } from '../routes/attach';
import { ROUTE_COMPILERS } from '../routes/compilers';
import { routeIdentity } from '../routes/identity';
import type { AttachedRoute, CompiledRoute } from '../routes/types';
import type { BuildState } from './state';
import { recomputeRouteConfigs } from './route-configs';
import { objectKey } from '../../store/objects';
import { sameContent } from '../../store/store';

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
 * Applies edits of existing HTTPRoutes/GRPCRoutes to the state of the last build and returns the
 * rebuilt fleets, every status, the statuses it changed and the new state, or undefined when a
 * full build is needed.
 *
 * The edits are applied only when they cannot change anything but the routes' own statuses and the
 * virtual hosts of the listeners they are attached to: same kind, parentRefs, hostnames and
 * creation time (hence the same precedence), a valid rule before and after, and attachment
 * (listeners and hostnames per listener, computed by the same attachRoute as a full build)
 * unchanged, so attachedRoutes and every Gateway/ListenerSet status stay as they are. Returns the
 * rebuilt FleetModels of the Gateways those listeners belong to (assembled by the same buildFleet
 * as a full build, whose memo reuses every untouched virtual-host list), every status with the
 * routes' ones replaced, and the new state (`state` itself is left as it is); or undefined when a
 * full build is needed. Everything except the routes must be as the state's build saw it, and
 * `memo` the one that build used.
 */
export function updateRoutes(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  edits: RouteEdit[],
  previousFleet: (fleet: string) => FleetModel | undefined = () => undefined,
):
  | { fleets: RouteUpdatedFleet[]; statuses: ObjectStatus[]; changed: ObjectStatus[]; state: BuildState }
  | undefined {
  // What changes, copied on write: the state's indexes are shared, never changed.
  const routes = new Map<string, CompiledRoute>();
  const attached = new Map<string, AttachedRoute[]>();
  const { statusIndex, listenerFleet } = state;
  const statuses = [...state.statuses];
  /** Fleet → the listeners whose routes changed. */
  const affected = new Map<string, Set<string>>();
  const replaced = new Map<CompiledRoute, CompiledRoute>();
  /** The routes' new statuses, by key (an edited route's last edit wins). */
  const changedStatuses = new Map<string, ObjectStatus>();
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
    const old = routes.get(id.key) ?? state.routes.get(id.key);
    // The store swaps in a same-content version silently (status-only writes, such as Convoy's own
    // status of this route), so `previous` may be a newer copy of what the state's build saw.
    if (!old || (old.object !== previous && !sameContent(old.object, previous))) return undefined;
    const next = memo.routes.compile(ROUTE_COMPILERS[kind], view, current, state.policy);
    if (!hasValidRules(old) || !hasValidRules(next)) return undefined;
    const was = attachRoute(view, opts, state.parents, old);
    const now = attachRoute(view, opts, state.parents, next);
    if (!sameAttachment(was.listeners, now.listeners) || !was.status || !now.status) return undefined;
    const at = statusIndex.get(objectKey(kind, id.namespace, id.name));
    if (at === undefined) return undefined;
    for (const [qn, hostnames] of now.listeners) {
      const list = attached.get(qn) ?? state.attached.get(qn);
      const fleet = listenerFleet.get(qn);
      const i = list ? list.findIndex((a) => a.route === old) : -1;
      if (!list || !fleet || i < 0) return undefined;
      const copy = list.slice();
      copy[i] = { route: next, hostnames };
      attached.set(qn, copy);
      const set = affected.get(fleet) ?? new Set<string>();
      set.add(qn);
      affected.set(fleet, set);
    }
    routes.set(id.key, next);
    replaced.set(old, next);
    statuses[at] = now.status;
    changedStatuses.set(objectKey(kind, id.namespace, id.name), now.status);
  }
  const gateways = new Map(state.gateways.map((g) => [g.fleet, g]));
  const changed: [ResolvedGateway, Set<string>][] = [];
  for (const [fleet, listeners] of affected) {
    const gw = gateways.get(fleet);
    if (!gw) return undefined;
    changed.push([gw, listeners]);
  }
  const next: BuildState = {
    ...state,
    routes: state.routes.with(routes),
    attached: state.attached.with(attached),
    statuses,
  };
  const fleets = changed.map(([gw, listeners]) => {
    const previous = previousFleet(gw.fleet);
    const patched = previous && patchFleet(memo, gw, next.attached, previous, listeners, replaced);
    return patched
      ? { model: patched, patched: true }
      : { model: buildFleet(view, gw, next.attached, memo), patched: false };
  });
  return { fleets, statuses, changed: [...changedStatuses.values()], state: next };
}

/**
 * Returns `previous` (this Gateway's last FleetModel, as buildFleet or this function made it) with
 * the route configurations of the given listeners recomputed, or undefined when buildFleet must run.
 *
 * The route configurations are recomputed exactly as buildFleet computes them (same groups, claims
 * and virtual-host memo), every other port and chain kept as is. Only valid when the listeners and
 * attachment of every other listener are those `previous` was built from, and the routes attached
 * to `listeners` changed only as `replaced` (old → new CompiledRoute) says. Clusters are kept when
 * they provably cannot differ from buildFleet's: each recomputed route configuration names the same
 * clusters and uses the same routes (modulo `replaced`) as before, and every replaced route has the
 * same ClusterRefs; otherwise (or when anything is not where it should be) returns undefined and
 * the caller runs buildFleet.
 */
function patchFleet(
  memo: BuildMemo,
  gw: ResolvedGateway,
  attached: ReadonlyMap<string, AttachedRoute[]>,
  previous: FleetModel,
  listeners: Set<string>,
  replaced: Map<CompiledRoute, CompiledRoute>,
): FleetModel | undefined {
  for (const [old, next] of replaced) if (!deepEqual(old.clusters, next.clusters)) return undefined;
  const recomputed = recomputeRouteConfigs(memo, gw, attached, previous, listeners);
  if (!recomputed) return undefined;
  for (const { before, after } of recomputed.configs) {
    if (
      !sameSet(
        memo.virtualHosts.clusterNamesOf(before.virtualHosts),
        memo.virtualHosts.clusterNamesOf(after.virtualHosts),
      )
    )
      return undefined;
    if (
      !sameSet(
        before.used.map((r) => replaced.get(r) ?? r),
        after.used,
      )
    )
      return undefined;
  }
  recomputed.vhosts.commit();
  return { ...previous, ports: recomputed.ports };
}

/** Returns whether two arrays hold the same items, ignoring order and repeats. */
function sameSet<T>(a: readonly T[], b: readonly T[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const x of sa) if (!sb.has(x)) return false;
  return true;
}

/** Returns whether two attachments name the same listeners with equal hostname lists. */
function sameAttachment(a: Map<string, string[]>, b: Map<string, string[]>): boolean {
  if (a.size !== b.size) return false;
  for (const [qn, hostnames] of a) {
    const other = b.get(qn);
    if (!other || !deepEqual(hostnames, other)) return false;
  }
  return true;
}
