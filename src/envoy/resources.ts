import type { Listener } from '../generated/envoy/config/listener/v3/Listener';
import type { RouteConfiguration } from '../generated/envoy/config/route/v3/RouteConfiguration';
import type { Cluster } from '../generated/envoy/config/cluster/v3/Cluster';
import type { ClusterLoadAssignment } from '../generated/envoy/config/endpoint/v3/ClusterLoadAssignment';
import type { Secret } from '../generated/envoy/extensions/transport_sockets/tls/v3/Secret';

/** The xDS resource types Convoy serves, by type URL. */
export const TypeUrl = {
  Listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  Route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  Cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  Endpoint: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  Secret: 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret',
} as const;
export type TypeUrl = (typeof TypeUrl)[keyof typeof TypeUrl];

/** Returns the full protobuf message name of a type URL. */
export function messageNameOf(typeUrl: string): string {
  return typeUrl.slice(typeUrl.indexOf('/') + 1);
}

/**
 * Holds the typed Envoy resources for one fleet, as produced by src/envoy from a FleetModel.
 *
 * Every resource has a unique `name` within its type (`cluster_name` for CLAs).
 */
export interface EnvoyResources {
  listeners: Listener[];
  routes: RouteConfiguration[];
  clusters: Cluster[];
  endpoints: ClusterLoadAssignment[];
  secrets: Secret[];
}
