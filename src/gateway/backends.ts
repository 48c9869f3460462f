/**
 * Resolves a route's backendRef to a Service port and turns Service ports into ClusterModels fed by
 * EndpointSlices.
 *
 * Cluster names are `ns/service/port` (the Service port number). They never depend on the route or
 * rule that uses them, so two routes sharing a Service share one cluster, and an endpoint-only
 * change can rebuild clusters alone with buildClusters(view, refs).
 */
import type { StoreView } from './resolved';
import type { ClusterModel, EndpointModel } from '../model/fleet';
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import { CORE_GROUP, normalizeGroup } from './api';
import type { BackendObjectReference } from './api';
import { isReferenceAllowed } from './referencegrants';
import { Reason } from '../status/conditions';
import { compareStrings } from '../util/compare';
import { clusterName, parseClusterName } from '../model/names';
import { namespacedName } from '../store/objects';
import { endpointRefusal } from './endpoint-guard';
import type { EndpointPolicy, EndpointRefusals } from './endpoint-guard';
import type { BackendTlsIndex } from './backend-tls';
import type { UpstreamTlsModel } from '../model/fleet';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const H2C_APP_PROTOCOL = 'kubernetes.io/h2c';

/** appProtocols that need TLS towards the backend: usable only with a BackendTLSPolicy (§24). */
const TLS_APP_PROTOCOLS: ReadonlySet<string> = new Set(['https', 'HTTPS', 'kubernetes.io/wss', 'tls']);

export type ClusterProtocol = ClusterModel['protocol'];
/** Which route kind refers to a backend; decides the default upstream protocol. */
export type BackendUse = 'http' | 'grpc' | 'tcp' | 'udp';

/** A reference to one Service port, as a cluster. */
export interface ClusterRef {
  name: string;
  namespace: string;
  service: string;
  port: number;
  protocol: ClusterProtocol;
  /** Set for ExternalName Services: the DNS name to resolve. */
  externalName?: string;
}

/** Operator policy for backends (see BuildOptions.externalNameServices and .endpoints). */
export interface BackendPolicy {
  externalNameServices?: boolean;
  /** Which endpoint addresses are allowed (endpoint-guard.ts); unset refuses every host-local one. */
  endpoints?: EndpointPolicy;
  /** The refused endpoints of the build's EndpointSlices, under `endpoints`. */
  refusedEndpoints?: EndpointRefusals;
  /** The build's BackendTLSPolicies (docs/gateway-api.md §24). */
  backendTls?: BackendTlsIndex;
}

export type BackendResolution =
  { ok: true; cluster: ClusterRef } | { ok: false; reason: string; message: string };

/** The route kind and namespace a backendRef is written in (the "from" of a ReferenceGrant). */
export interface BackendReferrer {
  kind: 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute' | 'TCPRoute' | 'UDPRoute';
  namespace: string;
}

interface ServicePort {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
}

interface ServiceSpec {
  type?: string;
  externalName?: string;
  ports?: ServicePort[];
}

interface EndpointSliceLike {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean | null } }[];
  ports?: { name?: string | null; port?: number | null; protocol?: string }[];
}

/** Returns the ports of a Service's spec (none when it has no spec). */
function servicePorts(svc: KubeObject): ServicePort[] {
  const spec = svc.spec as ServiceSpec | undefined;
  return Array.isArray(spec?.ports) ? spec.ports : [];
}

/**
 * Returns the Service port with number `port` and transport UDP (`udp`) or TCP (otherwise; SCTP ports
 * are never used): a Service may use one number for both, e.g. DNS on 53.
 */
function servicePortOf(svc: KubeObject, port: number, udp: boolean): ServicePort | undefined {
  return servicePorts(svc).find(
    (p) => p.port === port && ((p.protocol ?? 'TCP') === 'UDP') === udp && p.protocol !== 'SCTP',
  );
}

/**
 * Resolves one backendRef to a ClusterRef, or to the reason and message it cannot be used.
 *
 * Checks, in order: group/kind (InvalidKind), cross-namespace permission (RefNotPermitted, checked
 * before existence so a missing grant reveals nothing), the Service and its port (BackendNotFound),
 * endpoints the endpoint guard refuses (BackendNotFound, like a disabled ExternalName), and for
 * HTTP/gRPC an appProtocol Convoy can speak (UnsupportedProtocol).
 */
export function resolveBackendRef(
  view: StoreView,
  from: BackendReferrer,
  ref: BackendObjectReference,
  use: BackendUse,
  policy: BackendPolicy = {},
): BackendResolution {
  if (!ref || typeof ref !== 'object') {
    return { ok: false, reason: Reason.BackendNotFound, message: 'backendRef is not an object' };
  }
  const group = normalizeGroup(ref.group);
  const kind = ref.kind ?? 'Service';
  if (group !== CORE_GROUP || kind !== 'Service') {
    return {
      ok: false,
      reason: Reason.InvalidKind,
      message: `backendRef ${describeRef(ref)}: unsupported kind ${group ? `${group}/` : ''}${kind} (only core Service)`,
    };
  }
  const namespace = ref.namespace || from.namespace;
  if (typeof ref.name !== 'string' || ref.name === '') {
    return { ok: false, reason: Reason.BackendNotFound, message: 'backendRef without a name' };
  }
  if (namespace !== from.namespace) {
    const allowed = isReferenceAllowed(
      view,
      { group: 'gateway.networking.k8s.io', kind: from.kind, namespace: from.namespace },
      { group: CORE_GROUP, kind: 'Service', namespace, name: ref.name },
    );
    if (!allowed) {
      return {
        ok: false,
        reason: Reason.RefNotPermitted,
        message: `backendRef to Service ${namespace}/${ref.name} is not permitted by any ReferenceGrant`,
      };
    }
  }
  if (typeof ref.port !== 'number') {
    return {
      ok: false,
      reason: Reason.BackendNotFound,
      message: `backendRef to Service ${namespace}/${ref.name} must specify a port`,
    };
  }
  const svc = view.get('Service', namespace, ref.name);
  if (!svc) {
    return {
      ok: false,
      reason: Reason.BackendNotFound,
      message: `Service ${namespace}/${ref.name} not found`,
    };
  }
  const spec = (svc.spec ?? {}) as ServiceSpec;
  const externalName = spec.type === 'ExternalName' ? spec.externalName : undefined;
  if (spec.type === 'ExternalName' && (!policy.externalNameServices || !externalName)) {
    return {
      ok: false,
      reason: Reason.BackendNotFound,
      message: externalName
        ? `Service ${namespace}/${ref.name} is an ExternalName Service; they are disabled (convoy serve --enable-external-name-services)`
        : `Service ${namespace}/${ref.name} is an ExternalName Service without spec.externalName`,
    };
  }
  const sp = servicePortOf(svc, ref.port, use === 'udp');
  if (!sp) {
    return {
      ok: false,
      reason: Reason.BackendNotFound,
      message: `Service ${namespace}/${ref.name} has no ${use === 'udp' ? 'UDP' : 'TCP'} port ${ref.port}`,
    };
  }
  const refusal = externalName
    ? endpointRefusal(hostOfExternalName(externalName), ref.port, policy.endpoints ?? {})
    : policy.refusedEndpoints?.byService
        .get(namespacedName(namespace, ref.name))
        ?.find((r) => r.portName === (sp.name ?? ''))?.reason;
  if (refusal) {
    return {
      ok: false,
      reason: Reason.BackendNotFound,
      message: `Service ${namespace}/${ref.name} port ${ref.port} is refused: ${refusal}`,
    };
  }
  if (
    use !== 'tcp' &&
    use !== 'udp' &&
    sp.appProtocol &&
    TLS_APP_PROTOCOLS.has(sp.appProtocol) &&
    !policy.backendTls?.forPort(namespace, ref.name, sp.name ?? '')
  ) {
    return {
      ok: false,
      reason: Reason.UnsupportedProtocol,
      message: `Service ${namespace}/${ref.name} port ${ref.port} has appProtocol ${sp.appProtocol} but no BackendTLSPolicy targets it`,
    };
  }
  return {
    ok: true,
    cluster: {
      name: clusterName(namespace, ref.name, ref.port, use === 'udp'),
      namespace,
      service: ref.name,
      port: ref.port,
      protocol: protocolFor(use, sp.appProtocol),
      ...(externalName ? { externalName } : {}),
    },
  };
}

/** Returns the host an ExternalName names; `localhost` is loopback by definition (RFC 6761). */
function hostOfExternalName(name: string): string {
  const host = name.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' ? '127.0.0.1' : host;
}

/** Returns the upstream protocol of a cluster: tcp for TCP routes, http2 for gRPC or h2c, else http1. */
function protocolFor(use: BackendUse, appProtocol: string | undefined): ClusterProtocol {
  if (use === 'tcp' || use === 'udp') return use;
  if (use === 'grpc' || appProtocol === H2C_APP_PROTOCOL) return 'http2';
  return 'http1';
}

/** Returns a backendRef as `namespace/name` (or `name`) for condition messages. */
function describeRef(ref: BackendObjectReference): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : String(ref.name);
}

const PROTOCOL_RANK: Record<ClusterProtocol, number> = { udp: 0, tcp: 0, http1: 1, http2: 2 };

/**
 * Returns whether one more reference asking for `protocol` leaves a cluster built with `built` as
 * it is: buildClusters keeps the strongest protocol of a cluster's references.
 */
export function protocolKept(built: ClusterProtocol, protocol: ClusterProtocol): boolean {
  return built === protocol || PROTOCOL_RANK[protocol] < PROTOCOL_RANK[built];
}

/**
 * Builds one ClusterModel per distinct cluster name, sorted by name.
 *
 * When several users of one Service port need different protocols, the strongest wins
 * (http2 > http1 > tcp): tcp_proxy ignores HTTP protocol options, and an h2 upstream serves HTTP/1
 * routes too. With a memo, models are kept between calls with the same `scope` (e.g. the fleet)
 * while their Service and EndpointSlices are the same objects.
 */
export function buildClusters(
  view: StoreView,
  refs: Iterable<ClusterRef>,
  memo?: ClusterModelMemo,
  scope = '',
  tls?: UpstreamTlsSource,
): ClusterModel[] {
  const byName = new Map<string, ClusterRef>();
  for (const ref of refs) {
    const prev = byName.get(ref.name);
    if (!prev || PROTOCOL_RANK[ref.protocol] > PROTOCOL_RANK[prev.protocol]) byName.set(ref.name, ref);
  }
  const slices = new EndpointSliceIndex(view);
  const previous = memo?.last(scope);
  const next = new Map<string, ClusterEntry>();
  const out = [...byName.values()]
    .sort((a, b) => compareStrings(a.name, b.name))
    .map((ref) => {
      if (ref.externalName) {
        const svc = view.get('Service', ref.namespace, ref.service);
        const upstream = tls && svc ? upstreamTlsOf(tls, svc, ref) : undefined;
        // A refusing policy leaves the cluster without endpoints, like any other (EDS, none sent).
        if (upstream?.refuse) return { name: ref.name, protocol: ref.protocol, endpoints: [], tls: upstream };
        return {
          name: ref.name,
          protocol: ref.protocol,
          endpoints: [],
          externalName: ref.externalName,
          ...(upstream ? { tls: upstream } : {}),
        };
      }
      // The same Service and EndpointSlice objects as last build: the same ClusterModel (and its
      // identity, which translation and encoding are memoized on).
      const service = view.get('Service', ref.namespace, ref.service);
      const sliceList = slices.slices(ref.namespace, ref.service);
      const upstreamTls = tls && service ? upstreamTlsOf(tls, service, ref) : undefined;
      const tlsKey = upstreamTls ? JSON.stringify(upstreamTls) : '';
      const prev = previous?.get(ref.name);
      const memo =
        prev &&
        prev.model.protocol === ref.protocol &&
        prev.port === ref.port &&
        prev.service === service &&
        prev.tlsKey === tlsKey &&
        sameItems(prev.slices, sliceList)
          ? prev
          : {
              port: ref.port,
              service,
              slices: sliceList,
              tlsKey,
              model: {
                name: ref.name,
                protocol: ref.protocol,
                // A policy without a usable CA refuses connections: no endpoint, Envoy answers 503.
                endpoints: upstreamTls?.refuse
                  ? []
                  : serviceEndpoints(
                      view,
                      ref.namespace,
                      ref.service,
                      ref.port,
                      slices,
                      ref.protocol === 'udp',
                    ),
                ...(upstreamTls ? { tls: upstreamTls } : {}),
              },
            };
      next.set(ref.name, memo);
      return memo.model;
    });
  memo?.remember(scope, next);
  return out;
}

/** Where a fleet's clusters take TLS from: the build's policies and the Gateway's client certificate. */
export interface UpstreamTlsSource {
  index: BackendTlsIndex;
  /** SDS name of the Gateway's valid backend client certificate. */
  clientCertificate?: string;
}

/**
 * Returns the TLS of one Service port's cluster: its winning BackendTLSPolicy, if any. TLSRoute
 * (`tcp`) clusters never get one: a passthrough backend must receive the client's own TLS bytes.
 */
function upstreamTlsOf(
  src: UpstreamTlsSource,
  service: KubeObject,
  ref: ClusterRef,
): UpstreamTlsModel | undefined {
  if (ref.protocol === 'tcp') return undefined;
  const portName = servicePorts(service).find((p) => p.port === ref.port)?.name ?? '';
  const policy = src.index.forPort(ref.namespace, ref.service, portName);
  if (!policy) return undefined;
  return src.clientCertificate
    ? { ...policy.tls, clientCertificate: src.clientCertificate }
    : { ...policy.tls };
}

interface ClusterEntry {
  tlsKey: string;
  port: number;
  service: KubeObject | undefined;
  slices: readonly KubeObject[];
  model: ClusterModel;
}

/**
 * Remembers the ClusterModels of the last buildClusters call per scope (the fleet), with the Service
 * and EndpointSlice objects each was built from.
 *
 * An entry is reused only while those are the very same objects of the current view, so one memo
 * serves any view.
 */
export class ClusterModelMemo {
  private readonly byScope = new Map<string, ReadonlyMap<string, ClusterEntry>>();

  /** Returns the clusters the last call for `scope` built, by name. */
  last(scope: string): ReadonlyMap<string, ClusterEntry> | undefined {
    return this.byScope.get(scope);
  }

  /** Records the clusters a call for `scope` built, replacing the previous ones. */
  remember(scope: string, clusters: ReadonlyMap<string, ClusterEntry>): void {
    this.byScope.set(scope, clusters);
  }
}

/** Returns whether two arrays hold the same items (by identity) in the same order. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Indexes a view's EndpointSlices by `namespace/service`.
 *
 * Built once per build, so each cluster costs O(its slices) instead of a scan of every slice.
 */
export class EndpointSliceIndex {
  private readonly byService = new Map<string, KubeObject[]>();

  constructor(view: StoreView) {
    for (const slice of view.list('EndpointSlice')) {
      const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
      if (!service) continue;
      const key = namespacedName(objectNamespace(slice), service);
      const list = this.byService.get(key);
      if (list) list.push(slice);
      else this.byService.set(key, [slice]);
    }
  }

  /** Returns the EndpointSlices labelled with Service `namespace/service`. */
  slices(namespace: string, service: string): readonly KubeObject[] {
    return this.byService.get(`${namespace}/${service}`) ?? [];
  }
}

/**
 * Returns existing clusters with their endpoints recomputed from the view (e.g. a fleet's clusters
 * after an EndpointSlice change).
 *
 * Route attachment is not re-run: cluster names are `ns/service/port` and say which Service port to
 * read; the protocol is kept. Endpoints `policy` refuses are left out (a slice that gains one also
 * triggers a full build, which reports it on the routes' status).
 */
export function refreshClusterEndpoints(
  view: StoreView,
  clusters: readonly ClusterModel[],
  policy: EndpointPolicy,
): ClusterModel[] {
  const slices = new EndpointSliceIndex(view);
  return clusters.map((c) => {
    const service = c.externalName || c.tls?.refuse ? undefined : parseClusterName(c.name);
    if (!service) return c;
    return {
      name: c.name,
      protocol: c.protocol,
      ...(c.tls ? { tls: c.tls } : {}),
      endpoints: serviceEndpoints(
        view,
        service.namespace,
        service.service,
        service.port,
        slices,
        service.udp,
      ).filter((e) => endpointRefusal(e.address, e.port, policy) === undefined),
    };
  });
}

/**
 * Returns the ready endpoints of a Service port, from the EndpointSlices labelled with its name.
 *
 * Slice ports are matched by name (the Service port's name, or "" for an unnamed port) and the
 * slice's port number is used. Endpoints whose conditions.ready is false are skipped; FQDN slices
 * are ignored. The result is de-duplicated and sorted by address, then port. Pass an
 * EndpointSliceIndex when resolving many clusters from one view. `udp` selects the Service's UDP port
 * (and the slices' UDP ports) instead of its TCP port.
 */
export function serviceEndpoints(
  view: StoreView,
  namespace: string,
  service: string,
  port: number,
  index?: EndpointSliceIndex,
  udp = false,
): EndpointModel[] {
  const svc = view.get('Service', namespace, service);
  if (!svc) return [];
  const sp = servicePortOf(svc, port, udp);
  if (!sp) return [];
  const portName = sp.name ?? '';
  const seen = new Map<string, EndpointModel>();
  for (const slice of (index ?? new EndpointSliceIndex(view)).slices(namespace, service)) {
    const s = slice as unknown as EndpointSliceLike;
    if (s.addressType === 'FQDN') continue;
    const slicePort = (s.ports ?? []).find(
      (p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === (udp ? 'UDP' : 'TCP'),
    );
    if (!slicePort || typeof slicePort.port !== 'number') continue;
    for (const ep of s.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const address of ep.addresses ?? []) {
        const key = `${address}|${slicePort.port}`;
        if (!seen.has(key)) seen.set(key, { address, port: slicePort.port, ready: true });
      }
    }
  }
  return [...seen.values()].sort((a, b) => compareStrings(a.address, b.address) || a.port - b.port);
}
