import type { Listener } from '../../src/generated/envoy/config/listener/v3/Listener';
import type { RouteConfiguration } from '../../src/generated/envoy/config/route/v3/RouteConfiguration';
import type { Cluster } from '../../src/generated/envoy/config/cluster/v3/Cluster';
import type { ClusterLoadAssignment } from '../../src/generated/envoy/config/endpoint/v3/ClusterLoadAssignment';
import type { EnvoyResources } from '../../src/envoy/resources';

/**
 * Small hand-built Envoy resources for real-Envoy tests of the xDS server, independent of the
 * Gateway API translator: an HTTP listener using RDS, EDS clusters and their endpoints. Shapes
 * follow src/envoy/protos.ts: Any as { '@type', ...fields }, enums as numbers.
 */

const V3 = 2; // envoy.config.core.v3.ApiVersion.V3
const EDS = 3; // Cluster.DiscoveryType.EDS
const adsSource = { ads: {}, resource_api_version: V3 };

export const HCM_STAT_PREFIX = 'e2e';

export function httpListener(name: string, port: number, routeConfigName: string): Listener {
  const hcm = {
    '@type':
      'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    stat_prefix: HCM_STAT_PREFIX,
    rds: { route_config_name: routeConfigName, config_source: adsSource },
    http_filters: [
      {
        name: 'envoy.filters.http.router',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
      },
    ],
  };
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: port } },
    filter_chains: [
      { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] },
    ],
  } as unknown as Listener;
}

export interface RouteSpec {
  /** Path prefix, or a regex when `regex` is set. */
  prefix?: string;
  regex?: string;
  /** Forward to this cluster... */
  cluster?: string;
  /** ...or answer directly. */
  direct?: { status: number; body: string };
}

export function routeConfig(name: string, routes: RouteSpec[]): RouteConfiguration {
  return {
    name,
    virtual_hosts: [
      {
        name: 'all',
        domains: ['*'],
        routes: routes.map((r) => ({
          match: r.regex !== undefined ? { safe_regex: { regex: r.regex } } : { prefix: r.prefix ?? '/' },
          ...(r.direct
            ? { direct_response: { status: r.direct.status, body: { inline_string: r.direct.body } } }
            : // No route timeout: tests hold requests open across config changes.
              { route: { cluster: r.cluster, timeout: { seconds: 0 } } }),
        })),
      },
    ],
  } as unknown as RouteConfiguration;
}

export function edsCluster(name: string): Cluster {
  return {
    name,
    type: EDS,
    connect_timeout: { seconds: 2 },
    eds_cluster_config: { eds_config: adsSource },
  } as unknown as Cluster;
}

export function endpoints(
  clusterName: string,
  targets: { host?: string; port: number }[],
): ClusterLoadAssignment {
  return {
    cluster_name: clusterName,
    endpoints: [
      {
        lb_endpoints: targets.map((t) => ({
          endpoint: { address: { socket_address: { address: t.host ?? '127.0.0.1', port_value: t.port } } },
        })),
      },
    ],
  } as unknown as ClusterLoadAssignment;
}

export interface SimpleFleet {
  listenerPort: number;
  routes: RouteSpec[];
  /** Cluster name → backend port on 127.0.0.1. */
  backends: Record<string, number>;
}

/** One listener `http-<port>` → RDS `http-<port>` → one EDS cluster per backend. */
export function simpleFleet(spec: SimpleFleet): EnvoyResources {
  const name = `http-${spec.listenerPort}`;
  const clusters = Object.keys(spec.backends).sort();
  return {
    listeners: [httpListener(name, spec.listenerPort, name)],
    routes: [routeConfig(name, spec.routes)],
    clusters: clusters.map(edsCluster),
    endpoints: clusters.map((c) => endpoints(c, [{ port: spec.backends[c] }])),
    secrets: [],
  };
}
