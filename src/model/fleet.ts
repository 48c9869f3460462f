import type { ValidityPeriod } from '../pki/validity';

/**
 * Defines the fleet model: one self-contained model per Gateway (a "fleet", docs/architecture.md §4),
 * produced by src/gateway from the store and consumed by src/envoy.
 *
 * It is plain data: no Kubernetes objects, no Envoy messages.
 * Everything in it has already been validated; invalid listeners, routes and backends are
 * either absent or expressed as an explicit action (e.g. a 500 for a rule with no valid backend).
 *
 * Names are stable, owner-scoped and content-free (docs/architecture.md §5); names.ts builds
 * them all.
 * All arrays are in a deterministic order (the builder sorts them), so translation is a pure
 * function of this model and output is byte-identical for the same input.
 */

import type { ManagedFleetModel } from './managed-fleet';

export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TLS';

export interface GatewayRef {
  namespace: string;
  name: string;
}

/** Describes everything the Envoys of one Gateway serve. */
export interface FleetModel {
  /** "namespace/name" of the Gateway; Envoys name it in node.cluster. */
  fleet: string;
  gateway: GatewayRef;
  /** One entry per port, sorted by port. */
  ports: PortModel[];
  /** Every cluster referenced by a route in this fleet, sorted by name. */
  clusters: ClusterModel[];
  /** Every certificate referenced by a filter chain in this fleet, sorted by name. */
  secrets: SecretModel[];
  /**
   * Every CA bundle a filter chain validates client certificates with (docs/gateway-api.md §25),
   * sorted by name; absent when none does.
   */
  caBundles?: CaBundleModel[];
  /** Set when Convoy provisions this fleet's Envoys (docs/architecture.md §13); unmanaged otherwise. */
  managed?: ManagedFleetModel;
}

/**
 * One Envoy Listener. Listener names are `<protocol>-<port>` lowercased: `http-8080`,
 * `https-8443`, `tls-8444`. HTTPS and TLS listeners on the same port share one Envoy Listener
 * (named after the first protocol in precedence order) because both select by SNI.
 */
export interface PortModel {
  name: string;
  port: number;
  /**
   * The port Envoy binds for this listener port when it differs (a managed fleet runs Envoy as
   * non-root: ports below 1024 are bound at an unprivileged port its Service targets).
   */
  bindPort?: number;
  /**
   * Set by an accepted ListenerPortRange (docs/gateway-api.md §30): the Listener also serves
   * port+1..endPort, as additional addresses of the same Envoy Listener (one set of filter chains).
   */
  endPort?: number;
  /**
   * For a managed fleet with a range, the port Envoy binds for each of port+1..endPort in order,
   * when any of them differs from the port itself (ports below 1024, as for bindPort).
   */
  rangeBindPorts?: number[];
  /** Plain HTTP listener: one RouteConfiguration named like the listener. */
  http?: HttpPortModel;
  /** TLS-terminating or passthrough filter chains, selected by SNI. */
  filterChains: FilterChainModel[];
  /** A TCP or UDP listener (docs/gateway-api.md §28): no chains, no HTTP, one route's backends. */
  l4?: L4PortModel;
}

/**
 * Describes a TCP or UDP listener port: the backends of the one route it serves (the oldest route
 * attached to its listener), or none (every connection or datagram is dropped).
 */
export interface L4PortModel {
  protocol: 'TCP' | 'UDP';
  /** Qualified name of the Gateway API listener (`Gateway/ns/name/listener`); also the stat prefix. */
  listener: string;
  /** Weighted clusters of the route's valid backends; empty: nothing to forward to. */
  backends: WeightedCluster[];
  /** Share (same scale as the weights) of invalid backendRefs, whose connections are refused. */
  invalidWeight?: number;
}

export interface HttpPortModel {
  routeConfigName: string;
  virtualHosts: VirtualHostModel[];
}

/** Describes one filter chain of a TLS port: one listener (or one more SNI hostname of its routes). */
export interface FilterChainModel {
  /** `Gateway/ns/name/listener` or `ListenerSet/ns/name/listener`. */
  name: string;
  /** SNI names; empty means the catch-all chain (a listener without hostname). */
  serverNames: string[];
  mode: 'Terminate' | 'Passthrough';
  /** Protocol the owning listener declared. HTTPS → HTTP connection manager; TLS → tcp_proxy. */
  protocol: 'HTTPS' | 'TLS';
  /** SDS names (`ns/secret`) of the certificates to present; empty for passthrough. */
  secretNames: string[];
  /** For HTTPS: RDS name `https-8443/<hostname or *>` and its virtual hosts. */
  routeConfigName?: string;
  virtualHosts?: VirtualHostModel[];
  /** For TLS (passthrough or terminate): weighted clusters for tcp_proxy; empty = reject. */
  tcpBackends?: WeightedCluster[];
  /**
   * For HTTPS: the request hosts answered with 421 (another chain of the port serves them): exact
   * names, `*.` wildcards, `*` for every host not matched otherwise (docs/gateway-api.md §26).
   */
  misdirectedHosts?: string[];
  /** For HTTPS: how client certificates are validated (Gateway spec.tls.frontend); absent: not asked for. */
  clientValidation?: ClientValidationModel;
}

/** Describes the client certificate validation of an HTTPS chain (docs/gateway-api.md §25). */
export interface ClientValidationModel {
  /** SDS name of the CaBundleModel the client's chain must lead to. */
  caBundle: string;
  /**
   * AllowValidOnly: a valid client certificate is required. AllowInsecureFallback: one is asked
   * for, but a connection without one, or with one that does not verify, is accepted too.
   */
  mode: 'AllowValidOnly' | 'AllowInsecureFallback';
}

/** A validated bundle of PEM CA certificates, delivered over SDS as a validation context. */
export interface CaBundleModel {
  /** `Gateway/ns/name/client-ca/<port or default>` (names.ts). */
  name: string;
  /** The PEM certificates, in reference order, each parsed. */
  caCertificates: string;
}

/** Describes one virtual host of a route configuration: one served hostname and its routes. */
export interface VirtualHostModel {
  /** Stable name: the hostname, or "*" for the catch-all. */
  name: string;
  /** Domains Envoy matches on (the hostname, plus `host:port` forms are added by the translator). */
  domains: string[];
  /** Routes in Gateway API precedence order: the first match wins. */
  routes: RouteModel[];
}

/** Describes one Envoy route: one match of one rule of a route, and its action. */
export interface RouteModel {
  /** Traceable name: `HTTPRoute/ns/name/rule/<i>/match/<j>`. */
  name: string;
  match: RouteMatchModel;
  action: RouteActionModel;
  requestHeaders?: HeaderModifierModel;
  responseHeaders?: HeaderModifierModel;
  /** Request timeout (HTTPRoute timeouts.request) in milliseconds; 0 disables. */
  timeoutMs?: number;
  /** Per-try timeout (timeouts.backendRequest) in milliseconds. */
  perTryTimeoutMs?: number;
  /** Retries of failed backend requests (HTTPRoute rule `retry`); absent: never retried. */
  retry?: RetryModel;
  /** The CORS filter of the rule; docs/gateway-api.md §20. */
  cors?: CorsModel;
  /**
   * For a rule with a `name` (GEP-995): `HTTPRoute/ns/name/<rule name>` (names.ts), the prefix of
   * its per-route Envoy stats (docs/gateway-api.md §21).
   */
  statPrefix?: string;
}

/** Describes a rule's CORS policy, already checked (origin regexes within Envoy's limits). */
export interface CorsModel {
  /** Origins allowed: exact (compared ignoring case) or regular expressions; empty allows none. */
  origins: StringMatchModel[];
  allowMethods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  allowCredentials: boolean;
  /** Access-Control-Max-Age in seconds; absent: the header is not sent. */
  maxAgeSeconds?: number;
}

/**
 * Describes when a backend request is retried: on connection errors and per-try timeouts always,
 * and on the listed response codes; docs/gateway-api.md §19.
 */
export interface RetryModel {
  /** Retries after the first attempt; absent: Envoy's default (1). */
  attempts?: number;
  /** Base wait between attempts in milliseconds (> 0); absent: Envoy's default (25 ms). */
  backoffMs?: number;
  /** Response codes (400-599) that are retried, sorted ascending, without duplicates. */
  codes: number[];
}

export interface RouteMatchModel {
  path?: { type: 'Exact' | 'PathPrefix' | 'RegularExpression'; value: string };
  headers?: StringMatchModel[];
  queryParams?: StringMatchModel[];
  method?: string;
  /** GRPCRoute service/method, already turned into a path match by the builder when possible. */
  grpc?: boolean;
}

export interface StringMatchModel {
  name: string;
  type: 'Exact' | 'RegularExpression';
  value: string;
}

export type RouteActionModel =
  | {
      kind: 'forward';
      backends: WeightedCluster[];
      /**
       * Share (same scale as backends' weights) of invalid backendRefs: it must be answered with
       * HTTP 500 (e.g. a weighted entry naming a cluster that does not exist, with
       * cluster_not_found_response_code INTERNAL_SERVER_ERROR). Absent when every backendRef is valid.
       */
      invalidWeight?: number;
      rewrite?: {
        hostname?: string;
        path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string };
      };
      mirrors?: { cluster: string; percent?: number }[];
    }
  | {
      kind: 'redirect';
      scheme?: string;
      hostname?: string;
      port?: number;
      path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string };
      statusCode: number;
    }
  | { kind: 'direct'; status: number; body?: string };

export interface WeightedCluster {
  /** Cluster name `ns/service/port`. */
  cluster: string;
  weight: number;
  /** HTTPRoute backendRef filters (docs/gateway-api.md §22): applied only when this backend is picked. */
  requestHeaders?: HeaderModifierModel;
  responseHeaders?: HeaderModifierModel;
}

export interface HeaderModifierModel {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}

/** One cluster per Service port, fed by EDS. */
export interface ClusterModel {
  /** `ns/service/port`; also the EDS service name. */
  name: string;
  /**
   * Upstream protocol from appProtocol: h2c for gRPC, else HTTP/1.1; tcp for TLS and TCP routes,
   * udp for UDP routes (named `ns/service/port/udp`: a Service may use one number for both).
   */
  protocol: 'http1' | 'http2' | 'tcp' | 'udp';
  endpoints: EndpointModel[];
  /**
   * For an ExternalName Service: the DNS name Envoy resolves itself (STRICT_DNS cluster on the
   * Service port) instead of EDS endpoints.
   */
  externalName?: string;
  /**
   * TLS to the backend (a BackendTLSPolicy targets this Service port; docs/gateway-api.md §24).
   * Absent: plaintext.
   */
  tls?: UpstreamTlsModel;
}

/**
 * Describes how Envoy originates TLS to one Service port, from its accepted BackendTLSPolicy and
 * the Gateway's backend client certificate; docs/gateway-api.md §24.
 */
export interface UpstreamTlsModel {
  /** The policy's `namespace/name`, for traceability. */
  policy: string;
  /** SNI sent to the backend: the policy's validation.hostname. */
  sni: string;
  /** PEM bundle of the trusted CAs (the policy's valid caCertificateRefs, concatenated in order). */
  caBundle?: string;
  /** SANs the backend certificate must carry one of (the hostname when the policy lists none). */
  subjectAltNames: { type: 'DNS' | 'URI'; value: string }[];
  /** SDS name of the client certificate the Gateway presents (spec.tls.backend.clientCertificateRef). */
  clientCertificate?: string;
  /**
   * The policy has no usable CA (every caCertificateRef is invalid): connections must fail, so the
   * cluster gets no endpoints and Envoy answers 503.
   */
  refuse?: boolean;
}

export interface EndpointModel {
  address: string;
  port: number;
  ready: boolean;
}

/** A validated kubernetes.io/tls certificate, delivered over SDS. */
export interface SecretModel {
  /** `ns/secretName`. */
  name: string;
  certificateChain: string;
  privateKey: string;
  /** The leaf certificate's validity period, read when the pair was checked (not sent to Envoy). */
  validity?: ValidityPeriod;
}
