import type { KubeObject, ObjectMeta, WatchedKind } from '../store/objects';
import {
  FLEET_PARAMETERS_GROUP,
  FLEET_PARAMETERS_KIND,
  FLEET_PARAMETERS_VERSION,
  GATEWAY_GROUP,
  PORT_RANGE_KIND,
  XLISTENERSET_GROUP,
  XLISTENERSET_KIND,
  XLISTENERSET_VERSION,
} from '../store/objects';

/** The only ConfigMap key Convoy reads: a BackendTLSPolicy's CA bundle (docs/gateway-api.md §24). */
const CA_CERTIFICATE_KEY = 'ca.crt';

/** Describes how one watched kind is reached on the API server and trimmed before it enters the store. */
export interface ResourceType {
  kind: WatchedKind;
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
  /** A Gateway API CRD that may not be installed; a 404 on LIST is then a warning, not an error. */
  optional: boolean;
  fieldSelector?: string;
}

/** Returns the apiVersion of a resource: `group/version`, or `version` for the core group. */
export function apiVersionOf(r: Pick<ResourceType, 'group' | 'version'>): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * Returns the collection path of a resource across all namespaces (e.g.
 * /apis/gateway.networking.k8s.io/v1/httproutes), or within `namespace` when given.
 */
export function collectionPath(
  r: Pick<ResourceType, 'group' | 'version' | 'plural'>,
  namespace?: string,
): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return namespace
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`
    : `${base}/${r.plural}`;
}

/** Returns the path of one object (namespace "default" when a namespaced object names none). */
export function objectPath(
  r: Pick<ResourceType, 'group' | 'version' | 'plural' | 'namespaced'>,
  namespace: string | undefined,
  name: string,
): string {
  return `${collectionPath(r, r.namespaced ? namespace || 'default' : undefined)}/${encodeURIComponent(name)}`;
}

const gw = (kind: WatchedKind, plural: string, namespaced = true): ResourceType => ({
  kind,
  group: GATEWAY_GROUP,
  version: 'v1',
  plural,
  namespaced,
  optional: true,
});

/** Lists the resource of every kind in WATCHED_KINDS, in the order the informers start. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  gw('GatewayClass', 'gatewayclasses', false),
  gw('Gateway', 'gateways'),
  gw('ListenerSet', 'listenersets'),
  gw('HTTPRoute', 'httproutes'),
  gw('GRPCRoute', 'grpcroutes'),
  gw('TLSRoute', 'tlsroutes'),
  gw('TCPRoute', 'tcproutes'),
  gw('UDPRoute', 'udproutes'),
  gw('ReferenceGrant', 'referencegrants'),
  gw('BackendTLSPolicy', 'backendtlspolicies'),
  // RBAC cannot restrict Secrets by type; the field selector at least keeps every other Secret
  // (service-account tokens, Helm releases, user data) out of the process entirely.
  {
    kind: 'Secret',
    group: '',
    version: 'v1',
    plural: 'secrets',
    namespaced: true,
    optional: false,
    fieldSelector: 'type=kubernetes.io/tls',
  },
  // ConfigMaps hold CA bundles of BackendTLSPolicies (docs/gateway-api.md §24) and of frontend
  // client certificate validation (§25); only the `ca.crt` key is kept (trimObject).
  { kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps', namespaced: true, optional: false },
  { kind: 'Service', group: '', version: 'v1', plural: 'services', namespaced: true, optional: false },
  {
    kind: 'EndpointSlice',
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    namespaced: true,
    optional: false,
  },
  { kind: 'Namespace', group: '', version: 'v1', plural: 'namespaces', namespaced: false, optional: false },
  // Convoy's parameters CRD (docs/architecture.md §13); optional: unmanaged installs may omit it.
  {
    kind: FLEET_PARAMETERS_KIND,
    group: FLEET_PARAMETERS_GROUP,
    version: FLEET_PARAMETERS_VERSION,
    plural: 'envoyfleets',
    namespaced: true,
    optional: true,
  },
  // Convoy's port-range policy (docs/gateway-api.md §30); optional like EnvoyFleet.
  {
    kind: PORT_RANGE_KIND,
    group: FLEET_PARAMETERS_GROUP,
    version: FLEET_PARAMETERS_VERSION,
    plural: 'listenerportranges',
    namespaced: true,
    optional: true,
  },
];

/**
 * The legacy XListenerSet (docs/gateway-api.md §29): watched only with `--enable-xlistenerset`,
 * so it is not among RESOURCE_TYPES and needs no RBAC otherwise.
 */
export const XLISTENERSET_RESOURCE: ResourceType = {
  kind: XLISTENERSET_KIND,
  group: XLISTENERSET_GROUP,
  version: XLISTENERSET_VERSION,
  plural: 'xlistenersets',
  namespaced: true,
  optional: true,
};

/** Returns the resources to watch: RESOURCE_TYPES, plus XListenerSet when it is enabled. */
export function watchedResources(xListenerSets: boolean): readonly ResourceType[] {
  return xListenerSets ? [...RESOURCE_TYPES, XLISTENERSET_RESOURCE] : RESOURCE_TYPES;
}

/** Returns the resource of a watched kind, or undefined for a kind Convoy does not watch. */
export function resourceForKind(kind: string): ResourceType | undefined {
  if (kind === XLISTENERSET_KIND) return XLISTENERSET_RESOURCE;
  return RESOURCE_TYPES.find((r) => r.kind === kind);
}

/** Annotations Convoy may act on; everything else (last-applied-configuration, …) is dropped. */
const KEPT_ANNOTATION_PREFIXES = ['convoy.dev/', GATEWAY_GROUP + '/'];

const SECRET_KEYS_KEPT = ['tls.crt', 'tls.key'];

/**
 * Reduces an API object to what Convoy reads: metadata without managedFields, ownerReferences,
 * finalizers or foreign annotations; Secrets without any data but the TLS pair; ConfigMaps without any data but `ca.crt`; Services and
 * Namespaces without status.
 *
 * apiVersion and kind are set because LIST items omit them. Gateway API objects keep their status
 * so the status writer can compare against it.
 */
export function trimObject(r: ResourceType, raw: Record<string, unknown>): KubeObject {
  const m = (raw.metadata ?? {}) as Record<string, unknown>;
  const metadata: ObjectMeta = { name: String(m.name ?? '') };
  if (r.namespaced && typeof m.namespace === 'string') metadata.namespace = m.namespace;
  if (typeof m.uid === 'string') metadata.uid = m.uid;
  if (typeof m.generation === 'number') metadata.generation = m.generation;
  if (typeof m.resourceVersion === 'string') metadata.resourceVersion = m.resourceVersion;
  if (typeof m.creationTimestamp === 'string') metadata.creationTimestamp = m.creationTimestamp;
  if (typeof m.deletionTimestamp === 'string') metadata.deletionTimestamp = m.deletionTimestamp;
  if (m.labels && typeof m.labels === 'object') metadata.labels = { ...(m.labels as Record<string, string>) };
  const annotations = m.annotations as Record<string, string> | undefined;
  if (annotations) {
    const kept = Object.entries(annotations).filter(([k]) =>
      KEPT_ANNOTATION_PREFIXES.some((p) => k.startsWith(p)),
    );
    if (kept.length) metadata.annotations = Object.fromEntries(kept);
  }
  const out: KubeObject = { apiVersion: apiVersionOf(r), kind: r.kind, metadata };
  switch (r.kind) {
    case 'Secret': {
      out.type = typeof raw.type === 'string' ? raw.type : undefined;
      const data = (raw.data ?? {}) as Record<string, string>;
      const kept: Record<string, string> = {};
      for (const k of SECRET_KEYS_KEPT) if (typeof data[k] === 'string') kept[k] = data[k];
      out.data = kept;
      break;
    }
    case 'ConfigMap': {
      const data = (raw.data ?? {}) as Record<string, unknown>;
      const ca = data[CA_CERTIFICATE_KEY];
      out.data = typeof ca === 'string' ? { [CA_CERTIFICATE_KEY]: ca } : {};
      break;
    }
    case 'EndpointSlice':
      out.addressType = raw.addressType;
      out.endpoints = raw.endpoints ?? [];
      out.ports = raw.ports ?? [];
      break;
    case 'Namespace':
      break;
    case 'Service': {
      out.spec = raw.spec;
      // Only the load-balancer ingress matters (Gateway status.addresses from the Envoy Service).
      // It is kept outside `status` because the store ignores status when detecting changes.
      const ingress = (raw.status as { loadBalancer?: { ingress?: unknown } } | undefined)?.loadBalancer
        ?.ingress;
      if (Array.isArray(ingress) && ingress.length > 0) out.loadBalancerIngress = ingress;
      break;
    }
    default:
      out.spec = raw.spec;
      if (raw.status !== undefined) out.status = raw.status;
  }
  return out;
}
