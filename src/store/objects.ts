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
  'XListenerSet',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'ReferenceGrant',
  'BackendTLSPolicy',
  'Secret',
  'ConfigMap',
  'Service',
  'EndpointSlice',
  'Namespace',
  'EnvoyFleet',
  'ListenerPortRange',
] as const;
export type WatchedKind = (typeof WATCHED_KINDS)[number];

/** Lists the cluster-scoped kinds: they have no namespace; every other kind defaults to "default". */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(['GatewayClass', 'Namespace']);

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/**
 * The legacy experimental ListenerSet (docs/gateway-api.md §29), read only with
 * `--enable-xlistenerset`.
 */
export const XLISTENERSET_GROUP = 'gateway.networking.x-k8s.io';
export const XLISTENERSET_VERSION = 'v1alpha1';
export const XLISTENERSET_KIND = 'XListenerSet';

/** Convoy's parameters CRD for managed fleets (docs/architecture.md §13). */
export const FLEET_PARAMETERS_GROUP = 'gateway.convoy.dev';
export const FLEET_PARAMETERS_VERSION = 'v1alpha1';
export const FLEET_PARAMETERS_KIND = 'EnvoyFleet';

/** Convoy's port-range policy on a listener (docs/gateway-api.md §30), in the same group and version. */
export const PORT_RANGE_KIND = 'ListenerPortRange';

/** Returns an object's namespace: "" for cluster-scoped kinds, "default" when unset. */
export function objectNamespace(obj: { kind: string; metadata: ObjectMeta }): string {
  if (CLUSTER_SCOPED_KINDS.has(obj.kind)) return '';
  return obj.metadata.namespace ?? 'default';
}

/**
 * Returns `parts` joined by `/` as one flat string, each part converted as a template literal
 * would (`undefined` → "undefined"), so the text is that of `${a}/${b}/…`.
 *
 * Why not the template literal itself: V8 builds `${a}/${b}/${c}` as a tree of concatenated-string
 * nodes (about 136 bytes more per key than the flat string `Array.prototype.join` builds), and a
 * key kept in a map keeps its tree. Convoy keeps several hundred thousand such keys at 5,000
 * ListenerSets (bench/README.md, "Steady RSS, session 18").
 */
export function flatKey(...parts: readonly (string | number)[]): string {
  return parts.map((p) => `${p}`).join('/');
}

/** Returns the store key "Kind/namespace/name" (namespace empty for cluster-scoped kinds). */
export function objectKey(kind: string, namespace: string, name: string): string {
  return [`${kind}`, `${namespace}`, `${name}`].join('/');
}

/**
 * Returns "namespace/name": the key of a namespaced object among objects of one kind (Kubernetes'
 * NamespacedName), e.g. a Service or Secret a route or listener refers to.
 */
export function namespacedName(namespace: string, name: string): string {
  return [`${namespace}`, `${name}`].join('/');
}

/**
 * Returns whether `key` equals namespacedName(namespace, name), without building that string: a
 * walk over every ListenerSet's certificate references per Secret change compares thousands of
 * names, and building each would allocate one string per reference (docs/architecture.md §8).
 */
export function isNamespacedName(key: string, namespace: string, name: string): boolean {
  return (
    key.length === namespace.length + 1 + name.length &&
    key.charCodeAt(namespace.length) === 47 /* '/' */ &&
    key.startsWith(namespace) &&
    key.endsWith(name)
  );
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
