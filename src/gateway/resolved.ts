/**
 * Defines the contract between the two halves of src/gateway:
 *  - gateways.ts & co. (GatewayClass, Gateway + ListenerSet merge, conflicts, listener
 *    validation, TLS, grants) produce ResolvedGateway[] from the store;
 *  - routes/, build.ts and fleet.ts attach HTTPRoute/GRPCRoute/TLSRoute to those listeners,
 *    count attachedRoutes, and assemble FleetModel + status.
 * Everything here is plain data computed without I/O.
 */
import type { KubeObject } from '../store/objects';
import type { CaBundleModel, FleetModel, SecretModel } from '../model/fleet';
import type { Condition, ObjectStatus } from '../status/types';
import type { GatewayStatusAddress } from './api';
import type { EndpointPolicy } from './endpoint-guard';
import type { FleetParameters } from './fleet-parameters';
import type { ManagedFleetModel } from '../model/managed-fleet';
import type { ResolvedPortRange } from './port-ranges';
import type { BackendClientCertificate } from './backend-client-certificate';

/** Read-only view of the store the build runs against (ObjectStore satisfies it). */
export interface StoreView {
  list(kind: string): KubeObject[];
  get(kind: string, namespace: string, name: string): KubeObject | undefined;
}

/** Holds the options of a gateway build (set from `convoy serve` flags). */
export interface BuildOptions {
  /** GatewayClass.spec.controllerName Convoy owns. */
  controllerName: string;
  /** Timestamp used for lastTransitionTime of new conditions (status/merge keeps older ones). */
  now: string;
  /**
   * Allow backendRefs to ExternalName Services (DNS clusters). Off by default: an ExternalName
   * can point at anything the Envoy can reach, including its own admin port or cloud metadata,
   * so a cluster operator opts in (`convoy serve --enable-external-name-services`).
   */
  externalNameServices?: boolean;
  /**
   * Which EndpointSlice addresses may become Envoy endpoints. Unset refuses loopback, unspecified
   * and link-local addresses (gateway/endpoint-guard.ts): they reach the Envoy's own host or its
   * cloud metadata service. `convoy serve --allow-loopback-endpoints` opts in.
   */
  endpoints?: EndpointPolicy;
  /**
   * Where Gateways' status.addresses come from when their spec names none: the Service in
   * front of the Envoy fleet (its load-balancer ingress), and/or fixed addresses from flags.
   * Without either, status.addresses stays empty (Convoy does not provision data planes).
   */
  gatewayAddresses?: { service?: { namespace: string; name: string }; static?: string[] };
  /**
   * Convoy provisions managed fleets (docs/architecture.md §13). Off: every parametersRef is
   * refused with InvalidParameters, as when Convoy took no parameters. 'local': the fleets are
   * `convoy serve --from-dir`'s local Envoy processes (docs/operations.md §14).
   */
  managedFleets?: boolean | 'local';
  /** The most ports a ListenerPortRange may span (docs/gateway-api.md §30); default 1,024. */
  maxPortRangePorts?: number;
  /**
   * Read the legacy XListenerSet kind (`--enable-xlistenerset`, docs/gateway-api.md §29). Off:
   * XListenerSets in the store are ignored (Kubernetes mode does not even watch them).
   */
  xListenerSets?: boolean;
  /**
   * The pool XListenerSet listeners without a port get theirs from (`--dynamic-port-range A-B`,
   * docs/gateway-api.md §29), inclusive; unset: such listeners are not accepted.
   */
  dynamicPorts?: { first: number; last: number };
}

/** The kinds a listener can be declared in. */
export type ListenerOwnerKind = 'Gateway' | 'ListenerSet' | 'XListenerSet';

/** Names the Gateway, ListenerSet or XListenerSet a listener is declared in. */
export interface ListenerOwner {
  kind: ListenerOwnerKind;
  namespace: string;
  name: string;
}

export interface RouteGroupKind {
  group: string;
  kind: string;
}

/** Describes one listener after validation: what Envoy serves for it and what its status reports. */
export interface ResolvedListener {
  owner: ListenerOwner;
  /** Listener name, unique only within its owner. */
  name: string;
  /** `Gateway/ns/name/listener` or `ListenerSet/ns/name/listener`: Envoy filter chain name. */
  qualifiedName: string;
  port: number;
  /**
   * Set when an accepted ListenerPortRange extends the listener: it also serves port+1..endPort
   * (docs/gateway-api.md §30).
   */
  endPort?: number;
  /** As declared (HTTP, HTTPS, TLS, or something unsupported). */
  protocol: string;
  hostname?: string;
  /** For HTTPS/TLS: Terminate (default) or Passthrough. */
  tlsMode?: 'Terminate' | 'Passthrough';
  /** Valid certificates (already parsed and checked), in certificateRefs order. */
  certificates: SecretModel[];
  /**
   * For a ready HTTPS listener on a port with client certificate validation (the Gateway's
   * spec.tls.frontend, docs/gateway-api.md §25): its CA bundle and mode.
   */
  clientValidation?: { bundle: CaBundleModel; mode: 'AllowValidOnly' | 'AllowInsecureFallback' };
  /** allowedRoutes.namespaces resolved: which route namespaces may attach. */
  allowedNamespaces: { from: 'Same' | 'All' | 'Selector'; selector?: LabelSelector };
  /** allowedRoutes.kinds after filtering to supported kinds (this is status.supportedKinds). */
  supportedKinds: RouteGroupKind[];
  /**
   * True when the listener is Accepted and Programmed and so takes part in Envoy config
   * and route attachment. Conflicted or invalid listeners are present with ready=false so
   * their status can be reported.
   */
  ready: boolean;
  /** Conditions other than the attachedRoutes count (Accepted, Programmed, ResolvedRefs, Conflicted). */
  conditions: Condition[];
  /** Filled by route attachment. */
  attachedRoutes: number;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}

/** Describes one ListenerSet of a Gateway after resolution: its admission and its listeners. */
export interface ResolvedListenerSet {
  object: KubeObject;
  /** The parent Gateway's spec.allowedListeners admits the set's namespace. */
  allowed: boolean;
  /** Accepted by its parent Gateway (allowedListeners, parent accepted, at least one valid listener). */
  accepted: boolean;
  listeners: ResolvedListener[];
  /**
   * An XListenerSet with the namespace/name of a ListenerSet: the ListenerSet wins and this one
   * serves nothing (docs/gateway-api.md §29).
   */
  superseded?: boolean;
}

/** Describes one Gateway Convoy owns after resolution: its acceptance, addresses and merged listeners. */
export interface ResolvedGateway {
  object: KubeObject;
  /** "namespace/name" */
  fleet: string;
  /** The Gateway is ours (its class is Convoy's and Accepted) and Accepted itself. */
  accepted: boolean;
  /**
   * Why the Gateway as a whole is not accepted whatever its listeners (its class is not accepted,
   * or it names infrastructure parameters); undefined when its listeners decide.
   */
  problem?: { reason: string; message: string };
  /**
   * Its status.addresses: for a managed fleet, those its Service was given; otherwise those of its
   * spec, else the Envoy fleet's (BuildOptions.gatewayAddresses).
   */
  addresses: GatewayStatusAddress[];
  /** Set when Convoy provisions the Gateway's Envoys (docs/architecture.md §13). */
  managed?: ManagedFleetModel;
  /** Some frontend validation of the Gateway is AllowInsecureFallback (docs/gateway-api.md §25). */
  insecureFrontendValidation?: boolean;
  /** Why an accepted Gateway is not programmed (AddressNotAssigned, AddressNotUsable). */
  notProgrammed?: { reason: string; message: string };
  /** The Gateway's own listeners, then attached ListenerSets' listeners, in precedence order. */
  listeners: ResolvedListener[];
  /** ListenerSets whose parentRef names this Gateway (accepted or not), in precedence order. */
  listenerSets: ResolvedListenerSet[];
  /** The ListenerPortRange policies on its listeners and their verdicts (docs/gateway-api.md §30). */
  portRanges?: ResolvedPortRange[];
  /**
   * spec.tls.backend.clientCertificateRef resolved: the certificate to present to TLS backends, or
   * why it cannot be (docs/gateway-api.md §24); absent when the Gateway names none.
   */
  backendClientCertificate?: BackendClientCertificate;
}

/** A GatewayClass Convoy owns (its controllerName), and whether Convoy accepts it. */
export interface ResolvedGatewayClass {
  object: KubeObject;
  accepted: boolean;
  /** Why it is not accepted (an invalid or missing parametersRef: InvalidParameters). */
  problem?: { reason: string; message: string };
  /** Its EnvoyFleet parameters, when it names valid ones (docs/architecture.md §13). */
  parameters?: FleetParameters;
}

/** Holds what the whole build returns. */
export interface GatewayBuildResult {
  fleets: FleetModel[];
  statuses: ObjectStatus[];
}
