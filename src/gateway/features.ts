/**
 * What Convoy supports, named exactly as Gateway API v1.6.1 `pkg/features` spells it. This list
 * is published in GatewayClass.status.supportedFeatures, and the conformance suite infers which
 * tests to run from it: list only what is implemented end to end (route compiler in routes/,
 * Envoy translation in src/envoy). Not claimed: static addresses, backend client certificates,
 * TCP/UDP.
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
  // TLSRoute: passthrough (core), terminate (extended), both on one port (docs/gateway-api.md §27).
  'TLSRoute',
  'TLSRouteModeTerminate',
  'TLSRouteModeMixed',
];

/** Returns GatewayClass `status.supportedFeatures`: sorted, de-duplicated `{name}` objects (at most 64). */
export function supportedFeatures(): { name: string }[] {
  return [...new Set(SUPPORTED_FEATURES)].sort().map((name) => ({ name }));
}

/** Whether TLS Passthrough and Terminate listeners may share a port (feature TLSRouteModeMixed). */
export const SUPPORTS_TLS_MODE_MIXED = SUPPORTED_FEATURES.includes('TLSRouteModeMixed');
