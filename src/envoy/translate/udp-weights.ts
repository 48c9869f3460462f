import type { Cluster } from '../../generated/envoy/config/cluster/v3/Cluster';
import type { ClusterModel, L4PortModel, PortModel } from '../../model/fleet';
import { Enum } from './common';
import { CONNECT_TIMEOUT } from './clusters';
import { translateLbEndpoint } from './endpoints';
import { activeBackends } from './routes';

/**
 * Weights for UDPRoutes (docs/gateway-api.md §28). udp_proxy routes a session to one cluster and has
 * no weighted clusters, so a UDP port with several backends gets one more cluster of its own: a
 * STATIC cluster holding every backend's endpoints, one locality per backend whose
 * load_balancing_weight is the backend's weight, with locality-weighted load balancing. Each new
 * session (a new client address and port) picks a locality by weight, then an endpoint in it.
 *
 * The cluster is built from the backends' ClusterModels at translation time, so the endpoint fast
 * path (which re-translates the fleet with new ClusterModels) keeps it current. A backend without
 * ready endpoints has no healthy host, and Envoy leaves its locality out of the choice.
 */

/** Returns the name of a UDP port's weighted cluster; ':' never appears in a Service cluster name. */
export function udpWeightedClusterName(port: PortModel): string {
  return `convoy:udp-weighted:${port.name}`;
}

/** Returns whether a UDP port needs a weighted cluster: more than one backend with weight. */
export function needsUdpWeightedCluster(l4: L4PortModel): boolean {
  return l4.protocol === 'UDP' && activeBackends(l4.backends).length > 1;
}

/**
 * Builds the weighted cluster of a UDP port (needsUdpWeightedCluster), taking each backend's
 * endpoints from `clusters` (the fleet's ClusterModels by name); localities follow the backends'
 * order, which the builder sorts.
 */
export function buildUdpWeightedCluster(
  port: PortModel,
  l4: L4PortModel,
  clusters: ReadonlyMap<string, ClusterModel>,
): Cluster {
  const name = udpWeightedClusterName(port);
  return {
    name,
    type: Enum.DiscoveryType.STATIC,
    connect_timeout: { ...CONNECT_TIMEOUT },
    common_lb_config: { healthy_panic_threshold: { value: 0 }, locality_weighted_lb_config: {} },
    load_assignment: {
      cluster_name: name,
      endpoints: activeBackends(l4.backends).map((b) => ({
        locality: { sub_zone: b.cluster },
        load_balancing_weight: { value: b.weight },
        lb_endpoints: (clusters.get(b.cluster)?.endpoints ?? []).map(translateLbEndpoint),
      })),
    },
  };
}
