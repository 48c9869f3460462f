import type { ClusterLoadAssignment } from '../../generated/envoy/config/endpoint/v3/ClusterLoadAssignment';
import type { LbEndpoint } from '../../generated/envoy/config/endpoint/v3/LbEndpoint';
import type { ClusterModel, EndpointModel } from '../../model/fleet';
import { Enum, memoByNode } from './common';

/**
 * Translates one endpoint to an LbEndpoint: HEALTHY when ready, else UNHEALTHY.
 *
 * Not-ready endpoints stay in the assignment as UNHEALTHY, so Envoy keeps them out of load balancing
 * (the cluster's panic threshold is 0) but does not churn host sets when readiness flaps.
 */
export function translateLbEndpoint(ep: EndpointModel): LbEndpoint {
  return {
    endpoint: { address: { socket_address: { address: ep.address, port_value: ep.port } } },
    health_status: ep.ready ? Enum.HealthStatus.HEALTHY : Enum.HealthStatus.UNHEALTHY,
  };
}

/**
 * Builds the ClusterLoadAssignment (EDS) of a ClusterModel, for the cluster of the same name.
 *
 * All endpoints go in one locality. A cluster with no endpoints gets an assignment with none: Envoy
 * then answers 503 instead of waiting for EDS while warming. This is the unmemoized form, for callers
 * that rebuild assignments outside the fleet model (an endpoint fast path).
 */
export function buildClusterLoadAssignment(model: ClusterModel): ClusterLoadAssignment {
  const cla: ClusterLoadAssignment = { cluster_name: model.name };
  if (model.endpoints.length) cla.endpoints = [{ lb_endpoints: model.endpoints.map(translateLbEndpoint) }];
  return cla;
}

/**
 * Translates a ClusterModel to its ClusterLoadAssignment, memoized on the node.
 *
 * A node whose endpoints change must therefore be a new object.
 */
export const translateEndpoints = memoByNode(buildClusterLoadAssignment);
