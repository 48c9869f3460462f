import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { FrontendTLSConfig } from '../../src/gateway/api';
import type { KubeObject } from '../../src/store/objects';
import { translateFleet } from '../../src/envoy/translate';
import {
  OPTS,
  backendRef,
  backendService,
  condSummary,
  configMap,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  referenceGrant,
  storeOf,
  tlsListener,
  tlsSecret,
} from '../support/objects';
import { ROOT_CERT, TENANT_CERT } from '../support/certs';

/** Client certificate validation (Gateway spec.tls.frontend), docs/gateway-api.md §25. */

const caRef = (name: string, extra: Record<string, string> = {}) => ({
  group: '',
  kind: 'ConfigMap',
  name,
  ...extra,
});
const validation = (refs: object[], mode?: string): FrontendTLSConfig =>
  ({ validation: { caCertificateRefs: refs, ...(mode ? { mode } : {}) } }) as FrontendTLSConfig;

function frontendGateway(
  frontend: { default?: FrontendTLSConfig; perPort?: { port: number; tls: FrontendTLSConfig }[] },
  listeners = [
    httpsListener('https', 443, undefined, 'cert'),
    httpsListener('other', 8443, 'second.example.com', 'cert'),
    httpListener('http', 80),
  ],
): KubeObject {
  return gateway('gw', listeners, {
    allowedListeners: { namespaces: { from: 'Same' } },
    spec: { tls: { frontend } },
  });
}

const base = [
  gatewayClass(),
  tlsSecret('cert'),
  configMap('ca', { 'ca.crt': ROOT_CERT }),
  configMap('ca-2', { 'ca.crt': TENANT_CERT }),
  ...backendService('web', 80, ['10.0.0.1']),
  httpRoute('web', [{ backendRefs: [backendRef('web', 80)] }]),
];

function build(...objects: KubeObject[]) {
  return buildGateways(storeOf(...base, ...objects), OPTS);
}

function listenerConditions(result: ReturnType<typeof build>, listener: string, kind = 'Gateway') {
  const s = result.statuses.find((x) => x.kind === kind);
  const l = (s?.status.listeners as { name: string; conditions: never[] }[]).find((x) => x.name === listener);
  return condSummary(l?.conditions).filter((c) => !/^(Conflicted|OverlappingTLSConfig)=/.test(c));
}

describe('frontend validation: status', () => {
  test('a valid default applies to every HTTPS port; the per-port entry overrides it; HTTP is untouched', () => {
    const result = build(
      frontendGateway({
        default: validation([caRef('ca')]),
        perPort: [{ port: 8443, tls: validation([caRef('ca-2')]) }],
      }),
    );
    for (const l of ['https', 'other', 'http'])
      assert.deepEqual(listenerConditions(result, l), [
        'Accepted=True/Accepted',
        'Programmed=True/Programmed',
        'ResolvedRefs=True/ResolvedRefs',
      ]);
    const fleet = result.fleets[0];
    assert.deepEqual(
      fleet.ports.flatMap((p) => p.filterChains.map((c) => [c.name, c.clientValidation])),
      [
        [
          'Gateway/default/gw/https',
          { caBundle: 'Gateway/default/gw/client-ca/default', mode: 'AllowValidOnly' },
        ],
        [
          'Gateway/default/gw/other',
          { caBundle: 'Gateway/default/gw/client-ca/8443', mode: 'AllowValidOnly' },
        ],
      ],
    );
    assert.deepEqual(
      fleet.caBundles?.map((b) => [b.name, b.caCertificates]),
      [
        ['Gateway/default/gw/client-ca/8443', TENANT_CERT],
        ['Gateway/default/gw/client-ca/default', ROOT_CERT],
      ],
    );
    const gw = result.statuses.find((s) => s.kind === 'Gateway');
    assert.ok(!condSummary(gw?.status.conditions as never[]).some((c) => c.startsWith('InsecureFrontend')));
  });

  test('each kind of unusable reference gets the spec reason, and NoValidCACertificate when none is usable', () => {
    const result = build(
      frontendGateway(
        {
          default: validation([caRef('ca')]),
          perPort: [
            { port: 7443, tls: validation([caRef('missing')]) },
            { port: 8443, tls: validation([{ group: '', kind: 'Service', name: 'web' }]) },
            { port: 6443, tls: validation([caRef('ca', { namespace: 'elsewhere' })]) },
            { port: 5443, tls: validation([caRef('no-key')]) },
            { port: 4443, tls: validation([caRef('garbage')]) },
          ],
        },
        [
          httpsListener('https', 443, undefined, 'cert'),
          httpsListener('unresolved', 7443, 'a.example.com', 'cert'),
          httpsListener('kind', 8443, 'b.example.com', 'cert'),
          httpsListener('grant', 6443, 'c.example.com', 'cert'),
          httpsListener('no-key', 5443, 'd.example.com', 'cert'),
          httpsListener('garbage', 4443, 'e.example.com', 'cert'),
        ],
      ),
      configMap('no-key', { other: ROOT_CERT }),
      configMap('garbage', { 'ca.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }),
      configMap('ca', { 'ca.crt': ROOT_CERT }, { namespace: 'elsewhere' }),
    );
    const refused = (reason: string) => [
      'Accepted=False/NoValidCACertificate',
      'Programmed=False/Invalid',
      `ResolvedRefs=False/${reason}`,
    ];
    assert.deepEqual(listenerConditions(result, 'https').slice(0, 1), ['Accepted=True/Accepted']);
    assert.deepEqual(listenerConditions(result, 'unresolved'), refused('InvalidCACertificateRef'));
    assert.deepEqual(listenerConditions(result, 'kind'), refused('InvalidCACertificateKind'));
    assert.deepEqual(listenerConditions(result, 'grant'), refused('RefNotPermitted'));
    assert.deepEqual(listenerConditions(result, 'no-key'), refused('InvalidCACertificateRef'));
    assert.deepEqual(listenerConditions(result, 'garbage'), refused('InvalidCACertificateRef'));
    // Nothing of a refused listener reaches Envoy.
    assert.deepEqual(
      result.fleets[0].ports.map((p) => p.port),
      [443],
    );
  });

  test('a ReferenceGrant from Gateways admits a ConfigMap in another namespace', () => {
    const grant = referenceGrant(
      'gateways',
      {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default' }],
        to: [{ group: '', kind: 'ConfigMap' }],
      },
      { namespace: 'elsewhere' },
    );
    const result = build(
      frontendGateway({ default: validation([caRef('shared', { namespace: 'elsewhere' })]) }),
      configMap('shared', { 'ca.crt': TENANT_CERT }, { namespace: 'elsewhere' }),
      grant,
    );
    assert.deepEqual(listenerConditions(result, 'https')[2], 'ResolvedRefs=True/ResolvedRefs');
    assert.equal(result.fleets[0].caBundles?.[0].caCertificates, TENANT_CERT);
  });

  test('one usable reference among several: served, but ResolvedRefs names the unusable one', () => {
    const result = build(
      frontendGateway({ default: validation([caRef('missing'), caRef('ca'), caRef('ca-2')]) }),
    );
    assert.deepEqual(listenerConditions(result, 'https'), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'ResolvedRefs=False/InvalidCACertificateRef',
    ]);
    assert.equal(result.fleets[0].caBundles?.[0].caCertificates, ROOT_CERT + TENANT_CERT);
  });

  test('AllowInsecureFallback sets the Gateway condition and the chains mode; TLS listeners are not validated', () => {
    const result = build(
      frontendGateway({ default: validation([caRef('ca')], 'AllowInsecureFallback') }, [
        httpsListener('https', 443, 'a.example.com', 'cert'),
        tlsListener('tls', 443, 'b.example.com', 'Terminate', 'cert'),
      ]),
    );
    const gw = result.statuses.find((s) => s.kind === 'Gateway');
    assert.ok(
      condSummary(gw?.status.conditions as never[]).includes(
        'InsecureFrontendValidationMode=True/ConfigurationChanged',
      ),
    );
    const chains = result.fleets[0].ports[0].filterChains;
    assert.deepEqual(
      chains.map((c) => c.clientValidation?.mode),
      ['AllowInsecureFallback', undefined],
    );
  });

  test("ListenerSet listeners get their port's validation, and its problems", () => {
    const result = build(
      frontendGateway({
        default: validation([caRef('ca')]),
        perPort: [{ port: 9443, tls: validation([caRef('missing')]) }],
      }),
      listenerSet('set', { name: 'gw' }, [
        httpsListener('tenant', 443, 'tenant.example.com', 'cert'),
        httpsListener('broken', 9443, 'broken.example.com', 'cert'),
      ]),
    );
    assert.deepEqual(listenerConditions(result, 'tenant', 'ListenerSet'), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'ResolvedRefs=True/ResolvedRefs',
    ]);
    assert.deepEqual(listenerConditions(result, 'broken', 'ListenerSet'), [
      'Accepted=False/NoValidCACertificate',
      'Programmed=False/Invalid',
      'ResolvedRefs=False/InvalidCACertificateRef',
    ]);
    const chain = result.fleets[0].ports
      .flatMap((p) => p.filterChains)
      .find((c) => c.name === 'ListenerSet/default/set/tenant');
    assert.deepEqual(chain?.clientValidation, {
      caBundle: 'Gateway/default/gw/client-ca/default',
      mode: 'AllowValidOnly',
    });
  });
});

describe('frontend validation: Envoy', () => {
  /** Returns the DownstreamTlsContext of each chain of the first listener, decoded. */
  function tlsContexts(objects: KubeObject[]) {
    const res = translateFleet(build(...objects).fleets[0]);
    const chains = res.listeners.flatMap((l) => l.filter_chains ?? []).filter((c) => c.transport_socket);
    return {
      res,
      contexts: chains.map((c) => c.transport_socket?.typed_config as unknown as Record<string, unknown>),
    };
  }

  test('AllowValidOnly requires a certificate validated by the SDS bundle; the bundle is a Secret', () => {
    const { res, contexts } = tlsContexts([frontendGateway({ default: validation([caRef('ca')]) })]);
    const ctx = contexts[0] as {
      require_client_certificate?: { value: boolean };
      common_tls_context: { validation_context_sds_secret_config?: { name: string } };
    };
    assert.equal(ctx.require_client_certificate?.value, true);
    assert.equal(
      ctx.common_tls_context.validation_context_sds_secret_config?.name,
      'Gateway/default/gw/client-ca/default',
    );
    const secret = res.secrets.find((s) => s.name === 'Gateway/default/gw/client-ca/default');
    assert.deepEqual(secret?.validation_context, { trusted_ca: { inline_string: ROOT_CERT } });
  });

  test('AllowInsecureFallback asks for a certificate, requires none and accepts untrusted ones', () => {
    const { contexts } = tlsContexts([
      frontendGateway({ default: validation([caRef('ca')], 'AllowInsecureFallback') }),
    ]);
    const ctx = contexts[0] as {
      require_client_certificate?: { value: boolean };
      common_tls_context: {
        combined_validation_context?: {
          default_validation_context: { trust_chain_verification: unknown };
          validation_context_sds_secret_config: { name: string };
        };
      };
    };
    assert.equal(ctx.require_client_certificate?.value, false);
    const combined = ctx.common_tls_context.combined_validation_context;
    assert.ok(
      ['ACCEPT_UNTRUSTED', 1].includes(
        combined?.default_validation_context.trust_chain_verification as never,
      ),
    );
    assert.equal(combined?.validation_context_sds_secret_config.name, 'Gateway/default/gw/client-ca/default');
  });

  test('a CA bundle change changes only its Secret, never the Listener', () => {
    const before = translateFleet(build(frontendGateway({ default: validation([caRef('ca')]) })).fleets[0]);
    const after = translateFleet(
      build(
        frontendGateway({ default: validation([caRef('ca')]) }),
        configMap('ca', { 'ca.crt': TENANT_CERT }),
      ).fleets[0],
    );
    assert.deepEqual(after.listeners, before.listeners);
    assert.notDeepEqual(after.secrets, before.secrets);
  });
});
