/**
 * What Convoy supports, named exactly as Gateway API v1.6.1 `pkg/features` spells it. This list
 * is published in GatewayClass.status.supportedFeatures, and the conformance suite infers which
 * tests to run from it: list only what is implemented end to end (route compiler in routes/,
 * Envoy translation in src/envoy); classes with managed fleets add MANAGED_FLEET_FEATURES.
 */

export const SUPPORTED_FEATURES: readonly string[] = [
  // Gateway (core + extended)
  'Gateway',
  'GatewayPort8080',
  'GatewayHTTPListenerIsolation',
  'ListenerSet',
  'ReferenceGrant',
  // Client certificate validation (spec.tls.frontend), docs/gateway-api.md §25.
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  // 421 for requests coalesced across HTTPS listeners of one port, docs/gateway-api.md §26.
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  // HTTPRoute (core + extended)
  'HTTPRoute',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteMethodMatching',
  'HTTPRouteResponseHeaderModification',
  'HTTPRoutePortRedirect',
  'HTTPRouteSchemeRedirect',
  'HTTPRoutePathRedirect',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteHostRewrite',
  'HTTPRoutePathRewrite',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteBackendTimeout',
  'HTTPRouteParentRefPort',
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteBackendProtocolH2C',
  // Retries (GEP-1731; `retry` is an experimental-channel field), docs/gateway-api.md §19.
  'HTTPRouteRetry',
  'HTTPRouteRetryBackendTimeout',
  'HTTPRouteRetryConnectionError',
  'HTTPRouteCORS',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteBackendProtocolWebSocket',
  // GRPCRoute
  'GRPCRoute',
  'GRPCRouteNamedRouteRule',
  // TLS to backends, docs/gateway-api.md §24.
  'BackendTLSPolicy',
  'BackendTLSPolicySANValidation',
  'GatewayBackendClientCertificate',
  // TLSRoute: passthrough (core), terminate (extended), both on one port (docs/gateway-api.md §27).
  'TLSRoute',
  'TLSRouteModeTerminate',
  'TLSRouteModeMixed',
  // TCPRoute and UDPRoute: tcp_proxy and udp_proxy listeners with weights (docs/gateway-api.md §28);
  // all 8 TCPRoute and 9 UDPRoute conformance tests pass with traffic.
  'TCPRoute',
  'UDPRoute',
];

/**
 * What a class claims on top when its Gateways get managed fleets (docs/operations.md §22):
 * spec.addresses requested of the fleet's Service, value-less entries picked by it, and
 * spec.infrastructure labels/annotations on every generated object. Convoy does none of this for
 * the Envoys of an unmanaged class, so such a class does not claim them.
 */
export const MANAGED_FLEET_FEATURES: readonly string[] = [
  'GatewayStaticAddresses',
  'GatewayAddressEmpty',
  'GatewayInfrastructurePropagation',
];

/**
 * Returns GatewayClass `status.supportedFeatures`: sorted, de-duplicated `{name}` objects (at most
 * 64), with MANAGED_FLEET_FEATURES for a class whose Gateways get managed fleets.
 */
export function supportedFeatures(managedFleets = false): { name: string }[] {
  const names = managedFleets ? [...SUPPORTED_FEATURES, ...MANAGED_FLEET_FEATURES] : SUPPORTED_FEATURES;
  return [...new Set(names)].sort().map((name) => ({ name }));
}

/** Whether TLS Passthrough and Terminate listeners may share a port (feature TLSRouteModeMixed). */
export const SUPPORTS_TLS_MODE_MIXED = SUPPORTED_FEATURES.includes('TLSRouteModeMixed');
