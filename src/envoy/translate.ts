import type { ClusterModel, FleetModel, FilterChainModel, HttpPortModel } from '../model/fleet';
import type { EnvoyResources } from './resources';
import type { RouteConfiguration } from '../generated/envoy/config/route/v3/RouteConfiguration';
import { forgetListenerTranslations, translateListener } from './translate/listeners';
import { buildRouteConfiguration } from './translate/routes';
import { translateCluster } from './translate/clusters';
import { translateEndpoints } from './translate/endpoints';
import { translateSecret } from './translate/secrets';
import { translateCaBundle } from './translate/client-validation';
import { withMisdirectedHosts } from './translate/misdirected';
import { memoByNode } from './translate/common';
import { ListReuse } from './translate/list-reuse';
import { RouteListReuse, type RouteSegment } from './translate/route-list';
import { DEFAULT_ACCESS_LOG, type AccessLogOptions } from './translate/access-log';
import { tracing as tracingFor, type TracingOptions } from './translate/tracing';
import { buildUdpWeightedCluster, needsUdpWeightedCluster } from './translate/udp-weights';
import {
  forgetDispatchedPorts,
  retainDispatchedPorts,
  translateDispatchedPort,
} from './translate/sni-dispatch';
import { portLayout, type ListenerLayout } from './translate/layout-choice';
import type { Cluster } from '../generated/envoy/config/cluster/v3/Cluster';
import type { ClusterLoadAssignment } from '../generated/envoy/config/endpoint/v3/ClusterLoadAssignment';

/**
 * Translates a FleetModel (the model of one Gateway's fleet) into the typed Envoy resources its
 * Envoys receive.
 *
 * Pure and deterministic: output order follows the model's (already sorted) arrays, and every
 * resource is built from its own model node only. Route configurations, clusters, assignments,
 * secrets and filter chains are memoized on those nodes (WeakMap), so when the builder reuses an
 * unchanged node the translation returns the very same object and the xDS cache can skip
 * re-encoding it. Returned objects are shared with that memo and must not be mutated.
 */

/** Holds the options of a translation. */
export interface TranslateOptions {
  /** Listener bind address; defaults to `0.0.0.0`. */
  bindAddress?: string;
  /**
   * Access logs (translate/access-log.ts; JSON to stdout by default): one setting for every fleet,
   * or a function giving each fleet (Gateway `namespace/name`) its own, e.g. from `convoy serve
   * --access-log` or from a managed fleet's parameters; undefined from it means the default.
   */
  accessLog?: AccessLogOptions | ((fleet: string) => AccessLogOptions | undefined);
  /**
   * OpenTelemetry tracing (translate/tracing.ts; off by default), for every fleet or per fleet like
   * `accessLog`. When set, the fleet gets one more cluster, `convoy-otel-collector`.
   */
  tracing?: TracingOptions | ((fleet: string) => TracingOptions | undefined);
  /**
   * How TLS ports lay out their hostnames (docs/xds.md §16): `chains` (the default) puts one filter
   * chain per hostname in the port's Listener; `sni-dispatch` gives each hostname an internal
   * listener and a cluster of its own, so a hostname change is O(1) bytes over delta xDS; `auto`
   * dispatches a port from `listenerLayoutThreshold` TLS chains on (translate/layout-choice.ts).
   */
  listenerLayout?: ListenerLayout;
  /** The `auto` layout's threshold in TLS filter chains per port (layout-choice.ts) when set. */
  listenerLayoutThreshold?: number;
}

export const DEFAULT_BIND_ADDRESS = '0.0.0.0';

const httpRouteConfiguration = memoByNode((http: HttpPortModel): RouteConfiguration =>
  buildRouteConfiguration(http.routeConfigName, http.virtualHosts),
);

const chainRouteConfiguration = memoByNode((fc: FilterChainModel): RouteConfiguration =>
  buildRouteConfiguration(fc.routeConfigName!, withMisdirectedHosts(fc)),
);

/** Each fleet's long lists as last translated (list-reuse.ts). */
const lastLists = new ListReuse();
/** Each fleet's RouteConfiguration list as last assembled (route-list.ts). */
const lastRoutes = new RouteListReuse();

/**
 * Forgets what translateFleet remembers of a fleet to translate its next model faster; called when
 * the fleet is gone (XdsCache.removeFleet), so nothing of a removed fleet is kept.
 */
export function forgetFleetTranslation(fleet: string): void {
  lastLists.forget(fleet);
  lastRoutes.forget(fleet);
  forgetListenerTranslations(fleet);
  forgetDispatchedPorts(fleet);
}

/** The RouteConfiguration of a TLS-port chain, for the chains that terminate HTTPS only. */
function chainRoutes(fc: FilterChainModel): RouteConfiguration | undefined {
  // Only HTTPS chains that terminate TLS run an HCM, hence need their RouteConfiguration.
  return fc.protocol === 'HTTPS' && fc.mode === 'Terminate' && fc.routeConfigName && fc.secretNames.length
    ? chainRouteConfiguration(fc)
    : undefined;
}

/** The ClusterLoadAssignment sent over EDS for a cluster; none for a DNS cluster. */
function edsAssignment(cluster: ClusterModel): ClusterLoadAssignment | undefined {
  // DNS clusters carry their own load assignment; only EDS clusters get one over ADS.
  return cluster.externalName ? undefined : translateEndpoints(cluster);
}

/**
 * Translates one fleet's model into its listeners, route configurations, clusters, assignments and
 * secrets, in model order (see the file comment for purity and memoization). The returned arrays
 * may be shared with the fleet's next translation: callers must not modify them.
 */
export function translateFleet(model: FleetModel, options: TranslateOptions = {}): EnvoyResources {
  const bindAddress = model.managed?.local?.bindAddress ?? options.bindAddress ?? DEFAULT_BIND_ADDRESS;
  // A managed fleet's own parameters win over the options for every fleet (docs/operations.md §20).
  const accessLog =
    model.managed?.accessLog ??
    (typeof options.accessLog === 'function' ? options.accessLog(model.fleet) : options.accessLog);
  const tracingOptions =
    model.managed?.tracing ??
    (typeof options.tracing === 'function' ? options.tracing(model.fleet) : options.tracing);
  const traced = tracingOptions && tracingFor(tracingOptions, model.fleet);
  const out: EnvoyResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };

  // Names are unique by construction; a duplicate would only be a second copy of the same name, so
  // the first of each name is kept (route-list.ts, which patches the last list when it can).
  const routeSegments: RouteSegment[] = [];

  const dispatchClusters: Cluster[] = [];
  const usedKeys = new Set(['clusters', 'endpoints', 'secrets']);
  // Dispatched ports are patched from their last translation (dispatch-reuse.ts).
  const dispatch = { name: model.fleet, usedKeys: new Set<string>() };
  for (const port of model.ports) {
    const dispatched =
      portLayout(port, options.listenerLayout, options.listenerLayoutThreshold) === 'sni-dispatch'
        ? translateDispatchedPort(
            port,
            bindAddress,
            accessLog ?? DEFAULT_ACCESS_LOG,
            traced?.hcm ?? null,
            dispatch,
          )
        : undefined;
    const listener = dispatched
      ? undefined
      : translateListener(port, { bindAddress, accessLog, tracing: traced?.hcm, fleet: model.fleet });
    if (dispatched) {
      out.listeners.push(...dispatched.listeners);
      dispatchClusters.push(...dispatched.clusters);
    } else if (listener) {
      out.listeners.push(listener);
    } else {
      continue;
    }
    if (port.http) routeSegments.push([httpRouteConfiguration(port.http)]);
    // The chains' lists are reused per port (list-reuse.ts): a few chains changed, a few looked up.
    const key = 'routes ' + port.name;
    usedKeys.add(key);
    routeSegments.push(lastLists.map(model.fleet, key, port.filterChains, chainRoutes));
  }
  out.routes = lastRoutes.assemble(model.fleet, routeSegments) as RouteConfiguration[];
  for (const cluster of lastLists.map(model.fleet, 'clusters', model.clusters, translateCluster)) {
    out.clusters.push(cluster);
  }
  for (const cla of lastLists.map(model.fleet, 'endpoints', model.clusters, edsAssignment)) {
    if (cla) out.endpoints.push(cla);
  }
  // After the model's clusters, which are sorted, in port order: a deterministic place.
  let byName: Map<string, ClusterModel> | undefined;
  for (const port of model.ports) {
    if (!port.l4 || !needsUdpWeightedCluster(port.l4)) continue;
    byName ??= new Map(model.clusters.map((c) => [c.name, c]));
    out.clusters.push(buildUdpWeightedCluster(port, port.l4, byName));
  }
  // After the model's clusters: the SNI-dispatch clusters, in port and chain order.
  out.clusters.push(...dispatchClusters);
  if (traced) out.clusters.push(traced.cluster);
  for (const secret of lastLists.map(model.fleet, 'secrets', model.secrets, translateSecret)) {
    out.secrets.push(secret);
  }
  lastLists.retain(model.fleet, usedKeys);
  retainDispatchedPorts(model.fleet, dispatch.usedKeys);
  // After the certificates: the CA bundles of client certificate validation (their names differ).
  for (const bundle of model.caBundles ?? []) out.secrets.push(translateCaBundle(bundle));
  return out;
}
