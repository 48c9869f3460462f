import * as path from 'node:path';
import { REPO_ROOT } from './cluster';
import type { LocalCluster } from './cluster';
import { BRIDGE_ADDRESS } from './pod-network';

/**
 * Convoy's managed mode in the pod world (docs/architecture.md §13): installs the EnvoyFleet CRD
 * and the provisioner's RBAC from deploy/managed/, and gives the `convoy serve` flags that make
 * Convoy provision each managed Gateway's Envoys with images the pod runner maps to the
 * checkout's Envoy and Convoy (e2e/cluster/images.ts). The fleets dial Convoy's xDS on the
 * bridge address, the one address every pod network namespace reaches.
 */

export const FLEET_NAMESPACE = 'convoy-system';
export const FLEET_ENVOY_IMAGE = 'envoyproxy/envoy:v1.40-latest';
export const FLEET_CONVOY_IMAGE = 'convoy:dev';

/** Applies deploy/managed's CRD and provisioner RBAC, and waits until the CRD is served. */
export async function installManagedMode(cluster: LocalCluster): Promise<void> {
  for (const f of ['00-crd-envoyfleet.yaml', '01-rbac-provisioner.yaml'])
    await cluster.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', 'managed', f)]);
  await cluster.kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/envoyfleets.gateway.convoy.dev',
  ]);
}

/** The `convoy serve` flags of managed mode, for Convoy serving xDS on `xdsPort` of the bridge. */
export function managedFleetArgs(xdsPort: number): string[] {
  return [
    '--managed-fleets',
    '--fleet-xds-address',
    `${BRIDGE_ADDRESS}:${xdsPort}`,
    '--fleet-envoy-image',
    FLEET_ENVOY_IMAGE,
    '--fleet-convoy-image',
    FLEET_CONVOY_IMAGE,
  ];
}

/** An EnvoyFleet whose fleets sit behind a LoadBalancer Service (the load-balancer controller's). */
export function loadBalancedEnvoyFleet(
  name: string,
  workload: { replicas: number; drainTimeout: string },
): Record<string, unknown> {
  return {
    apiVersion: 'gateway.convoy.dev/v1alpha1',
    kind: 'EnvoyFleet',
    metadata: { name, namespace: FLEET_NAMESPACE },
    spec: { workload: { kind: 'Deployment', ...workload }, service: { type: 'LoadBalancer' } },
  };
}

/** The parametersRef a GatewayClass gives to name an EnvoyFleet made by loadBalancedEnvoyFleet. */
export function envoyFleetRef(name: string): Record<string, string> {
  return { group: 'gateway.convoy.dev', kind: 'EnvoyFleet', name, namespace: FLEET_NAMESPACE };
}
