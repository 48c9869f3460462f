/**
 * Object builders for gateway tests: realistic Kubernetes-shaped objects (as the API server would
 * store them, minus CRD defaulting unless a test adds it), a store view, and TLS Secrets whose
 * certificates are generated at test time with openssl (cached per hostname set per process).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObjectStore } from '../../src/store/store';
import type { KubeObject } from '../../src/store/objects';
import type { BuildOptions } from '../../src/gateway/resolved';
import type {
  AllowedListeners,
  BackendRef,
  GRPCRouteRule,
  HTTPRouteRule,
  Listener,
  ParentReference,
  ReferenceGrantFrom,
  ReferenceGrantTo,
  TLSRouteRule,
} from '../../src/gateway/api';

export const CONTROLLER = 'convoy.dev/gateway-controller';
export const NOW = '2026-03-01T12:00:00Z';
export const OPTS: BuildOptions = { controllerName: CONTROLLER, now: NOW };
export const DEFAULT_CREATED = '2026-01-01T00:00:00Z';

/** A store holding the given objects (later objects replace earlier ones with the same key). */
export function storeOf(...objects: KubeObject[]): ObjectStore {
  const store = new ObjectStore();
  for (const o of objects) store.put(o);
  return store;
}

interface Meta {
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

// ---------------------------------------------------------------------------------------------
// Routes

export interface RouteOpts extends Meta {
  parentRefs?: ParentReference[];
  hostnames?: string[];
}

/** parentRef to a Gateway (default) or ListenerSet. */
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

/** A Service with one port plus one EndpointSlice with the given ready addresses. */
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

export function referenceGrant(
  name: string,
  namespace: string,
  from: ReferenceGrantFrom[],
  to: ReferenceGrantTo[],
): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: meta(name, { namespace }),
    spec: { from, to },
  };
}

// ---------------------------------------------------------------------------------------------
// TLS Secrets (certificates generated at test time)

const certCache = new Map<string, { cert: string; key: string }>();

/** A self-signed EC P-256 certificate and key for the given DNS names (cached per process). */
export function selfSignedCert(hostnames: string[]): { cert: string; key: string } {
  const cacheKey = hostnames.join(',');
  const cached = certCache.get(cacheKey);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'convoy-test-cert-'));
  try {
    const keyPath = join(dir, 'tls.key');
    const certPath = join(dir, 'tls.crt');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        '3650',
        '-subj',
        `/CN=${hostnames[0] ?? 'convoy-test'}`,
        ...(hostnames.length
          ? ['-addext', `subjectAltName=${hostnames.map((h) => `DNS:${h}`).join(',')}`]
          : []),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const pair = { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
    certCache.set(cacheKey, pair);
    return pair;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function tlsSecret(name: string, hostnames: string[] = ['example.com'], o: Meta = {}): KubeObject {
  const { cert, key } = selfSignedCert(hostnames);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: meta(name, o),
    data: {
      'tls.crt': Buffer.from(cert).toString('base64'),
      'tls.key': Buffer.from(key).toString('base64'),
    },
  };
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

/** status.parents of a route in a build result (undefined when the build wrote no status). */
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

/** "Type=Status/Reason" summary of conditions, for compact assertions. */
export function condSummary(conditions: { type: string; status: string; reason: string }[]): string[] {
  return conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);
}
