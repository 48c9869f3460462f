/**
 * Decides whether a Gateway's fleet is managed (docs/architecture.md §13) and, if so, what Convoy
 * provisions for it: the class's EnvoyFleet parameters with the Gateway's own merged over them,
 * the routability obtained, spec.addresses as the Service can honour them, and the addresses its
 * Service has been given so far.
 */
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

/**
 * Applies spec.addresses (GatewayStaticAddresses) to the Service: one IPAddress on a load
 * balancer becomes its loadBalancerIP, IPAddresses on a ClusterIP or NodePort Service its
 * externalIPs. Other address types are unsupported; more than one IP on a load balancer cannot be
 * assigned (AddressNotUsable).
 */
function staticAddresses(gw: KubeObject, managed: ManagedFleetModel): Partial<GatewayInfrastructureResult> {
  const wanted = (gatewaySpec(gw).addresses ?? []).filter((a) => a.value);
  if (wanted.length === 0) return {};
  const other = wanted.find((a) => (a.type || 'IPAddress') !== 'IPAddress');
  if (other) {
    return {
      problem: {
        reason: Reason.UnsupportedAddress,
        message: `address type ${other.type} is not supported by managed fleets (only IPAddress)`,
      },
    };
  }
  const ips = wanted.map((a) => a.value ?? '');
  if (managed.service.type === 'LoadBalancer') {
    if (ips.length > 1) {
      return {
        addressProblem: {
          reason: Reason.AddressNotUsable,
          message: 'a LoadBalancer Service takes one requested IP address; more were asked for',
        },
      };
    }
    managed.service.loadBalancerIP = ips[0];
  } else {
    managed.service.externalIPs = ips;
  }
  return {};
}

function stringRecord(v: unknown): Record<string, string> {
  if (!v || typeof v !== 'object') return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function sortedMap(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

/**
 * Returns the addresses a managed fleet's Service has been given: its load-balancer ingress for a
 * LoadBalancer Service (nothing until the load balancer reports one), else its external IPs and
 * cluster IP. Empty means AddressNotAssigned.
 */
export function managedAddresses(
  view: StoreView,
  gw: KubeObject,
  managed: ManagedFleetModel,
): GatewayStatusAddress[] {
  const svc = view.get('Service', objectNamespace(gw), fleetObjectName(gw.metadata.name));
  if (!svc) return [];
  const values: string[] = [];
  const spec = (svc.spec ?? {}) as { type?: string; clusterIP?: string; externalIPs?: unknown };
  if (managed.service.type === 'LoadBalancer') {
    const ingress = svc.loadBalancerIngress;
    if (Array.isArray(ingress)) {
      for (const i of ingress as { ip?: unknown; hostname?: unknown }[]) {
        if (typeof i?.ip === 'string' && i.ip) values.push(i.ip);
        else if (typeof i?.hostname === 'string' && i.hostname) values.push(i.hostname);
      }
    }
  } else {
    if (Array.isArray(spec.externalIPs))
      for (const ip of spec.externalIPs) if (typeof ip === 'string') values.push(ip);
    if (typeof spec.clusterIP === 'string' && spec.clusterIP && spec.clusterIP !== 'None')
      values.push(spec.clusterIP);
  }
  return [...new Set(values)].map((value) => ({
    type: IPV4.test(value) || value.includes(':') ? 'IPAddress' : 'Hostname',
    value,
  }));
}
