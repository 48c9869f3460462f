/**
 * Object builders for tests: Kubernetes-shaped objects as the API server would store them (with
 * the CRD defaults a test relies on, metadata filled in), a store holding them, and helpers to
 * read statuses back. TLS Secrets hold the committed certificates of ./certs unless a test asks
 * for certificates made for given hostnames.
 */
import { ObjectStore } from '../../src/store/store';
import type { KubeObject } from '../../src/store/objects';
import type { BuildOptions } from '../../src/gateway/resolved';
import type {
  AllowedListeners,
  BackendRef,
  GatewaySpec,
  GRPCRouteRule,
  HTTPRouteRule,
  Listener,
  ParentReference,
  ReferenceGrantSpec,
  TLSRouteRule,
} from '../../src/gateway/api';
import { INTERMEDIATE_CERT, LEAF_CERT, LEAF_KEY, selfSignedCert } from './certs';

export const CONTROLLER = 'convoy.dev/gateway-controller';
export const NOW = '2026-03-01T12:00:00Z';
export const OPTS: BuildOptions = { controllerName: CONTROLLER, now: NOW };
export const DEFAULT_CREATED = '2026-01-01T00:00:00Z';

/** Returns a store holding the given objects (later objects replace earlier ones with the same key). */
export function storeOf(...objects: KubeObject[]): ObjectStore {
  const store = new ObjectStore();
  for (const o of objects) store.put(o);
  return store;
}

/** Metadata a test may set; everything else gets a fixed default. */
export interface Meta {
  namespace?: string;
  generation?: number;
  created?: string;
  labels?: Record<string, string>;
}

function meta(name: string, m: Meta, clusterScoped = false): KubeObject['metadata'] {
  return {
    name,
    ...(clusterScoped ? {} : { namespace: m.namespace ?? 'default' }),
    generation: m.generation ?? 1,
    creationTimestamp: m.created ?? DEFAULT_CREATED,
    uid: `uid-${m.namespace ?? ''}-${name}`,
    ...(m.labels ? { labels: m.labels } : {}),
  };
}

export function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

/** Builds a Namespace with the kubernetes.io/metadata.name label the API server adds. */
export function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
  };
}

export function gatewayClass(name = 'convoy', controllerName = CONTROLLER, m: Meta = {}): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: meta(name, m, true),
    spec: { controllerName },
  };
}

// ---------------------------------------------------------------------------------------------
// Listeners

export function httpListener(
  name: string,
  port = 80,
  hostname?: string,
  extra: Partial<Listener> = {},
): Listener {
  return { name, port, protocol: 'HTTP', ...(hostname ? { hostname } : {}), ...extra };
}

export function httpsListener(
  name: string,
  port: number,
  hostname: string | undefined,
  secretName: string,
  extra: Partial<Listener> = {},
): Listener {
  return {
    name,
    port,
    protocol: 'HTTPS',
    ...(hostname ? { hostname } : {}),
    tls: { mode: 'Terminate', certificateRefs: [{ name: secretName }] },
    ...extra,
  };
}

export function tlsListener(
  name: string,
  port: number,
  hostname: string | undefined,
  mode: 'Passthrough' | 'Terminate',
  secretName?: string,
  extra: Partial<Listener> = {},
): Listener {
  return {
    name,
    port,
    protocol: 'TLS',
    ...(hostname ? { hostname } : {}),
    tls: { mode, ...(secretName ? { certificateRefs: [{ name: secretName }] } : {}) },
    ...extra,
  };
}

export interface GatewayOpts extends Meta {
  className?: string;
  allowedListeners?: AllowedListeners;
  /** More spec fields (addresses, infrastructure, ...), applied last. */
  spec?: Partial<GatewaySpec>;
}

export function gateway(name: string, listeners: Listener[], o: GatewayOpts = {}): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: meta(name, o),
    spec: {
      gatewayClassName: o.className ?? 'convoy',
      listeners,
      ...(o.allowedListeners ? { allowedListeners: o.allowedListeners } : {}),
      ...o.spec,
    },
  };
}

export function listenerSet(
  name: string,
  parent: { name: string; namespace?: string },
  listeners: Listener[],
  o: Meta = {},
): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: meta(name, o),
    spec: { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', ...parent }, listeners },
  };
}

/**
 * A legacy XListenerSet (gateway.networking.x-k8s.io/v1alpha1, docs/gateway-api.md §29); a
 * listener's port may be 0 or left out for the implementation to assign.
 */
export function xListenerSet(
  name: string,
  parent: { name: string; namespace?: string },
  listeners: (Omit<Listener, 'port'> & { port?: number })[],
  o: Meta & { status?: Record<string, unknown> } = {},
): KubeObject {
  return {
    apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
    kind: 'XListenerSet',
    metadata: meta(name, o),
    spec: { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', ...parent }, listeners },
    ...(o.status ? { status: o.status } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Routes

export interface RouteOpts extends Meta {
  parentRefs?: ParentReference[];
  hostnames?: string[];
}

/** Builds a parentRef to a Gateway (default) or ListenerSet. */
export function parentRef(name: string, extra: Partial<ParentReference> = {}): ParentReference {
  return { name, ...extra };
}

export function backendRef(name: string, port: number, extra: Partial<BackendRef> = {}): BackendRef {
  return { name, port, ...extra };
}

function route(kind: string, name: string, spec: Record<string, unknown>, o: RouteOpts): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind,
    metadata: meta(name, o),
    spec: {
      parentRefs: o.parentRefs ?? [parentRef('gw')],
      ...(o.hostnames ? { hostnames: o.hostnames } : {}),
      ...spec,
    },
  };
}

export function httpRoute(name: string, rules: HTTPRouteRule[] | undefined, o: RouteOpts = {}): KubeObject {
  return route('HTTPRoute', name, rules ? { rules } : {}, o);
}

export function grpcRoute(name: string, rules: GRPCRouteRule[], o: RouteOpts = {}): KubeObject {
  return route('GRPCRoute', name, { rules }, o);
}

export function tlsRoute(
  name: string,
  hostnames: string[],
  rules: TLSRouteRule[],
  o: RouteOpts = {},
): KubeObject {
  return route('TLSRoute', name, { rules }, { ...o, hostnames });
}

// ---------------------------------------------------------------------------------------------
// Services and endpoints

export interface ServicePortSpec {
  name?: string;
  port: number;
  targetPort?: number;
  appProtocol?: string;
  protocol?: string;
}

export function service(name: string, ports: ServicePortSpec[], o: Meta = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(name, o),
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.10',
      ports: ports.map((p) => ({ protocol: 'TCP', targetPort: p.port, ...p })),
    },
  };
}

export interface SliceEndpoint {
  addresses: string[];
  ready?: boolean;
}

export function endpointSlice(
  name: string,
  serviceName: string,
  ports: { name?: string; port: number; protocol?: string }[],
  endpoints: SliceEndpoint[],
  o: Meta & { addressType?: string } = {},
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: meta(name, {
      ...o,
      labels: { 'kubernetes.io/service-name': serviceName, ...(o.labels ?? {}) },
    }),
    addressType: o.addressType ?? 'IPv4',
    ports: ports.map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' })),
    endpoints: endpoints.map((e) => ({
      addresses: e.addresses,
      conditions: { ready: e.ready ?? true, serving: e.ready ?? true, terminating: false },
    })),
  };
}

/** Builds a Service with one port plus one EndpointSlice with the given ready addresses. */
export function backendService(
  name: string,
  port: number,
  addresses: string[],
  o: Meta & { targetPort?: number; appProtocol?: string; portName?: string } = {},
): KubeObject[] {
  const portName = o.portName ?? 'http';
  return [
    service(
      name,
      [{ name: portName, port, targetPort: o.targetPort ?? 8080, appProtocol: o.appProtocol }],
      o,
    ),
    endpointSlice(
      `${name}-abc12`,
      name,
      [{ name: portName, port: o.targetPort ?? 8080 }],
      [{ addresses }],
      o,
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// ReferenceGrant

export function referenceGrant(name: string, spec: ReferenceGrantSpec, o: Meta = {}): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: meta(name, o),
    spec,
  };
}

// ---------------------------------------------------------------------------------------------
// BackendTLSPolicy and its CA ConfigMaps (docs/gateway-api.md §24)

export interface BackendTlsPolicyOpts extends Meta {
  sectionName?: string;
  /** ConfigMap names (core group); ignored when `wellKnown` is set. */
  caConfigMaps?: string[];
  /** Raw caCertificateRefs, e.g. with another kind. */
  caRefs?: { group: string; kind: string; name: string }[];
  wellKnown?: string;
  subjectAltNames?: { type: 'Hostname' | 'URI'; hostname?: string; uri?: string }[];
}

export function backendTlsPolicy(
  name: string,
  service: string,
  hostname: string,
  o: BackendTlsPolicyOpts = {},
): KubeObject {
  const validation: Record<string, unknown> = { hostname };
  if (o.wellKnown) validation.wellKnownCACertificates = o.wellKnown;
  else
    validation.caCertificateRefs =
      o.caRefs ?? (o.caConfigMaps ?? ['ca']).map((n) => ({ group: '', kind: 'ConfigMap', name: n }));
  if (o.subjectAltNames) validation.subjectAltNames = o.subjectAltNames;
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'BackendTLSPolicy',
    metadata: meta(name, o),
    spec: {
      targetRefs: [
        {
          group: '',
          kind: 'Service',
          name: service,
          ...(o.sectionName ? { sectionName: o.sectionName } : {}),
        },
      ],
      validation,
    },
  };
}

export function caConfigMap(name: string, caPem: string, o: Meta = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name, o), data: { 'ca.crt': caPem } };
}

// ---------------------------------------------------------------------------------------------
// TLS Secrets

export interface TlsSecretOpts extends Meta {
  /** PEM certificate chain; default LEAF_CERT + INTERMEDIATE_CERT (or one made for `hostnames`). */
  cert?: string;
  /** PEM private key; default LEAF_KEY (or the key made for `hostnames`). */
  key?: string;
  /** A certificate made at test time for these DNS names (distinct bytes per name set). */
  hostnames?: string[];
  /** Secret type; default kubernetes.io/tls. */
  type?: string;
}

export function tlsSecret(name: string, o: TlsSecretOpts = {}): KubeObject {
  const made = o.hostnames ? selfSignedCert(o.hostnames) : undefined;
  const cert = o.cert ?? made?.cert ?? LEAF_CERT + INTERMEDIATE_CERT;
  const key = o.key ?? made?.key ?? LEAF_KEY;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: o.type ?? 'kubernetes.io/tls',
    metadata: meta(name, o),
    data: { 'tls.crt': b64(cert), 'tls.key': b64(key) },
  };
}

/** A ConfigMap holding `data` (e.g. a CA bundle under `ca.crt`). */
export function configMap(name: string, data: Record<string, string>, o: Meta = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name, o), data: { ...data } };
}

// ---------------------------------------------------------------------------------------------
// Status helpers

export interface RouteParentView {
  parentRef: ParentReference;
  controllerName: string;
  conditions: {
    type: string;
    status: string;
    reason: string;
    message: string;
    observedGeneration?: number;
  }[];
}

/** Returns status.parents of a route in a build result (undefined when the build wrote no status). */
export function routeParents(
  statuses: {
    kind: string;
    metadata: { namespace?: string; name: string };
    status: Record<string, unknown>;
  }[],
  kind: string,
  name: string,
  ns = 'default',
): RouteParentView[] | undefined {
  const s = statuses.find(
    (x) => x.kind === kind && x.metadata.name === name && (x.metadata.namespace ?? '') === ns,
  );
  return s ? (s.status.parents as RouteParentView[]) : undefined;
}

/** Returns a "Type=Status/Reason" summary of conditions, for compact assertions. */
export function condSummary(
  conditions: readonly { type: string; status: string; reason: string }[] | undefined,
): string[] {
  return (conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
}

// ---------------------------------------------------------------------------------------------
// Managed fleets

/** An EnvoyFleet (Convoy's parameters CRD, docs/architecture.md §13). */
export function envoyFleet(name: string, spec: Record<string, unknown>, o: Meta = {}): KubeObject {
  return { apiVersion: 'gateway.convoy.dev/v1alpha1', kind: 'EnvoyFleet', metadata: meta(name, o), spec };
}

/** A reference to an EnvoyFleet, for GatewayClass.spec.parametersRef (with namespace) or a Gateway's. */
export function fleetRef(
  name: string,
  namespace?: string,
): { group: string; kind: string; name: string; namespace?: string } {
  return { group: 'gateway.convoy.dev', kind: 'EnvoyFleet', name, ...(namespace ? { namespace } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Port ranges

/** A ListenerPortRange (docs/gateway-api.md §30) extending listener `section` of a Gateway (or ListenerSet) to `endPort`. */
export function portRange(
  name: string,
  target: { name: string; section: string; kind?: 'Gateway' | 'ListenerSet' },
  endPort: number,
  o: Meta = {},
): KubeObject {
  return {
    apiVersion: 'gateway.convoy.dev/v1alpha1',
    kind: 'ListenerPortRange',
    metadata: meta(name, o),
    spec: {
      targetRef: {
        group: 'gateway.networking.k8s.io',
        kind: target.kind ?? 'Gateway',
        name: target.name,
        sectionName: target.section,
      },
      endPort,
    },
  };
}
