/**
 * Defines plain Kubernetes-shaped objects, as both providers put them into the store, and their keys.
 *
 * Nothing here knows Gateway API semantics; it only names what the store holds.
 */

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // Kind-specific payloads stay untyped here; src/gateway/api.ts gives them shape.
  spec?: unknown;
  status?: unknown;
  data?: Record<string, string>;
  type?: string;
  [field: string]: unknown;
}

/** The kinds Convoy watches. The string is the Kubernetes kind. */
export const WATCHED_KINDS = [
  'GatewayClass',
  'Gateway',
  'ListenerSet',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'ReferenceGrant',
  'Secret',
  'ConfigMap',
  'Service',
  'EndpointSlice',
  'Namespace',
  'EnvoyFleet',
] as const;
export type WatchedKind = (typeof WATCHED_KINDS)[number];

/** Lists the cluster-scoped kinds: they have no namespace; every other kind defaults to "default". */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(['GatewayClass', 'Namespace']);

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/** Convoy's parameters CRD for managed fleets (docs/architecture.md §13). */
export const FLEET_PARAMETERS_GROUP = 'gateway.convoy.dev';
export const FLEET_PARAMETERS_VERSION = 'v1alpha1';
export const FLEET_PARAMETERS_KIND = 'EnvoyFleet';

/** Returns an object's namespace: "" for cluster-scoped kinds, "default" when unset. */
export function objectNamespace(obj: { kind: string; metadata: ObjectMeta }): string {
  if (CLUSTER_SCOPED_KINDS.has(obj.kind)) return '';
  return obj.metadata.namespace ?? 'default';
}

/** Returns the store key "Kind/namespace/name" (namespace empty for cluster-scoped kinds). */
export function objectKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/**
 * Returns "namespace/name": the key of a namespaced object among objects of one kind (Kubernetes'
 * NamespacedName), e.g. a Service or Secret a route or listener refers to.
 */
export function namespacedName(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Returns the store key (objectKey) of an object. */
export function keyOf(obj: KubeObject): string {
  return objectKey(obj.kind, objectNamespace(obj), obj.metadata.name);
}

/** Returns "namespace/name", or "name" for cluster-scoped objects, for logs and status output. */
export function displayName(obj: KubeObject): string {
  const ns = objectNamespace(obj);
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
}
