/**
 * Routability (GEP-1651, docs/architecture.md §13): which network a managed Gateway's address is
 * reachable from, carried in EnvoyFleet parameters because upstream has no Gateway field for it.
 * `Public` is a load balancer, `Private` a load balancer with the internal-load-balancer
 * annotations of a provider preset (or the class's own annotations), `Cluster` a ClusterIP, and
 * vendor-prefixed values are whatever the class's table says. A Gateway never gets a wider
 * routability than it asked for: an unsupported request is refused, not widened.
 */
import type { FleetParameters } from './fleet-parameters';
import type { ServiceType } from '../model/managed-fleet';

export const PUBLIC = 'Public';
export const PRIVATE = 'Private';
export const CLUSTER = 'Cluster';

/** Internal-load-balancer annotations per provider preset (spec.privateLoadBalancer.provider). */
export const PRIVATE_LOAD_BALANCER_PRESETS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  AWS: {
    'service.beta.kubernetes.io/aws-load-balancer-internal': 'true',
    'service.beta.kubernetes.io/aws-load-balancer-scheme': 'internal',
  },
  GCP: { 'networking.gke.io/load-balancer-type': 'Internal' },
  Azure: { 'service.beta.kubernetes.io/azure-load-balancer-internal': 'true' },
};

/** What a routability turns into on the fleet's Service. */
export interface RoutabilityShape {
  name: string;
  /** Service types this routability allows; the first is used unless the parameters pick another. */
  serviceTypes: ServiceType[];
  annotations: Record<string, string>;
}

/**
 * Returns the routabilities a class provides (first = default), each with its Service shape, or a
 * problem (InvalidParameters) when its list names one it cannot provide.
 */
export function classRoutabilities(
  params: FleetParameters | undefined,
): { shapes: RoutabilityShape[] } | { problem: string } {
  const privateAnnotations = privateLoadBalancerAnnotations(params);
  const custom = params?.customRoutabilities ?? [];
  const names = params?.routabilities ?? [
    PUBLIC,
    ...(privateAnnotations ? [PRIVATE] : []),
    CLUSTER,
    ...custom.map((c) => c.name),
  ];
  const shapes: RoutabilityShape[] = [];
  for (const name of names) {
    if (shapes.some((s) => s.name === name)) return { problem: `routabilities: ${name} is listed twice` };
    if (name === PUBLIC) shapes.push({ name, serviceTypes: ['LoadBalancer', 'NodePort'], annotations: {} });
    else if (name === CLUSTER) shapes.push({ name, serviceTypes: ['ClusterIP'], annotations: {} });
    else if (name === PRIVATE) {
      if (typeof privateAnnotations === 'string') return { problem: privateAnnotations };
      if (!privateAnnotations)
        return { problem: 'routabilities: Private needs privateLoadBalancer (a provider or annotations)' };
      shapes.push({ name, serviceTypes: ['LoadBalancer'], annotations: privateAnnotations });
    } else {
      const entry = custom.find((c) => c.name === name);
      if (!entry)
        return {
          problem: `routabilities: ${name} is neither Public, Private, Cluster nor in customRoutabilities`,
        };
      shapes.push({ name, serviceTypes: [entry.serviceType], annotations: { ...entry.annotations } });
    }
  }
  return { shapes };
}

/** The Private annotations of a class (preset, then its own on top), a problem, or undefined if none. */
function privateLoadBalancerAnnotations(
  params: FleetParameters | undefined,
): Record<string, string> | string | undefined {
  const plb = params?.privateLoadBalancer;
  if (!plb) return undefined;
  let out: Record<string, string> = {};
  if (plb.provider !== undefined) {
    const preset = PRIVATE_LOAD_BALANCER_PRESETS[plb.provider];
    if (!preset)
      return `privateLoadBalancer.provider: expected one of ${Object.keys(PRIVATE_LOAD_BALANCER_PRESETS).join(', ')}`;
    out = { ...preset };
  }
  Object.assign(out, plb.annotations ?? {});
  return Object.keys(out).length > 0 ? out : undefined;
}
