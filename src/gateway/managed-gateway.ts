/**
 * Decides whether a Gateway's fleet is managed (docs/architecture.md §13) and, if so, what Convoy
 * provisions for it: the class's EnvoyFleet parameters with the Gateway's own merged over them,
 * the routability obtained, spec.addresses as the Service can honour them, and the addresses its
 * Service has been given so far.
 */
import * as net from 'node:net';
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type { StoreView } from './resolved';
import type { GatewayStatusAddress } from './api';
import { gatewaySpec } from './api';
import type { FleetParameters } from './fleet-parameters';
import { referencedParameters } from './fleet-parameters';
import { classRoutabilities } from './routability';
import type { ManagedFleetModel } from '../model/managed-fleet';
import { fleetObjectName } from '../model/managed-fleet';
import { Reason } from '../status/conditions';

/** Defaults of a managed fleet's workload (docs/architecture.md §13). */
export const DEFAULT_REPLICAS = 2;
export const DEFAULT_DRAIN_TIMEOUT_SECONDS = 30;

type Problem = { reason: string; message: string };

/** What resolution decided about a Gateway's infrastructure. */
export interface GatewayInfrastructureResult {
  /** Set when the fleet is managed and its parameters are valid. */
  managed?: ManagedFleetModel;
  /** Why the Gateway is not accepted (InvalidParameters, UnsupportedRoutability, UnsupportedAddress). */
  problem?: Problem;
  /** Why an accepted managed Gateway is not programmed (AddressNotUsable). */
  addressProblem?: Problem;
}

/** Merges the Gateway's parameters over its class's: fields the Gateway sets win; maps are replaced. */
export function mergeParameters(base: FleetParameters | undefined, over: FleetParameters): FleetParameters {
  if (!base) return over;
  return {
    ...base,
    ...defined({ managed: over.managed, routability: over.routability }),
    workload: { ...base.workload, ...defined(over.workload) },
    service: { ...base.service, ...defined(over.service) },
    ...(base.accessLog || over.accessLog
      ? { accessLog: { ...base.accessLog, ...defined(over.accessLog ?? {}) } }
      : {}),
    ...(base.tracing || over.tracing ? { tracing: { ...base.tracing, ...defined(over.tracing ?? {}) } } : {}),
    ...(base.local || over.local ? { local: { ...base.local, ...defined(over.local ?? {}) } } : {}),
  };
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Resolves a Gateway's infrastructure: unmanaged (no parameters anywhere, or managed: false), a
 * problem, or the ManagedFleetModel to provision. `classParameters` are the accepted class's.
 * With `managedFleets` 'local' the fleet is local Envoy processes (docs/operations.md §14): the
 * model carries `local`, and spec.addresses are not turned into a Service's.
 */
export function resolveGatewayInfrastructure(
  view: StoreView,
  gw: KubeObject,
  classParameters: FleetParameters | undefined,
  managedFleets: boolean | 'local' = true,
): GatewayInfrastructureResult {
  const spec = gatewaySpec(gw);
  const ns = objectNamespace(gw);
  let params = classParameters;
  const ref = spec.infrastructure?.parametersRef;
  if (ref && !managedFleets) {
    return {
      problem: {
        reason: Reason.InvalidParameters,
        message: `infrastructure.parametersRef ${ref.group || 'core'}/${ref.kind} ${ref.name}: this Convoy does not provision fleets, so it takes no parameters (convoy serve --managed-fleets)`,
      },
    };
  }
  if (ref) {
    const own = referencedParameters(view, ref, ns, 'infrastructure.parametersRef');
    if ('problem' in own) return { problem: { reason: Reason.InvalidParameters, message: own.problem } };
    params = mergeParameters(classParameters, own.parameters);
  }
  if (!params || params.managed === false) return {};
  const routabilities = classRoutabilities(classParameters);
  if ('problem' in routabilities)
    return { problem: { reason: Reason.InvalidParameters, message: routabilities.problem } };
  const asked = params.routability ?? routabilities.shapes[0].name;
  const shape = routabilities.shapes.find((s) => s.name === asked);
  if (!shape) {
    return {
      problem: {
        reason: Reason.UnsupportedRoutability,
        message: `routability ${asked} is not provided by the class (it provides ${routabilities.shapes.map((s) => s.name).join(', ')})`,
      },
    };
  }
  const serviceType = params.service.type ?? shape.serviceTypes[0];
  if (!shape.serviceTypes.includes(serviceType)) {
    return {
      problem: {
        reason: Reason.InvalidParameters,
        message: `service.type ${serviceType} cannot give routability ${asked} (it needs ${shape.serviceTypes.join(' or ')})`,
      },
    };
  }
  const w = params.workload;
  const infra = spec.infrastructure;
  const managed: ManagedFleetModel = {
    gatewayUid: gw.metadata.uid ?? '',
    workload: {
      kind: w.kind ?? 'Deployment',
      replicas: w.replicas ?? DEFAULT_REPLICAS,
      ...(w.image ? { image: w.image } : {}),
      ...(w.resources ? { resources: w.resources } : {}),
      ...(w.nodeSelector ? { nodeSelector: w.nodeSelector } : {}),
      ...(w.tolerations ? { tolerations: w.tolerations } : {}),
      logLevel: w.logLevel ?? 'info',
      drainTimeoutSeconds: w.drainTimeoutSeconds ?? DEFAULT_DRAIN_TIMEOUT_SECONDS,
    },
    service: {
      type: serviceType,
      // The routability's annotations win: parameters cannot turn a Private Gateway public.
      annotations: sortedMap({ ...(params.service.annotations ?? {}), ...shape.annotations }),
      ...(params.service.externalTrafficPolicy && serviceType !== 'ClusterIP'
        ? { externalTrafficPolicy: params.service.externalTrafficPolicy }
        : {}),
    },
    ...(params.accessLog?.format
      ? {
          accessLog: {
            format: params.accessLog.format,
            ...(params.accessLog.path && params.accessLog.format !== 'off'
              ? { path: params.accessLog.path }
              : {}),
          },
        }
      : {}),
    ...(params.tracing?.collector
      ? {
          tracing: {
            collector: params.tracing.collector,
            ...(params.tracing.samplingPercent !== undefined
              ? { samplingPercent: params.tracing.samplingPercent }
              : {}),
          },
        }
      : {}),
    routability: shape.name,
    labels: sortedMap(stringRecord(infra?.labels)),
    annotations: sortedMap(stringRecord(infra?.annotations)),
  };
  if (managedFleets === 'local') {
    const local = defined({
      bindAddress: params.local?.bindAddress,
      logLevel: w.logLevel,
      drainTimeoutSeconds: w.drainTimeoutSeconds,
    });
    return { managed: { ...managed, local } };
  }
  const addresses = staticAddresses(gw, managed);
  if (addresses.problem) return { problem: addresses.problem };
  if (addresses.addressProblem) return { managed, addressProblem: addresses.addressProblem };
  return { managed };
}

/** Address types a managed fleet's Service can take; an empty value of these lets Convoy pick. */
const SERVICE_ADDRESS_TYPES = ['IPAddress', 'Hostname'];

/**
 * Applies spec.addresses (GatewayStaticAddresses, docs/operations.md §22) to the Service: one
 * IPAddress becomes the load balancer's `loadBalancerIP`, or the `clusterIP` of a ClusterIP or
 * NodePort Service. Entries without a value ask Convoy to pick (GatewayAddressEmpty): whatever the
 * Service is given. A type a Service cannot request (Hostname with a value, NamedAddress, any
 * domain-prefixed type) is unsupported (Accepted=False); a second IP, or a value that is not an IP,
 * cannot be assigned (AddressNotUsable), since a Service requests at most one address.
 */
function staticAddresses(gw: KubeObject, managed: ManagedFleetModel): Partial<GatewayInfrastructureResult> {
  const entries = gatewaySpec(gw).addresses ?? [];
  for (const a of entries) {
    const type = a.type || 'IPAddress';
    if (type === 'IPAddress' || (!a.value && SERVICE_ADDRESS_TYPES.includes(type))) continue;
    return {
      problem: {
        reason: Reason.UnsupportedAddress,
        message: `address type ${type}${a.value ? ` (${a.value})` : ''} is not supported by managed fleets: a Service can only request an IPAddress`,
      },
    };
  }
  const ips = [...new Set(entries.map((a) => a.value ?? '').filter((v) => v))];
  if (ips.length === 0) return {};
  const notIp = ips.find((ip) => net.isIP(ip) === 0);
  if (notIp) return { addressProblem: notUsable(`${notIp} is not an IP address`) };
  if (ips.length > 1) {
    return {
      addressProblem: notUsable(
        `a ${managed.service.type} Service requests one address, and ${ips.join(', ')} were asked for; keep one of them`,
      ),
    };
  }
  if (managed.service.type === 'LoadBalancer') managed.service.loadBalancerIP = ips[0];
  else managed.service.clusterIP = ips[0];
  return {};
}

function notUsable(message: string): Problem {
  return { reason: Reason.AddressNotUsable, message };
}

function stringRecord(v: unknown): Record<string, string> {
  if (!v || typeof v !== 'object') return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function sortedMap(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

/** A managed Gateway's status.addresses, and why it is not programmed yet when it has none usable. */
export interface ManagedAddressStatus {
  addresses: GatewayStatusAddress[];
  notProgrammed?: Problem;
}

/**
 * Returns the addresses a managed fleet's Service has been given and whether they serve the
 * Gateway (docs/operations.md §22): a LoadBalancer Service's ingress, else its cluster IP. Until
 * the Service exists, carries the requested address and has an address, the Gateway is
 * AddressNotAssigned (a provider that cannot give a requested IP typically leaves the Service
 * pending); a load balancer that assigned another IP than the one requested is AddressNotUsable.
 */
export function managedAddresses(
  view: StoreView,
  gw: KubeObject,
  managed: ManagedFleetModel,
): ManagedAddressStatus {
  const svc = view.get('Service', objectNamespace(gw), fleetObjectName(gw.metadata.name));
  const lb = managed.service.type === 'LoadBalancer';
  const requested = lb ? managed.service.loadBalancerIP : managed.service.clusterIP;
  if (!svc) return { addresses: [], notProgrammed: notAssigned("the fleet's Service does not exist yet") };
  const spec = (svc.spec ?? {}) as { clusterIP?: unknown; loadBalancerIP?: unknown };
  const values: string[] = [];
  if (lb) {
    const ingress = svc.loadBalancerIngress;
    if (Array.isArray(ingress)) {
      for (const i of ingress as { ip?: unknown; hostname?: unknown }[]) {
        if (typeof i?.ip === 'string' && i.ip) values.push(i.ip);
        else if (typeof i?.hostname === 'string' && i.hostname) values.push(i.hostname);
      }
    }
  } else if (typeof spec.clusterIP === 'string' && spec.clusterIP && spec.clusterIP !== 'None') {
    values.push(spec.clusterIP);
  }
  const addresses = [...new Set(values)].map((value) => ({
    type: IPV4.test(value) || value.includes(':') ? 'IPAddress' : 'Hostname',
    value,
  }));
  const held = lb ? spec.loadBalancerIP : spec.clusterIP;
  if (requested && held !== requested) {
    return {
      addresses: [],
      notProgrammed: notAssigned(`the fleet's Service does not carry the requested address ${requested} yet`),
    };
  }
  if (addresses.length === 0) {
    return {
      addresses,
      notProgrammed: notAssigned(
        requested
          ? `the load balancer has not assigned the requested address ${requested}: a provider that cannot give it leaves the Service pending (see the Service's events)`
          : `the fleet's Service has no ${lb ? 'load-balancer ingress' : 'address'} yet`,
      ),
    };
  }
  if (requested && !values.includes(requested)) {
    return {
      addresses,
      notProgrammed: notUsable(
        `the load balancer assigned ${values.join(', ')}, not the requested address ${requested}: its provider ignores spec.loadBalancerIP or cannot give that address`,
      ),
    };
  }
  return { addresses };
}

function notAssigned(message: string): Problem {
  return { reason: Reason.AddressNotAssigned, message };
}
