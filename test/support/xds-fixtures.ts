import type { AnyExtension } from '@grpc/proto-loader';
import type { EnvoyResources } from '../../src/envoy/resources';
import type { Listener } from '../../src/generated/envoy/config/listener/v3/Listener';
import type { RouteConfiguration } from '../../src/generated/envoy/config/route/v3/RouteConfiguration';
import type { Cluster } from '../../src/generated/envoy/config/cluster/v3/Cluster';
import type { ClusterLoadAssignment } from '../../src/generated/envoy/config/endpoint/v3/ClusterLoadAssignment';
import type { Secret } from '../../src/generated/envoy/extensions/transport_sockets/tls/v3/Secret';

/** Hand-built Envoy resources for xDS tests. */

// Enums as numbers: encodeMessage() verifies with protobufjs, which wants numeric enums.
const ADS = { ads: {}, resource_api_version: 2 as const };

function any(type: string, msg: object): AnyExtension {
  return { '@type': `type.googleapis.com/${type}`, ...msg } as AnyExtension;
}

export function secret(name: string, cert = 'CERT-' + name): Secret {
  return {
    name,
    tls_certificate: {
      certificate_chain: {
        inline_string: `-----BEGIN CERTIFICATE-----\n${cert}\n-----END CERTIFICATE-----\n`,
      },
      private_key: { inline_string: `-----BEGIN PRIVATE KEY-----\nKEY-${name}\n-----END PRIVATE KEY-----\n` },
    },
  };
}

export function edsCluster(
  name: string,
  opts: { serviceName?: string; tlsSecret?: string; timeoutSec?: number } = {},
): Cluster {
  return {
    name,
    type: 3, // EDS
    connect_timeout: { seconds: opts.timeoutSec ?? 1 },
    eds_cluster_config: { eds_config: ADS, ...(opts.serviceName && { service_name: opts.serviceName }) },
    ...(opts.tlsSecret && {
      transport_socket: {
        name: 'envoy.transport_sockets.tls',
        typed_config: any('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', {
          common_tls_context: {
            tls_certificate_sds_secret_configs: [{ name: opts.tlsSecret, sds_config: ADS }],
          },
        }),
      },
    }),
  };
}

export function cla(name: string, ports: number[] = [8080], address = '127.0.0.1'): ClusterLoadAssignment {
  return {
    cluster_name: name,
    endpoints: [
      {
        lb_endpoints: ports.map((port) => ({
          endpoint: { address: { socket_address: { address, port_value: port } } },
        })),
      },
    ],
  };
}

export function httpListener(
  name: string,
  port: number,
  routeName: string,
  opts: { tlsSecret?: string; statPrefix?: string } = {},
): Listener {
  return {
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: port } },
    filter_chains: [
      {
        name: `Gateway/default/gw/${name}`,
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: any(
              'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              {
                stat_prefix: opts.statPrefix ?? name,
                rds: { route_config_name: routeName, config_source: ADS },
                http_filters: [
                  {
                    name: 'envoy.filters.http.router',
                    typed_config: any('envoy.extensions.filters.http.router.v3.Router', {}),
                  },
                ],
              },
            ),
          },
        ],
        ...(opts.tlsSecret && {
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: any('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', {
              common_tls_context: {
                tls_certificate_sds_secret_configs: [{ name: opts.tlsSecret, sds_config: ADS }],
              },
            }),
          },
        }),
      },
    ],
  };
}

export interface RouteSpec {
  prefix: string;
  cluster?: string;
  weighted?: { name: string; weight: number }[];
  mirror?: string;
}

export function routeConfig(
  name: string,
  routes: RouteSpec[],
  domains: string[] = ['*'],
): RouteConfiguration {
  return {
    name,
    virtual_hosts: [
      {
        name: `${name}/vh`,
        domains,
        routes: routes.map((r) => ({
          match: { prefix: r.prefix },
          route: {
            ...(r.cluster && { cluster: r.cluster }),
            ...(r.weighted && {
              weighted_clusters: {
                clusters: r.weighted.map((w) => ({ name: w.name, weight: { value: w.weight } })),
              },
            }),
            ...(r.mirror && { request_mirror_policies: [{ cluster: r.mirror }] }),
          },
        })),
      },
    ],
  };
}

export interface FleetSpec {
  /** Cluster names (each gets an EDS cluster and a CLA). Default ['default/app/80']. */
  clusters?: string[];
  /** Endpoint port per cluster (default 8080). */
  ports?: Record<string, number>;
  /** Extra path prefix for the HTTP route, to change the route content. */
  routePrefix?: string;
  /** Cluster the routes point at (default the first cluster). */
  routeTo?: string;
  /** Certificate content of the TLS secret (changing it rotates the secret). */
  cert?: string;
  /** Include the HTTPS listener, its route and the secret (default true). */
  https?: boolean;
  /** Per-cluster connect timeout (changes the cluster content). */
  clusterTimeout?: Record<string, number>;
  /** stat_prefix of the HTTP listener's HCM (changes the listener content). */
  httpStatPrefix?: string;
  /** More HTTP listeners `http-<port>`, each with its own route `http-<port>`. */
  extraHttpPorts?: number[];
}

/**
 * Builds the resources of a small fleet: listener http-8080 → route http-8080 → cluster(s) → CLA(s),
 * and listener https-8443 (TLS from secret default/cert) → route https-8443.
 */
export function fleetResources(spec: FleetSpec = {}): EnvoyResources {
  const clusters = spec.clusters ?? ['default/app/80'];
  const target = spec.routeTo ?? clusters[0];
  const https = spec.https !== false;
  return {
    secrets: https ? [secret('default/cert', spec.cert)] : [],
    clusters: clusters.map((c) => edsCluster(c, { timeoutSec: spec.clusterTimeout?.[c] })),
    endpoints: clusters.map((c) => cla(c, [spec.ports?.[c] ?? 8080])),
    listeners: [
      httpListener('http-8080', 8080, 'http-8080', { statPrefix: spec.httpStatPrefix }),
      ...(https ? [httpListener('https-8443', 8443, 'https-8443', { tlsSecret: 'default/cert' })] : []),
      ...(spec.extraHttpPorts ?? []).map((p) => httpListener(`http-${p}`, p, `http-${p}`)),
    ],
    routes: [
      routeConfig('http-8080', [{ prefix: spec.routePrefix ?? '/', cluster: target }]),
      ...(https ? [routeConfig('https-8443', [{ prefix: '/', cluster: target }])] : []),
      ...(spec.extraHttpPorts ?? []).map((p) => routeConfig(`http-${p}`, [{ prefix: '/', cluster: target }])),
    ],
  };
}
