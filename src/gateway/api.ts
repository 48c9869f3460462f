/**
 * TypeScript shapes of the Gateway API v1.6.1 (gateway.networking.k8s.io/v1) objects Convoy reads
 * and the status it writes. Objects in the store are untyped KubeObjects; these interfaces describe
 * `spec`/`status` so the gateway model can read them. Every field is optional unless the CRD makes
 * it required *and* applies no default, because file mode feeds objects that never went through
 * CRD defaulting: readers must apply defaults themselves (see the *Default helpers below).
 */
import type { KubeObject } from '../store/objects';
import type { LabelSelector, RouteGroupKind } from './resolved';
import type { Condition } from '../status/types';

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_API_VERSION = 'gateway.networking.k8s.io/v1';
/** The core API group ("" in Kubernetes references). */
export const CORE_GROUP = '';

export type { LabelSelector, RouteGroupKind };

// ---------------------------------------------------------------------------------------------
// Shared references

export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

/** ListenerSet.spec.parentRef. */
export interface ParentGatewayReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface BackendObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
}

export interface BackendRef extends BackendObjectReference {
  weight?: number;
}

// ---------------------------------------------------------------------------------------------
// GatewayClass

export interface ParametersReference {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface GatewayClassSpec {
  controllerName: string;
  parametersRef?: ParametersReference;
  description?: string;
}

export interface SupportedFeature {
  name: string;
}

export interface GatewayClassStatus {
  conditions?: Condition[];
  supportedFeatures?: SupportedFeature[];
}

// ---------------------------------------------------------------------------------------------
// Gateway and listeners

export type ProtocolType = 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP' | string;
export type TLSModeType = 'Terminate' | 'Passthrough';
export type FromNamespaces = 'All' | 'Same' | 'Selector';
export type FromListenerNamespaces = 'All' | 'Same' | 'Selector' | 'None';

export interface ListenerTLSConfig {
  mode?: TLSModeType;
  certificateRefs?: SecretObjectReference[];
  options?: Record<string, string>;
}

export interface RouteNamespaces {
  from?: FromNamespaces;
  selector?: LabelSelector;
}

export interface AllowedRouteKind {
  group?: string;
  kind: string;
}

export interface AllowedRoutes {
  namespaces?: RouteNamespaces;
  kinds?: AllowedRouteKind[];
}

export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: ProtocolType;
  tls?: ListenerTLSConfig;
  allowedRoutes?: AllowedRoutes;
}

/** ListenerSet.spec.listeners[]: same fields as a Gateway Listener. */
export type ListenerEntry = Listener;

export interface GatewaySpecAddress {
  type?: string;
  value?: string;
}

export interface AllowedListeners {
  namespaces?: { from?: FromListenerNamespaces; selector?: LabelSelector };
}

export interface GatewayInfrastructure {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  parametersRef?: { group: string; kind: string; name: string };
}

/** A reference to a CA bundle (caCertificateRefs): group and kind are required by the CRD. */
export interface CACertificateReference {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
}

export type FrontendValidationMode = 'AllowValidOnly' | 'AllowInsecureFallback';

/** Gateway spec.tls.frontend.{default,perPort[].tls}: client certificate validation. */
export interface FrontendTLSConfig {
  validation?: { caCertificateRefs?: CACertificateReference[]; mode?: FrontendValidationMode };
}

export interface GatewayTLSConfig {
  frontend?: {
    default?: FrontendTLSConfig;
    perPort?: { port: number; tls: FrontendTLSConfig }[];
  };
}

export interface GatewaySpec {
  gatewayClassName: string;
  listeners?: Listener[];
  addresses?: GatewaySpecAddress[];
  infrastructure?: GatewayInfrastructure;
  allowedListeners?: AllowedListeners;
  tls?: GatewayTLSConfig;
}

export interface GatewayStatusAddress {
  type: string;
  value: string;
}

export interface ListenerStatus {
  name: string;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  conditions: Condition[];
}

/** ListenerSet.status.listeners[] (no port field, see docs/gateway-api.md §5). */
export type ListenerEntryStatus = ListenerStatus;

export interface GatewayStatus {
  addresses?: GatewayStatusAddress[];
  conditions: Condition[];
  listeners: ListenerStatus[];
  attachedListenerSets: number;
}

// ---------------------------------------------------------------------------------------------
// ListenerSet

export interface ListenerSetSpec {
  parentRef: ParentGatewayReference;
  listeners?: ListenerEntry[];
}

export interface ListenerSetStatus {
  conditions: Condition[];
  listeners: ListenerEntryStatus[];
}

// ---------------------------------------------------------------------------------------------
// ReferenceGrant

export interface ReferenceGrantFrom {
  group: string;
  kind: string;
  namespace: string;
}

export interface ReferenceGrantTo {
  group: string;
  kind: string;
  name?: string;
}

export interface ReferenceGrantSpec {
  from?: ReferenceGrantFrom[];
  to?: ReferenceGrantTo[];
}

// ---------------------------------------------------------------------------------------------
// Routes: common

export interface RouteParentStatus {
  parentRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

export interface RouteStatus {
  parents: RouteParentStatus[];
}

export interface CommonRouteSpec {
  parentRefs?: ParentReference[];
}

// ---------------------------------------------------------------------------------------------
// HTTPRoute

export type PathMatchType = 'Exact' | 'PathPrefix' | 'RegularExpression';
export type HeaderMatchType = 'Exact' | 'RegularExpression';

export interface HTTPPathMatch {
  type?: PathMatchType;
  value?: string;
}

export interface HTTPHeaderMatch {
  type?: HeaderMatchType;
  name: string;
  value: string;
}

export interface HTTPQueryParamMatch {
  type?: HeaderMatchType;
  name: string;
  value: string;
}

export interface HTTPRouteMatch {
  path?: HTTPPathMatch;
  headers?: HTTPHeaderMatch[];
  queryParams?: HTTPQueryParamMatch[];
  method?: string;
}

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPHeaderFilter {
  set?: HTTPHeader[];
  add?: HTTPHeader[];
  remove?: string[];
}

export interface HTTPPathModifier {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

export interface HTTPRequestRedirectFilter {
  scheme?: string;
  hostname?: string;
  path?: HTTPPathModifier;
  port?: number;
  statusCode?: number;
}

export interface HTTPURLRewriteFilter {
  hostname?: string;
  path?: HTTPPathModifier;
}

export interface HTTPRequestMirrorFilter {
  backendRef: BackendObjectReference;
  percent?: number;
  fraction?: { numerator: number; denominator?: number };
}

export interface LocalObjectReference {
  group: string;
  kind: string;
  name: string;
}

/** HTTPRoute filter `cors` (GEP-1767). */
export interface HTTPCORSFilter {
  allowOrigins?: string[];
  allowCredentials?: boolean;
  allowMethods?: string[];
  allowHeaders?: string[];
  exposeHeaders?: string[];
  maxAge?: number;
}

export interface HTTPRouteFilter {
  type: string;
  requestHeaderModifier?: HTTPHeaderFilter;
  responseHeaderModifier?: HTTPHeaderFilter;
  requestRedirect?: HTTPRequestRedirectFilter;
  urlRewrite?: HTTPURLRewriteFilter;
  requestMirror?: HTTPRequestMirrorFilter;
  extensionRef?: LocalObjectReference;
  cors?: HTTPCORSFilter;
  externalAuth?: Record<string, unknown>;
}

export interface HTTPBackendRef extends BackendRef {
  filters?: HTTPRouteFilter[];
}

export interface HTTPRouteTimeouts {
  request?: string;
  backendRequest?: string;
}

/** HTTPRouteRule.retry (GEP-1731; experimental channel). */
export interface HTTPRouteRetry {
  codes?: number[];
  attempts?: number;
  backoff?: string;
}

export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  timeouts?: HTTPRouteTimeouts;
  retry?: HTTPRouteRetry;
}

export interface HTTPRouteSpec extends CommonRouteSpec {
  hostnames?: string[];
  rules?: HTTPRouteRule[];
}

// ---------------------------------------------------------------------------------------------
// GRPCRoute

export interface GRPCMethodMatch {
  type?: 'Exact' | 'RegularExpression';
  service?: string;
  method?: string;
}

export interface GRPCHeaderMatch {
  type?: HeaderMatchType;
  name: string;
  value: string;
}

export interface GRPCRouteMatch {
  method?: GRPCMethodMatch;
  headers?: GRPCHeaderMatch[];
}

export interface GRPCRouteFilter {
  type: string;
  requestHeaderModifier?: HTTPHeaderFilter;
  responseHeaderModifier?: HTTPHeaderFilter;
  requestMirror?: HTTPRequestMirrorFilter;
  extensionRef?: LocalObjectReference;
}

export interface GRPCBackendRef extends BackendRef {
  filters?: GRPCRouteFilter[];
}

export interface GRPCRouteRule {
  name?: string;
  matches?: GRPCRouteMatch[];
  filters?: GRPCRouteFilter[];
  backendRefs?: GRPCBackendRef[];
}

export interface GRPCRouteSpec extends CommonRouteSpec {
  hostnames?: string[];
  rules?: GRPCRouteRule[];
}

// ---------------------------------------------------------------------------------------------
// TLSRoute

export interface TLSRouteRule {
  name?: string;
  backendRefs?: BackendRef[];
}

export interface TLSRouteSpec extends CommonRouteSpec {
  hostnames?: string[];
  rules?: TLSRouteRule[];
}

// ---------------------------------------------------------------------------------------------
// TCPRoute and UDPRoute (the same shape: exactly one rule of backendRefs, no hostnames)

export interface L4RouteRule {
  name?: string;
  backendRefs?: BackendRef[];
}

export interface L4RouteSpec extends CommonRouteSpec {
  rules?: L4RouteRule[];
}

// ---------------------------------------------------------------------------------------------
// Typed views of store objects

export type GatewayClassObject = KubeObject & { spec?: GatewayClassSpec };
export type GatewayObject = KubeObject & { spec?: GatewaySpec };
export type ListenerSetObject = KubeObject & { spec?: ListenerSetSpec };
export type ReferenceGrantObject = KubeObject & { spec?: ReferenceGrantSpec };
export type HTTPRouteObject = KubeObject & { spec?: HTTPRouteSpec };
export type GRPCRouteObject = KubeObject & { spec?: GRPCRouteSpec };
export type TLSRouteObject = KubeObject & { spec?: TLSRouteSpec };

/** Returns a Gateway's spec, or an empty one (no class, no listeners) when the object has none. */
export function gatewaySpec(obj: KubeObject): GatewaySpec {
  return (obj.spec ?? { gatewayClassName: '' }) as GatewaySpec;
}

/** Returns a ListenerSet's spec, or undefined when it has none or names no parentRef. */
export function listenerSetSpec(obj: KubeObject): ListenerSetSpec | undefined {
  const spec = obj.spec as ListenerSetSpec | undefined;
  return spec && spec.parentRef ? spec : undefined;
}

/** Returns a GatewayClass's spec as typed, or undefined when the object has none. */
export function gatewayClassSpec(obj: KubeObject): GatewayClassSpec | undefined {
  return obj.spec as GatewayClassSpec | undefined;
}

/** Returns a ReferenceGrant's spec, or an empty one (no from, no to) when the object has none. */
export function referenceGrantSpec(obj: KubeObject): ReferenceGrantSpec {
  return (obj.spec ?? {}) as ReferenceGrantSpec;
}

/**
 * Returns the API group of a reference with a missing group written as "" (the core group).
 *
 * An empty or missing group both mean the core group; the API server may store either.
 */
export function normalizeGroup(group: string | undefined): string {
  return group ?? '';
}
