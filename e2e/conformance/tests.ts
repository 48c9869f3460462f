/**
 * The Gateway API v1.6.1 conformance tests this lane can judge without kubelet, pods or a data
 * plane: each one only reads status written by Convoy (no `WaitForGatewayAddress`, no request
 * sent). Features are the test's `Features` list in the suite's source
 * (`conformance/tests/<file>.go` of sigs.k8s.io/gateway-api/conformance v1.6.1); a test runs only
 * when Convoy's GatewayClass claims every one of them, which is also the suite's own rule.
 *
 * `LIMITED` lists tests that read status only but that this lane cannot satisfy, with the reason.
 */

export interface StatusOnlyTest {
  name: string;
  features: string[];
  /** The test returns at once (an empty pass) when this feature is claimed: it checks the opposite. */
  vacuousWhen?: string;
}

export const STATUS_ONLY_TESTS: StatusOnlyTest[] = [
  // Gateway and GatewayClass
  { name: 'GatewayClassObservedGenerationBump', features: ['Gateway'] },
  { name: 'GatewayInvalidParametersRef', features: ['Gateway'] },
  { name: 'GatewayInvalidRouteKind', features: ['Gateway'] },
  { name: 'GatewayInvalidTLSConfiguration', features: ['Gateway'] },
  { name: 'GatewayListenerUnsupportedProtocol', features: ['Gateway'] },
  { name: 'GatewayModifyListeners', features: ['Gateway'] },
  { name: 'GatewayObservedGenerationBump', features: ['Gateway'] },
  { name: 'GatewaySecretInvalidReferenceGrant', features: ['Gateway', 'ReferenceGrant'] },
  { name: 'GatewaySecretMissingReferenceGrant', features: ['Gateway', 'ReferenceGrant'] },
  { name: 'GatewaySecretReferenceGrantAllInNamespace', features: ['Gateway', 'ReferenceGrant'] },
  { name: 'GatewaySecretReferenceGrantSpecific', features: ['Gateway', 'ReferenceGrant'] },
  { name: 'GatewayWithAttachedRoutes', features: ['Gateway', 'HTTPRoute'] },
  { name: 'GatewayWithAttachedRoutesWithPort8080', features: ['Gateway', 'GatewayPort8080', 'HTTPRoute'] },
  { name: 'GatewayStaticAddresses', features: ['Gateway', 'GatewayStaticAddresses'] },
  {
    name: 'GatewayInvalidFrontendClientCertificateValidation',
    features: ['Gateway', 'HTTPRoute', 'ReferenceGrant', 'GatewayFrontendClientCertificateValidation'],
  },
  {
    name: 'GatewayInvalidTLSBackendConfiguration',
    features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'],
  },
  { name: 'GatewayInfrastructure', features: ['Gateway', 'GatewayInfrastructurePropagation'] },
  { name: 'BackendTLSPolicyObservedGenerationBump', features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'] },
  // HTTPRoute
  { name: 'HTTPRouteDisallowedKind', features: ['Gateway', 'HTTPRoute', 'TLSRoute'] },
  { name: 'HTTPRouteInvalidCrossNamespaceParentRef', features: ['Gateway', 'HTTPRoute'] },
  {
    name: 'HTTPRouteInvalidParentRefNotMatchingListenerPort',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteDestinationPortMatching'],
  },
  { name: 'HTTPRouteInvalidParentRefNotMatchingSectionName', features: ['Gateway', 'HTTPRoute'] },
  {
    name: 'HTTPRouteInvalidParentRefSectionNameNotMatchingPort',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteParentRefPort'],
  },
  { name: 'HTTPRouteObservedGenerationBump', features: ['Gateway', 'HTTPRoute'] },
  // ListenerSet
  { name: 'ListenerSetDefaultNotAllowed', features: ['Gateway', 'ListenerSet'] },
  { name: 'ListenerSetAllowedNamespaceNone', features: ['Gateway', 'ListenerSet'] },
  { name: 'ListenerSetAllowedNamespaceSame', features: ['Gateway', 'ListenerSet'] },
  { name: 'ListenerSetAllowedNamespaceSelector', features: ['Gateway', 'ListenerSet'] },
  { name: 'ListenerSetAllowedRoutesSupportedKinds', features: ['Gateway', 'ListenerSet', 'TLSRoute'] },
  { name: 'ListenerSetHostnameConflict', features: ['Gateway', 'ListenerSet'] },
  { name: 'ListenerSetProtocolConflict', features: ['Gateway', 'ListenerSet'] },
  { name: 'ListenerSetReferenceGrant', features: ['Gateway', 'ListenerSet', 'ReferenceGrant'] },
  { name: 'ListenerSetRouteStatusScopedToParentRef', features: ['Gateway', 'ListenerSet', 'HTTPRoute'] },
  // TLSRoute
  { name: 'TLSRouteInvalidNoMatchingListenerHostname', features: ['Gateway', 'TLSRoute'] },
  { name: 'TLSRouteInvalidNoMatchingListener', features: ['Gateway', 'TLSRoute'] },
  { name: 'TLSRouteListenerPassthroughSupportedKinds', features: ['Gateway', 'TLSRoute'] },
  {
    name: 'TLSRouteListenerTerminateSupportedKinds',
    features: ['Gateway', 'TLSRoute', 'TLSRouteModeTerminate'],
  },
  {
    name: 'TLSRouteListenerTerminateNotSupported',
    features: ['Gateway', 'TLSRoute'],
    vacuousWhen: 'TLSRouteModeTerminate',
  },
  {
    name: 'TLSRouteListenerMixedTerminationNotSupported',
    features: ['Gateway', 'TLSRoute', 'TLSRouteModeTerminate'],
    vacuousWhen: 'TLSRouteModeMixed',
  },
  // Waits for status.addresses: the lane runs Convoy with --gateway-address 127.0.0.1.
  { name: 'TLSRouteInvalidReferenceGrant', features: ['Gateway', 'TLSRoute', 'ReferenceGrant'] },
  // TCPRoute, UDPRoute (provisional in v1.6.1)
  { name: 'TCPRouteInvalidBackendRefNonexistent', features: ['Gateway', 'TCPRoute'] },
  { name: 'TCPRouteInvalidNonTCPListener', features: ['Gateway', 'TCPRoute'] },
  { name: 'UDPRouteInvalidBackendRefNonexistent', features: ['Gateway', 'UDPRoute'] },
  { name: 'UDPRouteNotAllowedByListeners', features: ['Gateway', 'UDPRoute'] },
];

/** Status-only tests that this lane cannot satisfy, and why. */
export const LIMITED: Record<string, string> = {};

export interface PlannedTest {
  name: string;
  /** Why it does not run; undefined when it runs. */
  skip?: string;
}

/** Which tests run against the features Convoy claims, and why the others do not. */
export function planTests(claimed: Iterable<string>, only?: string[]): PlannedTest[] {
  const have = new Set(claimed);
  const out: PlannedTest[] = [];
  for (const t of STATUS_ONLY_TESTS) {
    const missing = t.features.filter((f) => !have.has(f));
    if (only && !only.includes(t.name)) continue;
    if (missing.length > 0) {
      out.push({ name: t.name, skip: `feature not claimed by Convoy: ${missing.join(', ')}` });
    } else if (t.vacuousWhen && have.has(t.vacuousWhen)) {
      out.push({
        name: t.name,
        skip: `Convoy claims ${t.vacuousWhen}; the test only checks implementations that do not (it would pass without checking anything)`,
      });
    } else {
      out.push({ name: t.name });
    }
  }
  for (const [name, reason] of Object.entries(LIMITED)) {
    if (only && !only.includes(name)) continue;
    out.push({ name, skip: reason });
  }
  return out;
}
