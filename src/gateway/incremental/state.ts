/**
 * What a full build keeps so that the fast paths (routes.ts, listenerset.ts) can apply a change
 * without a full build: the resolved Gateways, the compiled routes and their attachment, and every
 * status with an index by object.
 */
import type { ObjectStatus } from '../../status/types';
import type { KubeObject } from '../../store/objects';
import { objectNamespace } from '../../store/objects';
import type { ParentReference } from '../api';
import type { BackendPolicy } from '../backends';
import type { ResolvedGateway, StoreView } from '../resolved';
import type { AttachmentResult, ParentTarget } from '../routes/attach';
import { ROUTE_KINDS } from '../routes/types';
import type { CompiledRoute } from '../routes/types';

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

/** Returns the `namespace/name` of every parentRef of every route in the view (BuildState.namedParents). */
export function namedParentsOf(view: StoreView): Set<string> {
  const out = new Set<string>();
  for (const kind of ROUTE_KINDS) {
    for (const obj of view.list(kind)) addNamedParents(out, obj);
  }
  return out;
}

/** Adds the `namespace/name` of every parentRef of `route` to `out`. */
export function addNamedParents(out: Set<string>, route: KubeObject): void {
  const refs = (route.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
  if (!Array.isArray(refs)) return;
  const ns = objectNamespace(route);
  for (const r of refs) {
    if (r && typeof r === 'object' && typeof r.name === 'string') out.add(`${r.namespace || ns}/${r.name}`);
  }
}

/** Returns the `kind/namespace/name` key of a status (BuildState.statusIndex). */
export function statusKey(s: ObjectStatus): string {
  return `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}`;
}
