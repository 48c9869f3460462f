/**
 * Defines what a full build keeps so that the fast paths (routes.ts, listenerset.ts) can apply a
 * change without a full build: the resolved Gateways, the compiled routes and their attachment, and
 * every status with an index by object.
 */
import type { ObjectStatus } from '../../status/types';
import type { KubeObject } from '../../store/objects';
import { objectNamespace } from '../../store/objects';
import type { ParentReference } from '../api';
import type { BackendPolicy } from '../backends';
import type { ResolvedGateway, StoreView } from '../resolved';
import type { ParentTarget } from '../routes/attach';
import { ROUTE_KINDS } from '../routes/types';
import type { AttachedRoute, CompiledRoute } from '../routes/types';
import type { LayeredMap, LayeredSet } from '../../util/layered-map';
import { namespacedName } from '../../store/objects';

/**
 * Holds what a full build knew, so that a change can be applied without a full build (updateRoutes,
 * addListenerSet).
 *
 * A state is never changed: each fast path returns a new one that shares every index it did not
 * touch with its predecessor (LayeredMap, copy-on-write arrays), so a caller may keep an old state,
 * and a fast path that gives up (returns undefined) leaves nothing half done.
 */
export interface BuildState {
  readonly gateways: readonly ResolvedGateway[];
  readonly parents: LayeredMap<string, ParentTarget>;
  /** Compiled routes that name a parent Convoy owns, by RouteIdentity.key. */
  readonly routes: LayeredMap<string, CompiledRoute>;
  /** Routes attached per listener (qualifiedName), in route precedence order. */
  readonly attached: LayeredMap<string, AttachedRoute[]>;
  /** Every status of the build, in the build's order. */
  readonly statuses: readonly ObjectStatus[];
  readonly policy: BackendPolicy;
  /** Position in `statuses` by `kind/namespace/name` (statusKey). */
  readonly statusIndex: LayeredMap<string, number>;
  /** The fleet (Gateway `namespace/name`) each listener (qualifiedName) belongs to. */
  readonly listenerFleet: LayeredMap<string, string>;
  /**
   * `namespace/name` of every parentRef of every route in the view, whatever its kind (a superset
   * of the ListenerSets routes name: addListenerSet falls back when a new set's key is in it).
   */
  readonly namedParents: LayeredSet<string>;
}

/** Returns the `namespace/name` of every parentRef of every route in the view (BuildState.namedParents). */
export function namedParentsOf(view: StoreView): string[] {
  const out: string[] = [];
  for (const kind of ROUTE_KINDS) {
    for (const obj of view.list(kind)) out.push(...parentNamesOf(obj));
  }
  return out;
}

/** Returns the `namespace/name` of every parentRef of `route`. */
export function parentNamesOf(route: KubeObject): string[] {
  const refs = (route.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
  if (!Array.isArray(refs)) return [];
  const ns = objectNamespace(route);
  const out: string[] = [];
  for (const r of refs) {
    if (r && typeof r === 'object' && typeof r.name === 'string')
      out.push(namespacedName(r.namespace || ns, r.name));
  }
  return out;
}
