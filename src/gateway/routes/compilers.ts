/**
 * Holds the compiler of each route kind, and compiles every route that names a parent Convoy owns
 * (memoized per route object, see memo.ts).
 */
import type { KubeObject } from '../../store/objects';
import { objectNamespace } from '../../store/objects';
import type { ParentReference } from '../api';
import type { BackendPolicy } from '../backends';
import type { ResolvedGateway, StoreView } from '../resolved';
import { indexParents, targetOf } from './attach';
import { compileGRPCRoute, compileHTTPRoute } from './compile';
import { compareRouteIds } from './identity';
import type { CompiledRouteMemo } from './memo';
import { compileTLSRoute } from './tls';
import { compileTCPRoute, compileUDPRoute } from './l4';
import type { CompiledRoute, RouteKind } from './types';
import { ROUTE_KINDS } from './types';

/** Maps each route kind Convoy serves to its compiler. */
export const ROUTE_COMPILERS: Record<
  RouteKind,
  (view: StoreView, obj: KubeObject, policy: BackendPolicy) => CompiledRoute
> = {
  HTTPRoute: compileHTTPRoute,
  GRPCRoute: compileGRPCRoute,
  TLSRoute: compileTLSRoute,
  TCPRoute: compileTCPRoute,
  UDPRoute: compileUDPRoute,
};

/**
 * Compiles the routes that name at least one parent Convoy owns, sorted by precedence; `memo`
 * returns the previous CompiledRoute of every route whose inputs are unchanged.
 */
export function compileRoutes(
  view: StoreView,
  gateways: ResolvedGateway[],
  policy: BackendPolicy,
  memo: CompiledRouteMemo,
): CompiledRoute[] {
  const parents = indexParents(gateways);
  const out: CompiledRoute[] = [];
  for (const kind of ROUTE_KINDS) {
    for (const obj of view.list(kind)) {
      if (obj.metadata.deletionTimestamp) continue;
      const refs = (obj.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
      const ns = objectNamespace(obj);
      if (!Array.isArray(refs) || !refs.some((r) => targetOf(parents, r, ns))) continue;
      // Memoized on the route object and what it read: unchanged routes keep their CompiledRoute.
      out.push(memo.compile(ROUTE_COMPILERS[kind], view, obj, policy));
    }
  }
  return out.sort((a, b) => compareRouteIds(a.id, b.id));
}
