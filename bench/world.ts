/**
 * Realistic benchmark worlds at Knative scale (GEP-1713): one Gateway, N ListenerSets with one
 * HTTPS listener each (own hostname, own certificate), R HTTPRoutes spread over those listeners,
 * S Services with one EndpointSlice of E endpoints each. Plain Kubernetes-shaped objects, as the
 * providers would put them into the store.
 *
 * Tenants live in T namespaces (Gateway allowedListeners: All) or all in the Gateway's namespace
 * (allowedListeners: Same). Object i of each kind goes to namespace i % T, and every route only
 * names Services of its own namespace, so no ReferenceGrant is needed.
 */
import type { KubeObject } from '../src/store/objects';
import type { ObjectStore } from '../src/store/store';
import type { KeyPairPem, Pki } from './pki';
import { issueLeaf, loadPki, serialOf } from './pki';

export interface WorldSize {
  name: string;
  /** N: ListenerSets, one HTTPS listener (hostname + certificate) each. */
  listenerSets: number;
  /** R: HTTPRoutes. */
  routes: number;
  /** S: Services (one EndpointSlice each). */
  services: number;
  /** E: endpoints per EndpointSlice. */
  endpoints: number;
  /** T: tenant namespaces (allowedListeners All). */
  namespaces: number;
}

export const SIZES: Record<string, WorldSize> = {
  tiny: { name: 'tiny', listenerSets: 10, routes: 20, services: 10, endpoints: 3, namespaces: 2 },
  small: { name: 'small', listenerSets: 100, routes: 500, services: 100, endpoints: 10, namespaces: 10 },
  large: {
    name: 'large',
    listenerSets: 5_000,
    routes: 10_000,
    services: 2_000,
    endpoints: 10,
    namespaces: 20,
  },
  /** Issue 15 point 4: how each measurement grows from large (bench/README.md "Growing the world"). */
  xlarge: {
    name: 'xlarge',
    listenerSets: 20_000,
    routes: 40_000,
    services: 5_000,
    endpoints: 10,
    namespaces: 40,
  },
};

export interface WorldOptions {
  size: WorldSize;
  /** HTTPS port of every ListenerSet listener (a high port, so no root is needed). */
  httpsPort?: number;
  /** Plain HTTP port of the Gateway's own listener. */
  httpPort?: number;
  /** Gateway.spec.allowedListeners.namespaces.from. */
  allowedListeners?: 'All' | 'Same';
  /** Endpoint address of endpoint `e` of Service `s` (default: documentationAddress; only data). */
  endpointAddress?: (s: number, e: number) => string;
  /** Endpoint port (default 8080). */
  endpointPort?: number;
}

export const GATEWAY_NAMESPACE = 'bench-gateway';
export const GATEWAY_NAME = 'knative';
export const GATEWAY_CLASS = 'convoy-bench';
export const CONTROLLER_NAME = 'convoy.dev/gateway-controller';
export const FLEET = `${GATEWAY_NAMESPACE}/${GATEWAY_NAME}`;
const BASE_TIME = Date.UTC(2026, 0, 1);

/** The three IPv4 documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24), /24 prefixes. */
const DOCUMENTATION_PREFIXES = ['192.0.2', '198.51.100', '203.0.113'];
const HOSTS_PER_PREFIX = 254;
const DOCUMENTATION_HOSTS = DOCUMENTATION_PREFIXES.length * HOSTS_PER_PREFIX;

/**
 * Returns the n-th address of the documentation ranges, cycling after 762: a generated world
 * never names a private or public address, so nothing can send it traffic by mistake. Addresses
 * repeat across Services, never within one Service of at most 762 endpoints.
 */
export function documentationAddress(n: number): string {
  const i = n % DOCUMENTATION_HOSTS;
  return `${DOCUMENTATION_PREFIXES[Math.floor(i / HOSTS_PER_PREFIX)]}.${(i % HOSTS_PER_PREFIX) + 1}`;
}

export function hostnameOf(i: number): string {
  return `svc-${i}.bench.example.com`;
}

export class World {
  readonly size: WorldSize;
  readonly httpsPort: number;
  readonly httpPort: number;
  readonly allowed: 'All' | 'Same';
  readonly pki: Pki;
  /** Current certificate per ListenerSet index (rotations replace entries). */
  readonly certs: KeyPairPem[];
  private readonly endpointAddress: (s: number, e: number) => string;
  private readonly endpointPort: number;
  private listenerSetCount: number;
  private readonly routeGeneration = new Map<number, number>();
  private readonly sliceGeneration = new Map<number, number>();
  /** Routes added with new ListenerSets: route index → ListenerSet index. */
  private readonly extraRoutes = new Map<number, number>();

  constructor(opts: WorldOptions, pki?: Pki) {
    this.size = opts.size;
    this.httpsPort = opts.httpsPort ?? 8443;
    this.httpPort = opts.httpPort ?? 8080;
    this.allowed = opts.allowedListeners ?? 'All';
    this.endpointAddress =
      opts.endpointAddress ?? ((s, e) => documentationAddress(s * this.size.endpoints + e));
    this.endpointPort = opts.endpointPort ?? 8080;
    this.pki = pki ?? loadPki(this.size.listenerSets, hostnameOf);
    this.certs = this.pki.leaves.slice(0, this.size.listenerSets);
    this.listenerSetCount = this.size.listenerSets;
  }

  /** Namespace of tenant object `i` (ListenerSet, Secret, route or Service). */
  namespaceOf(i: number): string {
    return this.allowed === 'Same' ? GATEWAY_NAMESPACE : `tenant-${i % this.size.namespaces}`;
  }

  private get tenantNamespaces(): number {
    return this.allowed === 'Same' ? 1 : this.size.namespaces;
  }

  /** Every object of the world, in the order a provider would deliver them. */
  objects(): KubeObject[] {
    const out: KubeObject[] = [];
    out.push(...this.namespaces(), this.gatewayClass(), this.gateway());
    for (let s = 0; s < this.size.services; s++) out.push(this.service(s), this.endpointSlice(s));
    for (let i = 0; i < this.size.listenerSets; i++) out.push(this.secret(i), this.listenerSet(i));
    for (let r = 0; r < this.size.routes; r++) out.push(this.route(r));
    return out;
  }

  /** Puts every object into the store and marks the source synced. */
  load(store: ObjectStore): number {
    store.registerSource('bench');
    let n = 0;
    for (const o of this.objects()) {
      store.put(o);
      n++;
    }
    store.markSynced('bench');
    return n;
  }

  namespaces(): KubeObject[] {
    const names = new Set([GATEWAY_NAMESPACE]);
    for (let t = 0; t < this.tenantNamespaces; t++) names.add(this.namespaceOf(t));
    return [...names].map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    }));
  }

  gatewayClass(): KubeObject {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: GATEWAY_CLASS, generation: 1, creationTimestamp: iso(BASE_TIME) },
      spec: { controllerName: CONTROLLER_NAME },
    };
  }

  gateway(): KubeObject {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: {
        name: GATEWAY_NAME,
        namespace: GATEWAY_NAMESPACE,
        generation: 1,
        creationTimestamp: iso(BASE_TIME),
      },
      spec: {
        gatewayClassName: GATEWAY_CLASS,
        allowedListeners: { namespaces: { from: this.allowed } },
        listeners: [
          {
            name: 'http',
            protocol: 'HTTP',
            port: this.httpPort,
            allowedRoutes: { namespaces: { from: 'Same' } },
          },
        ],
      },
    };
  }

  listenerSetName(i: number): string {
    return `ls-${i}`;
  }

  secretName(i: number): string {
    return `cert-${i}`;
  }

  /** SDS name of ListenerSet i's certificate. */
  secretResourceName(i: number): string {
    return `${this.namespaceOf(i)}/${this.secretName(i)}`;
  }

  /** RDS name of ListenerSet i's filter chain. */
  routeConfigName(i: number): string {
    return `https-${this.httpsPort}/${hostnameOf(i)}`;
  }

  listenerName(): string {
    return `https-${this.httpsPort}`;
  }

  listenerSet(i: number): KubeObject {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: {
        name: this.listenerSetName(i),
        namespace: this.namespaceOf(i),
        generation: 1,
        uid: `ls-uid-${i}`,
        creationTimestamp: iso(BASE_TIME + 60_000 + i * 1000),
        labels: { 'serving.knative.dev/service': `svc-${i}` },
      },
      spec: {
        parentRef: {
          group: 'gateway.networking.k8s.io',
          kind: 'Gateway',
          name: GATEWAY_NAME,
          namespace: GATEWAY_NAMESPACE,
        },
        listeners: [
          {
            name: 'https',
            protocol: 'HTTPS',
            port: this.httpsPort,
            hostname: hostnameOf(i),
            tls: {
              mode: 'Terminate',
              certificateRefs: [{ kind: 'Secret', group: '', name: this.secretName(i) }],
            },
            allowedRoutes: { namespaces: { from: 'Same' } },
          },
        ],
      },
    };
  }

  secret(i: number): KubeObject {
    const c = this.certs[i];
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: this.secretName(i), namespace: this.namespaceOf(i), uid: `secret-uid-${i}` },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(c.cert), 'tls.key': b64(c.key) },
    };
  }

  serviceName(s: number): string {
    return `svc-${s}`;
  }

  /** CDS/EDS name of Service s. */
  clusterName(s: number): string {
    return `${this.namespaceOf(s)}/${this.serviceName(s)}/80`;
  }

  service(s: number): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: this.serviceName(s), namespace: this.namespaceOf(s), uid: `svc-uid-${s}` },
      spec: {
        type: 'ClusterIP',
        clusterIP: documentationAddress(s),
        ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: this.endpointPort }],
        selector: { app: this.serviceName(s) },
      },
    };
  }

  endpointSlice(s: number): KubeObject {
    const gen = this.sliceGeneration.get(s) ?? 0;
    const endpoints = [];
    for (let e = 0; e < this.size.endpoints; e++) {
      // Generation g moves endpoint 0 to a fresh address (a pod replaced), past the Service's others.
      const address =
        e === 0 && gen > 0
          ? documentationAddress(s * this.size.endpoints + this.size.endpoints + gen)
          : this.endpointAddress(s, e);
      endpoints.push({
        addresses: [address],
        conditions: { ready: true, serving: true, terminating: false },
        targetRef: { kind: 'Pod', name: `${this.serviceName(s)}-pod-${e}`, namespace: this.namespaceOf(s) },
        nodeName: `node-${e % 16}`,
      });
    }
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${this.serviceName(s)}-abcde`,
        namespace: this.namespaceOf(s),
        generation: gen + 1,
        labels: { 'kubernetes.io/service-name': this.serviceName(s) },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: this.endpointPort, protocol: 'TCP' }],
      endpoints,
    };
  }

  /** The k-th Service (cyclically) in the same namespace as tenant object i; routes only use these. */
  private serviceFor(i: number, k: number): number {
    const t = this.tenantNamespaces;
    const ns = i % t;
    const perNs = Math.max(1, Math.floor((this.size.services - ns - 1) / t) + 1);
    return ns + t * (k % perNs);
  }

  /** The ListenerSet a route attaches to. */
  listenerOfRoute(r: number): number {
    return this.extraRoutes.get(r) ?? r % this.size.listenerSets;
  }

  /** The route names (in the store) of routes attached to ListenerSet i. */
  routeName(r: number): string {
    return `route-${r}`;
  }

  route(r: number): KubeObject {
    const gen = this.routeGeneration.get(r) ?? 0;
    const l = this.listenerOfRoute(r);
    const ns = this.namespaceOf(l);
    // Spread routes over every Service of their namespace.
    const k = Math.floor(r / this.tenantNamespaces);
    const a = this.serviceFor(l, k);
    const b = this.serviceFor(l, k + 1);
    const ref = (s: number, weight?: number) => ({
      group: '',
      kind: 'Service',
      name: this.serviceName(s),
      port: 80,
      ...(weight !== undefined && { weight }),
    });
    const prefix = `/r${r}`;
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: {
        name: this.routeName(r),
        namespace: ns,
        generation: gen + 1,
        uid: `route-uid-${r}`,
        creationTimestamp: iso(BASE_TIME + 120_000 + r * 1000),
      },
      spec: {
        parentRefs: [
          {
            group: 'gateway.networking.k8s.io',
            kind: 'ListenerSet',
            name: this.listenerSetName(l),
            sectionName: 'https',
          },
        ],
        hostnames: [hostnameOf(l)],
        rules: [
          {
            matches: [
              { path: { type: 'PathPrefix', value: gen > 0 ? `${prefix}/api-v${gen}` : `${prefix}/api` } },
              { path: { type: 'Exact', value: `${prefix}/healthz` } },
            ],
            backendRefs: [ref(a)],
          },
          {
            matches: [
              {
                path: { type: 'PathPrefix', value: prefix },
                headers: [{ type: 'Exact', name: 'x-canary', value: 'true' }],
              },
            ],
            backendRefs: [ref(a, 90), ref(b, 10)],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: `${prefix}/static` } }],
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: { set: [{ name: 'x-served-by', value: `route-${r}` }] },
              },
            ],
            backendRefs: [ref(b)],
          },
        ],
      },
    };
  }

  // ----------------------------------------------------------------------------------------------
  // Changes (each returns the objects to put, in order)

  /** Edits route r (a path value changes): its listener's RouteConfiguration changes. */
  editRoute(r: number): KubeObject[] {
    this.routeGeneration.set(r, (this.routeGeneration.get(r) ?? 0) + 1);
    return [this.route(r)];
  }

  /** Rotates ListenerSet i's certificate: same key, new certificate (new serial). */
  rotateCertificate(i: number): { objects: KubeObject[]; serial: string; cert: string } {
    const current = this.certs[i];
    const next = issueLeaf(this.pki.ca, hostnameOf(i), current.key);
    this.certs[i] = next;
    return { objects: [this.secret(i)], serial: serialOf(next.cert), cert: next.cert };
  }

  /** Changes the EndpointSlice of Service s (one endpoint replaced). */
  changeEndpoints(s: number): KubeObject[] {
    this.sliceGeneration.set(s, (this.sliceGeneration.get(s) ?? 0) + 1);
    return [this.endpointSlice(s)];
  }

  /** Adds a new ListenerSet (index N, N+1, …) with its Secret and one route attached to it. */
  addListenerSet(): { index: number; objects: KubeObject[] } {
    const i = this.listenerSetCount++;
    if (!this.certs[i]) this.certs[i] = this.pki.leaves[i] ?? issueLeaf(this.pki.ca, hostnameOf(i));
    const r = this.size.routes + (i - this.size.listenerSets);
    this.extraRoutes.set(r, i);
    return { index: i, objects: [this.secret(i), this.listenerSet(i), this.route(r)] };
  }
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
