/**
 * The managed part of a fleet model (docs/architecture.md §13): what Convoy provisions for a Gateway
 * whose class or own infrastructure names EnvoyFleet parameters, already merged and checked. Plain
 * data, like the rest of the fleet model; the Kubernetes provisioner renders it into objects.
 */
import { createHash } from 'node:crypto';

export { FLEET_PARAMETERS_GROUP, FLEET_PARAMETERS_KIND, FLEET_PARAMETERS_VERSION } from '../store/objects';

export type WorkloadKind = 'Deployment' | 'DaemonSet';
export type ServiceType = 'LoadBalancer' | 'NodePort' | 'ClusterIP';
export type EnvoyLogLevel = 'trace' | 'debug' | 'info' | 'warning' | 'error' | 'critical' | 'off';

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/** Merged, checked parameters of one managed fleet. */
export interface ManagedFleetModel {
  /** The Gateway's uid, for ownerReferences (a fleet is deleted with its Gateway). */
  gatewayUid: string;
  workload: {
    kind: WorkloadKind;
    /** Deployment only. */
    replicas: number;
    /** Envoy image; undefined = the provisioner's default. */
    image?: string;
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    logLevel: EnvoyLogLevel;
    drainTimeoutSeconds: number;
  };
  service: {
    type: ServiceType;
    annotations: Record<string, string>;
    externalTrafficPolicy?: 'Cluster' | 'Local';
    /** The IP spec.addresses requests of a load balancer (docs/operations.md §22). */
    loadBalancerIP?: string;
    /** The IP spec.addresses requests as a ClusterIP or NodePort Service's cluster IP (set on create). */
    clusterIP?: string;
  };
  /** How its Envoys log requests; absent: Convoy's default for unmanaged fleets (--access-log). */
  accessLog?: { format: 'off' | 'json' | 'text'; path?: string };
  /** Where its Envoys send OpenTelemetry spans; absent: the --tracing default. */
  tracing?: { collector: { host: string; port: number }; samplingPercent?: number };
  /**
   * Set when the fleet's Envoys are local processes of `convoy serve --from-dir` rather than
   * Kubernetes objects (docs/operations.md §14): no Service, ports bound as they are. It holds
   * what the parameters set (each unset one is the flag's): the address listeners bind, Envoy's
   * log level and drain timeout.
   */
  local?: { bindAddress?: string; logLevel?: EnvoyLogLevel; drainTimeoutSeconds?: number };
  /** The routability obtained (never wider than asked). */
  routability: string;
  /** spec.infrastructure.labels and annotations, propagated to every generated object. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Lowest port a non-root Envoy binds for a listener port below 1024: port + this offset. */
export const UNPRIVILEGED_PORT_OFFSET = 10_000;

/**
 * Returns the port each listener port is bound at inside a managed Envoy: itself from 1024 up,
 * else port + 10000 (80 → 10080, 443 → 10443). When that port is itself a listener port (or taken
 * by an earlier mapping) the next free one above it is used, so the mapping is a deterministic
 * function of the set of ports.
 */
export function unprivilegedBindPorts(ports: readonly number[]): Map<number, number> {
  const taken = new Set(ports.filter((p) => p >= 1024));
  const out = new Map<number, number>();
  for (const port of [...ports].sort((a, b) => a - b)) {
    if (port >= 1024) {
      out.set(port, port);
      continue;
    }
    let bind = port + UNPRIVILEGED_PORT_OFFSET;
    while (taken.has(bind)) bind++;
    taken.add(bind);
    out.set(port, bind);
  }
  return out;
}

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Returns the name of every Kubernetes object of a Gateway's managed fleet (they live in the
 * Gateway's namespace): `convoy-<gateway>`, or, when that is not a DNS-1035 label of at most 63
 * characters (Service names must be), a shortened form with a hash of the full name.
 */
export function fleetObjectName(gatewayName: string): string {
  const plain = `convoy-${gatewayName}`;
  if (plain.length <= 63 && DNS_LABEL.test(plain)) return plain;
  const hash = createHash('sha256').update(gatewayName).digest('hex').slice(0, 8);
  const stem = `convoy-${gatewayName}`
    .replace(/[^-a-z0-9]/g, '-')
    .slice(0, 54)
    .replace(/-+$/, '');
  return `${stem}-${hash}`;
}
