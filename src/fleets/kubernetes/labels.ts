/**
 * Labels and names shared by what the Kubernetes provisioner renders and what it watches
 * (docs/architecture.md §13).
 */
import type { FleetModel } from '../../model/fleet';
import { fleetObjectName } from '../../model/managed-fleet';

/** Field manager of the provisioner's server-side applies. */
export const FIELD_MANAGER = 'convoy';
/** Marks every object the provisioner owns; its watches select on it. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'convoy';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
/** The fleet an object belongs to: the fleet object name (a valid label value by construction). */
export const FLEET_LABEL = 'gateway.convoy.dev/fleet';
/** The upstream label naming a Gateway's generated objects, when the name fits a label value. */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

/** Selector of the provisioner's watches. */
export const OWNED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Labels Convoy sets on a fleet's objects and its pods (the selector is the fleet label). */
export function fleetLabels(model: FleetModel): Record<string, string> {
  const out: Record<string, string> = {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [COMPONENT_LABEL]: 'envoy',
    [FLEET_LABEL]: fleetObjectName(model.gateway.name),
  };
  const name = model.gateway.name;
  if (name.length <= 63 && LABEL_VALUE.test(name)) out[GATEWAY_NAME_LABEL] = name;
  return out;
}

/** Labels of the pods' selector (immutable on Deployments and DaemonSets: never grows). */
export function selectorLabels(model: FleetModel): Record<string, string> {
  return { [FLEET_LABEL]: fleetObjectName(model.gateway.name) };
}
