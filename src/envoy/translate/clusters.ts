import type { Cluster } from '../../generated/envoy/config/cluster/v3/Cluster';
import type { HttpProtocolOptions } from '../../generated/envoy/extensions/upstreams/http/v3/HttpProtocolOptions';
import type { ClusterModel } from '../../model/fleet';
import { Enum, ExtensionNames, ExtensionTypeUrl, adsConfigSource, memoByNode, typed } from './common';
import { parseClusterName } from '../../model/names';
import { upstreamTls } from './upstream-tls';

/** Upstream connect timeout for every cluster. */
export const CONNECT_TIMEOUT = { seconds: 5 } as const;

/**
 * Concurrent retries a cluster allows, as many as its default concurrent requests (1024). Envoy's
 * default of 3 would answer a fourth simultaneous retry with the failed attempt's response, so a
 * route's retry policy (docs/gateway-api.md §19) would hold only while traffic is light.
 */
export const MAX_CONCURRENT_RETRIES = 1024;

/**
 * Translates a ClusterModel to an Envoy Cluster (CDS): an EDS cluster fed over ADS, named like the
 * model (`ns/service/port`, also the EDS service name).
 *
 * Pure in the cluster node, so memoized by it.
 * - lb_policy is left at its default, ROUND_ROBIN.
 * - The panic threshold is 0: Envoy otherwise sends traffic to every endpoint, ready or not, once
 *   fewer than half are healthy, which would route to Pods Kubernetes reports as not ready.
 * - Concurrent retries are limited like concurrent requests (MAX_CONCURRENT_RETRIES).
 * - A Service port a BackendTLSPolicy targets gets a TLS transport socket (upstream-tls.ts).
 * - `http2` (h2c, gRPC) upstreams get HTTP/2 through the v3 HttpProtocolOptions extension;
 *   `http1` and `tcp` need nothing (HTTP/1.1 is the default for HTTP routes, tcp_proxy is raw TCP).
 */
export const translateCluster = memoByNode((model: ClusterModel): Cluster => {
  const cluster: Cluster = model.externalName
    ? externalNameCluster(model, model.externalName)
    : {
        name: model.name,
        type: Enum.DiscoveryType.EDS,
        eds_cluster_config: { eds_config: adsConfigSource(), service_name: model.name },
        connect_timeout: { ...CONNECT_TIMEOUT },
        common_lb_config: { healthy_panic_threshold: { value: 0 } },
      };
  cluster.circuit_breakers = { thresholds: [{ max_retries: { value: MAX_CONCURRENT_RETRIES } }] };
  // A refusing policy's cluster has no endpoints (and no CA to build a context from): it answers 503.
  if (model.tls && !model.tls.refuse)
    cluster.transport_socket = upstreamTls(model.tls, model.protocol === 'http2');
  if (model.protocol === 'http2') {
    cluster.typed_extension_protocol_options = {
      [ExtensionNames.HttpProtocolOptions]: typed<HttpProtocolOptions>(ExtensionTypeUrl.HttpProtocolOptions, {
        explicit_http_config: { http2_protocol_options: {} },
      }),
    };
  }
  return cluster;
});

/**
 * Builds the Cluster of an ExternalName Service: Envoy resolves the DNS name itself (STRICT_DNS) and
 * connects on the Service port, as kube-proxy's CNAME would.
 *
 * The port is the last segment of the cluster name.
 */
function externalNameCluster(model: ClusterModel, host: string): Cluster {
  // Every cluster name comes from clusterName (src/model/names.ts), so the parse succeeds.
  const port = parseClusterName(model.name)?.port ?? 0;
  return {
    name: model.name,
    type: Enum.DiscoveryType.STRICT_DNS,
    dns_lookup_family: Enum.DnsLookupFamily.V4_PREFERRED,
    connect_timeout: { ...CONNECT_TIMEOUT },
    load_assignment: {
      cluster_name: model.name,
      endpoints: [
        {
          lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }],
        },
      ],
    },
  };
}
