/**
 * Runs the whole gateway build: store view → one FleetModel per Gateway + every status Convoy writes.
 *
 *   resolveGatewayClasses (gatewayclass.ts) → resolveGateways (gateways.ts) → compile routes (routes/compilers.ts) → attach routes
 *   (routes/attach.ts) → fill attachedRoutes → assemble FleetModels (fleet.ts) → statuses.
 *
 * The fast paths that apply a change to the state of the last build are in incremental/.
 * Pure and deterministic: no I/O, time only from opts.now, every list sorted.
 */
import type {
  BuildOptions,
  GatewayBuildResult,
  ResolvedGateway,
  ResolvedListener,
  StoreView,
} from './resolved';
import type { ObjectStatus } from '../status/types';
import { objectNamespace } from '../store/objects';
import type { KubeObject } from '../store/objects';
import { GATEWAY_API_VERSION } from './api';
import { gatewayClassStatuses, resolveGatewayClasses } from './gatewayclass';
import { resolveGateways } from './gateways';
import { gatewayAndListenerSetStatuses } from './gateway-status';
import type { BackendPolicy } from './backends';
import { buildFleet } from './fleet';
import { attachRoutes, indexParents } from './routes/attach';
import { compileRoutes } from './routes/compilers';
import { ROUTE_KINDS } from './routes/types';
import { collectEndpointRefusals } from './endpoint-guard';
import { portRangeStatuses } from './port-range-status';
import { resolveBackendTlsPolicies } from './backend-tls';
import { backendTlsPolicyStatuses } from './backend-tls-status';

import type { BuildState } from './incremental/state';
import { namedParentsOf } from './incremental/state';
import { BuildMemo } from './build-memo';
import { LayeredMap, LayeredSet } from '../util/layered-map';
import { compareStrings } from '../util/compare';
import { objectKey } from '../store/objects';
import { statusKey } from '../status/types';

/**
 * Builds every Gateway Convoy owns from the store view: their FleetModels, every status Convoy
 * writes, and the state the fast paths (incremental/) start from.
 *
 * `memo` carries what earlier builds over the same store computed (the Controller passes its own);
 * without one, everything is computed afresh. The result is the same either way.
 */
export function buildGateways(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo = new BuildMemo(),
): GatewayBuildResult & { state: BuildState } {
  const classes = resolveGatewayClasses(view, opts);
  // Every listener is validated: the ones not validated now no longer exist (last-good-certificates.ts).
  memo.lastGoodCertificates.beginFullBuild();
  const gateways = resolveGateways(view, opts, memo, classes);
  memo.lastGoodCertificates.endFullBuild();
  const endpoints = opts.endpoints ?? {};
  const backendTls = resolveBackendTlsPolicies(view);
  const policy: BackendPolicy = {
    externalNameServices: opts.externalNameServices,
    endpoints,
    refusedEndpoints: collectEndpointRefusals(view.list('EndpointSlice'), endpoints),
    backendTls,
  };
  const routes = compileRoutes(view, gateways, policy, memo.routes);
  const attachment = attachRoutes(view, opts, gateways, routes);
  for (const gw of gateways) {
    for (const l of allListeners(gw)) l.attachedRoutes = attachment.counts.get(l.qualifiedName) ?? 0;
  }
  const fleets = gateways
    .map((gw) => buildFleet(view, gw, attachment.attached, memo, backendTls))
    .sort((a, b) => compareStrings(a.fleet, b.fleet));
  const routeStatuses = [...attachment.statuses, ...staleRouteStatuses(view, opts, attachment.statuses)].sort(
    compareStatuses,
  );
  const statuses: ObjectStatus[] = [
    ...gatewayClassStatuses(classes, opts),
    ...gatewayAndListenerSetStatuses(gateways, opts),
    ...routeStatuses,
    ...portRangeStatuses(view, gateways, opts),
    ...backendTlsPolicyStatuses(view, opts, backendTls, fleets),
  ];
  const parents = indexParents(gateways);
  const listenerFleet = new Map<string, string>();
  for (const t of parents.values()) for (const l of t.listeners) listenerFleet.set(l.qualifiedName, t.fleet);
  const state: BuildState = {
    gateways,
    parents: LayeredMap.adopt(parents),
    routes: LayeredMap.adopt(new Map(routes.map((r) => [r.id.key, r]))),
    attached: LayeredMap.adopt(attachment.attached),
    statuses,
    policy,
    statusIndex: LayeredMap.adopt(new Map(statuses.map((s, i) => [statusKey(s), i]))),
    listenerFleet: LayeredMap.adopt(listenerFleet),
    namedParents: LayeredSet.of(namedParentsOf(view)),
  };
  return { fleets, statuses, state };
}

/**
 * Returns an empty-parents status for each route that names no parent Convoy owns any more but still
 * carries a status.parents entry with our controllerName.
 *
 * Such a route's parentRef changed, or its Gateway went away. The empty list makes the status writer
 * remove our stale entries and keep other controllers' ones.
 */
function staleRouteStatuses(view: StoreView, opts: BuildOptions, current: ObjectStatus[]): ObjectStatus[] {
  const emitted = new Set(current.map(statusKey));
  const out: ObjectStatus[] = [];
  for (const kind of ROUTE_KINDS) {
    for (const obj of view.list(kind)) {
      if (obj.metadata.deletionTimestamp) continue;
      const ns = objectNamespace(obj);
      if (emitted.has(objectKey(kind, ns, obj.metadata.name))) continue;
      const parents = (obj.status as { parents?: { controllerName?: string }[] } | undefined)?.parents;
      if (!Array.isArray(parents) || !parents.some((p) => p?.controllerName === opts.controllerName))
        continue;
      out.push(staleRouteStatus(obj));
    }
  }
  return out;
}

/** Returns the empty-parents status of a route that names no parent Convoy owns any more (see above). */
export function staleRouteStatus(route: KubeObject): ObjectStatus {
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: route.kind,
    metadata: {
      namespace: objectNamespace(route),
      name: route.metadata.name,
      generation: route.metadata.generation,
    },
    status: { parents: [] },
  };
}

/** Returns every listener of a Gateway: its merged list plus those of its ListenerSets, each once. */
function allListeners(gw: ResolvedGateway): ResolvedListener[] {
  const seen = new Set<ResolvedListener>(gw.listeners);
  for (const s of gw.listenerSets) for (const l of s.listeners) seen.add(l);
  return [...seen];
}

/** Orders statuses by kind, then namespace, then name. */
function compareStatuses(a: ObjectStatus, b: ObjectStatus): number {
  return (
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    compareStrings(a.metadata.name, b.metadata.name)
  );
}
