import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  acceptedGatewayClasses,
  gatewayClassStatuses,
  ownedGatewayClasses,
  resolveGatewayClasses,
} from '../../src/gateway/gatewayclass';
import {
  MANAGED_FLEET_FEATURES,
  SUPPORTED_FEATURES,
  SUPPORTS_TLS_MODE_MIXED,
} from '../../src/gateway/features';
import { CONTROLLER, gatewayClass, NOW, OPTS, storeOf } from '../support/objects';

describe('ownedGatewayClasses', () => {
  test('only classes with our controllerName', () => {
    const view = storeOf(gatewayClass('a'), gatewayClass('b', 'other.io/controller'), gatewayClass('c'));
    assert.deepEqual([...ownedGatewayClasses(view, OPTS)].sort(), ['a', 'c']);
  });
  test('a class being deleted is not owned', () => {
    const gc = gatewayClass('a');
    gc.metadata.deletionTimestamp = NOW;
    assert.equal(ownedGatewayClasses(storeOf(gc), OPTS).size, 0);
  });
});

describe('gatewayClassStatuses', () => {
  test('owned classes are Accepted with observedGeneration and sorted supportedFeatures', () => {
    const view = storeOf(
      gatewayClass('z', CONTROLLER, { generation: 3 }),
      gatewayClass('x', 'other.io/c'),
      gatewayClass('a', CONTROLLER, { generation: 1 }),
    );
    const statuses = gatewayClassStatuses(resolveGatewayClasses(view, OPTS), OPTS);
    assert.deepEqual(
      statuses.map((s) => s.metadata.name),
      ['a', 'z'],
    );
    const z = statuses[1];
    assert.equal(z.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.equal(z.kind, 'GatewayClass');
    assert.deepEqual(z.metadata, { name: 'z', generation: 3 });
    assert.deepEqual(z.status.conditions, [
      {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
        message: 'GatewayClass is accepted by Convoy',
        observedGeneration: 3,
        lastTransitionTime: NOW,
      },
    ]);
    const features = (z.status.supportedFeatures as { name: string }[]).map((f) => f.name);
    assert.deepEqual(features, [...features].sort());
    assert.ok(features.length <= 64);
    for (const required of [
      'Gateway',
      'HTTPRoute',
      'GRPCRoute',
      'TLSRoute',
      'ReferenceGrant',
      'ListenerSet',
    ]) {
      assert.ok(features.includes(required), required);
    }
    // Spelled as in v1.6.1 pkg/features: the old experimental name must not appear.
    assert.ok(!features.includes('GatewayListenerSet'));
    assert.deepEqual(new Set(features), new Set(SUPPORTED_FEATURES));
  });
  test('no owned classes → no statuses', () => {
    assert.deepEqual(
      gatewayClassStatuses(resolveGatewayClasses(storeOf(gatewayClass('x', 'other.io/c')), OPTS), OPTS),
      [],
    );
  });
});

describe('GatewayClass parametersRef', () => {
  test('Convoy takes no parameters: Accepted=False/InvalidParameters', () => {
    const gc = gatewayClass('p', CONTROLLER, { generation: 2 });
    (gc.spec as Record<string, unknown>).parametersRef = { group: 'example.io', kind: 'Params', name: 'x' };
    const [st] = gatewayClassStatuses(resolveGatewayClasses(storeOf(gc), OPTS), OPTS);
    const [cond] = st.status.conditions as {
      type: string;
      status: string;
      reason: string;
      observedGeneration: number;
    }[];
    assert.deepEqual(
      [cond.type, cond.status, cond.reason, cond.observedGeneration],
      ['Accepted', 'False', 'InvalidParameters', 2],
    );
    assert.ok(ownedGatewayClasses(storeOf(gc), OPTS).has('p'), 'still owned (status is ours to write)');
    assert.equal(acceptedGatewayClasses(resolveGatewayClasses(storeOf(gc), OPTS)).size, 0);
  });
});

describe('supported feature names', () => {
  // Names as spelled in Gateway API v1.6.1 pkg/features (gateway, httproute, grpcroute, tlsroute,
  // tcproute, udproute, referencegrant, backendtlspolicy). A typo here would make the conformance suite silently skip tests.
  const KNOWN = new Set([
    'Gateway',
    'GatewayPort8080',
    'GatewayStaticAddresses',
    'GatewayHTTPListenerIsolation',
    'GatewayHTTPSListenerDetectMisdirectedRequests',
    'GatewayInfrastructurePropagation',
    'GatewayAddressEmpty',
    'BackendTLSPolicy',
    'BackendTLSPolicySANValidation',
    'GatewayBackendClientCertificate',
    'GatewayFrontendClientCertificateValidation',
    'GatewayFrontendClientCertificateValidationInsecureFallback',
    'ListenerSet',
    'ReferenceGrant',
    'TCPRoute',
    'UDPRoute',
    'HTTPRoute',
    'HTTPRouteDestinationPortMatching',
    'HTTPRouteBackendRequestHeaderModification',
    'HTTPRouteQueryParamMatching',
    'HTTPRouteMethodMatching',
    'HTTPRouteResponseHeaderModification',
    'HTTPRoutePortRedirect',
    'HTTPRouteSchemeRedirect',
    'HTTPRoutePathRedirect',
    'HTTPRouteHostRewrite',
    'HTTPRoutePathRewrite',
    'HTTPRouteRequestMirror',
    'HTTPRouteRequestMultipleMirrors',
    'HTTPRouteRequestPercentageMirror',
    'HTTPRouteRequestTimeout',
    'HTTPRouteBackendTimeout',
    'HTTPRouteParentRefPort',
    'HTTPRouteBackendProtocolH2C',
    'HTTPRouteBackendProtocolWebSocket',
    'HTTPRouteNamedRouteRule',
    'HTTPRouteCORS',
    'HTTPRouteRetry',
    'HTTPRouteRetryBackendTimeout',
    'HTTPRouteRetryConnectionError',
    'HTTPRoute303RedirectStatusCode',
    'HTTPRoute307RedirectStatusCode',
    'HTTPRoute308RedirectStatusCode',
    'GRPCRoute',
    'GRPCRouteNamedRouteRule',
    'TLSRoute',
    'TLSRouteModeTerminate',
    'TLSRouteModeMixed',
  ]);
  for (const name of [...SUPPORTED_FEATURES, ...MANAGED_FLEET_FEATURES]) {
    test(name, () => assert.ok(KNOWN.has(name), `${name} is not a v1.6.1 feature name`));
  }
  test('TLSRouteModeMixed is claimed, so mixed TLS modes on one port are no ProtocolConflict', () => {
    assert.ok(SUPPORTED_FEATURES.includes('TLSRouteModeMixed'));
    assert.ok(SUPPORTS_TLS_MODE_MIXED);
  });
});
