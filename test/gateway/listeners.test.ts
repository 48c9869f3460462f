import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { detectConflicts, listenerConflict } from '../../src/gateway/conflicts';
import { gatewayAndListenerSetStatuses } from '../../src/gateway/gateway-status';
import { resolveGateways } from '../../src/gateway/gateways';
import {
  listenerHostnameProblem,
  markOverlappingTLS,
  resolveRouteKinds,
} from '../../src/gateway/listener-validation';
import type { Listener, GatewayStatus } from '../../src/gateway/api';
import type { KubeObject } from '../../src/store/objects';
import type { ResolvedListener } from '../../src/gateway/resolved';
import { hostnameMatches } from '../../src/gateway/hostnames';
import {
  condSummary,
  gateway,
  gatewayClass,
  httpListener,
  httpsListener,
  NOW,
  OPTS,
  referenceGrant,
  storeOf,
  tlsSecret,
} from '../support/objects';
import { SELF_CERT, SELF_KEY } from '../support/certs';
import { rng } from '../support/rng';

const OK = [
  'Accepted=True/Accepted',
  'Programmed=True/Programmed',
  'ResolvedRefs=True/ResolvedRefs',
  'Conflicted=False/NoConflicts',
];
const conflicted = (reason: string, rr = 'ResolvedRefs=True/ResolvedRefs') => [
  `Accepted=False/${reason}`,
  `Programmed=False/${reason}`,
  rr,
  `Conflicted=True/${reason}`,
];

function gatewayStatusOf(objects: KubeObject[], name = 'gw'): GatewayStatus {
  const view = storeOf(gatewayClass(), ...objects);
  const gws = resolveGateways(view, OPTS);
  const statuses = gatewayAndListenerSetStatuses(gws, OPTS);
  const st = statuses.find((s) => s.kind === 'Gateway' && s.metadata.name === name);
  assert.ok(st, `no status for Gateway ${name}`);
  return st.status as unknown as GatewayStatus;
}

describe('resolveRouteKinds', () => {
  const G = 'gateway.networking.k8s.io';
  const cases: {
    protocol: string;
    kinds?: { group?: string; kind: string }[];
    want: string[];
    invalid: string[];
  }[] = [
    { protocol: 'HTTP', want: ['HTTPRoute', 'GRPCRoute'], invalid: [] },
    { protocol: 'HTTPS', want: ['HTTPRoute', 'GRPCRoute'], invalid: [] },
    { protocol: 'TLS', want: ['TLSRoute'], invalid: [] },
    { protocol: 'TCP', want: ['TCPRoute'], invalid: [] },
    { protocol: 'UDP', want: ['UDPRoute'], invalid: [] },
    {
      protocol: 'UDP',
      kinds: [{ kind: 'TCPRoute' }],
      want: [],
      invalid: ['gateway.networking.k8s.io/TCPRoute'],
    },
    { protocol: 'FOO', want: [], invalid: [] },
    { protocol: 'HTTP', kinds: [{ kind: 'HTTPRoute' }], want: ['HTTPRoute'], invalid: [] },
    {
      protocol: 'HTTP',
      kinds: [{ kind: 'HTTPRoute' }, { kind: 'HTTPRoute' }],
      want: ['HTTPRoute'],
      invalid: [],
    },
    { protocol: 'HTTP', kinds: [{ kind: 'FooRoute' }], want: [], invalid: [`${G}/FooRoute`] },
    {
      protocol: 'HTTP',
      kinds: [{ kind: 'GRPCRoute' }, { kind: 'TLSRoute' }],
      want: ['GRPCRoute'],
      invalid: [`${G}/TLSRoute`],
    },
    {
      protocol: 'HTTP',
      kinds: [{ group: 'example.io', kind: 'HTTPRoute' }],
      want: [],
      invalid: ['example.io/HTTPRoute'],
    },
    { protocol: 'HTTP', kinds: [{ group: '', kind: 'HTTPRoute' }], want: [], invalid: ['core/HTTPRoute'] },
    { protocol: 'TLS', kinds: [{ kind: 'HTTPRoute' }], want: [], invalid: [`${G}/HTTPRoute`] },
  ];
  for (const c of cases) {
    test(`${c.protocol} ${JSON.stringify(c.kinds ?? 'default')}`, () => {
      const res = resolveRouteKinds(c.protocol, c.kinds);
      assert.deepEqual(
        res.supportedKinds.map((k) => k.kind),
        c.want,
      );
      assert.ok(res.supportedKinds.every((k) => k.group === G));
      assert.deepEqual(res.invalid, c.invalid);
    });
  }
});

describe('listenerConflict', () => {
  type L = { port: number; protocol: string; hostname?: string; tlsMode?: 'Terminate' | 'Passthrough' };
  const cases: { name: string; a: L; b: L; want?: string }[] = [
    { name: 'different ports', a: { port: 80, protocol: 'HTTP' }, b: { port: 81, protocol: 'HTTP' } },
    {
      name: 'HTTP same hostname',
      a: { port: 80, protocol: 'HTTP', hostname: 'a' },
      b: { port: 80, protocol: 'HTTP', hostname: 'A' },
      want: 'HostnameConflict',
    },
    {
      name: 'HTTP both without hostname',
      a: { port: 80, protocol: 'HTTP' },
      b: { port: 80, protocol: 'HTTP' },
      want: 'HostnameConflict',
    },
    {
      name: 'HTTP different hostnames',
      a: { port: 80, protocol: 'HTTP', hostname: 'a' },
      b: { port: 80, protocol: 'HTTP', hostname: 'b' },
    },
    {
      name: 'HTTP with and without hostname',
      a: { port: 80, protocol: 'HTTP' },
      b: { port: 80, protocol: 'HTTP', hostname: 'b' },
    },
    {
      name: 'HTTP vs HTTPS',
      a: { port: 443, protocol: 'HTTP', hostname: 'a' },
      b: { port: 443, protocol: 'HTTPS', hostname: 'b', tlsMode: 'Terminate' },
      want: 'ProtocolConflict',
    },
    {
      name: 'HTTP vs TCP',
      a: { port: 80, protocol: 'HTTP', hostname: 'a' },
      b: { port: 80, protocol: 'TCP' },
      want: 'ProtocolConflict',
    },
    {
      name: 'TLS vs TCP',
      a: { port: 443, protocol: 'TLS', tlsMode: 'Passthrough' },
      b: { port: 443, protocol: 'TCP' },
      want: 'ProtocolConflict',
    },
    {
      name: 'TCP vs TCP',
      a: { port: 9000, protocol: 'TCP' },
      b: { port: 9000, protocol: 'TCP' },
      want: 'HostnameConflict',
    },
    {
      name: 'UDP vs TCP share a port number',
      a: { port: 53, protocol: 'UDP' },
      b: { port: 53, protocol: 'TCP' },
    },
    {
      name: 'UDP vs HTTP share a port number',
      a: { port: 80, protocol: 'UDP' },
      b: { port: 80, protocol: 'HTTP' },
    },
    {
      name: 'UDP vs UDP',
      a: { port: 53, protocol: 'UDP' },
      b: { port: 53, protocol: 'UDP' },
      want: 'HostnameConflict',
    },
    {
      name: 'HTTPS same hostname',
      a: { port: 443, protocol: 'HTTPS', hostname: 'a', tlsMode: 'Terminate' },
      b: { port: 443, protocol: 'HTTPS', hostname: 'a', tlsMode: 'Terminate' },
      want: 'HostnameConflict',
    },
    {
      name: 'HTTPS different hostnames',
      a: { port: 443, protocol: 'HTTPS', hostname: 'a', tlsMode: 'Terminate' },
      b: { port: 443, protocol: 'HTTPS', hostname: 'b', tlsMode: 'Terminate' },
    },
    {
      name: 'HTTPS vs TLS passthrough, different hostnames',
      a: { port: 443, protocol: 'HTTPS', hostname: '*.example.com', tlsMode: 'Terminate' },
      b: { port: 443, protocol: 'TLS', hostname: 'abc.example.com', tlsMode: 'Passthrough' },
    },
    {
      name: 'HTTPS vs TLS, same (empty) hostname',
      a: { port: 8443, protocol: 'HTTPS', tlsMode: 'Terminate' },
      b: { port: 8443, protocol: 'TLS', tlsMode: 'Passthrough' },
      want: 'ProtocolConflict',
    },
    {
      name: 'TLS passthrough vs TLS terminate, other hostnames (TLSRouteModeMixed)',
      a: { port: 443, protocol: 'TLS', hostname: 'a', tlsMode: 'Terminate' },
      b: { port: 443, protocol: 'TLS', hostname: 'b', tlsMode: 'Passthrough' },
    },
    {
      name: 'TLS passthrough vs TLS terminate, same hostname',
      a: { port: 443, protocol: 'TLS', hostname: 'a', tlsMode: 'Terminate' },
      b: { port: 443, protocol: 'TLS', hostname: 'a', tlsMode: 'Passthrough' },
      want: 'HostnameConflict',
    },
    {
      name: 'TLS passthrough same hostname',
      a: { port: 443, protocol: 'TLS', hostname: 'a', tlsMode: 'Passthrough' },
      b: { port: 443, protocol: 'TLS', hostname: 'a', tlsMode: 'Passthrough' },
      want: 'HostnameConflict',
    },
    {
      name: 'TLS passthrough different hostnames',
      a: { port: 443, protocol: 'TLS', hostname: 'a', tlsMode: 'Passthrough' },
      b: { port: 443, protocol: 'TLS', hostname: 'b', tlsMode: 'Passthrough' },
    },
    {
      name: 'unknown protocol never conflicts',
      a: { port: 80, protocol: 'INVALID' },
      b: { port: 80, protocol: 'HTTP' },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(listenerConflict(c.a, c.b), c.want);
      assert.equal(listenerConflict(c.b, c.a), c.want, 'symmetric');
    });
  }
});

describe('detectConflicts precedence', () => {
  const h = (port: number, hostname: string | undefined, fromGateway: boolean, protocol = 'HTTP') => ({
    port,
    protocol,
    hostname,
    fromGateway,
  });
  const cases: { name: string; input: ReturnType<typeof h>[]; want: (string | undefined)[] }[] = [
    {
      name: 'Gateway listeners conflicting among themselves all lose',
      input: [h(80, 'a', true), h(80, 'a', true), h(80, 'b', true)],
      want: ['HostnameConflict', 'HostnameConflict', undefined],
    },
    {
      name: 'ListenerSet listener loses to the Gateway',
      input: [h(80, 'a', true), h(80, 'a', false)],
      want: [undefined, 'HostnameConflict'],
    },
    {
      name: 'first ListenerSet listener wins over a later one',
      input: [h(80, 'a', true), h(80, 'b', false), h(80, 'b', false)],
      want: [undefined, undefined, 'HostnameConflict'],
    },
    {
      name: 'a conflicted ListenerSet listener does not block later ones',
      input: [h(80, undefined, true), h(80, 'x', false, 'TCP'), h(80, 'y', false)],
      want: [undefined, 'ProtocolConflict', undefined],
    },
    {
      name: 'ListenerSet listener loses even to a self-conflicted Gateway listener',
      input: [h(80, 'a', true), h(80, 'a', true), h(80, 'a', false)],
      want: ['HostnameConflict', 'HostnameConflict', 'HostnameConflict'],
    },
    {
      name: 'protocol conflict outranks hostname conflict',
      input: [h(80, undefined, true), h(80, undefined, true, 'TCP'), h(80, undefined, true)],
      want: ['ProtocolConflict', 'ProtocolConflict', 'ProtocolConflict'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(detectConflicts(c.input), c.want));
  }
});

describe('Gateway listener validation (status table)', () => {
  const G = 'gateway.networking.k8s.io';
  const cases: {
    name: string;
    listeners: Listener[];
    objects?: KubeObject[];
    want: Record<string, string[]>;
    gateway: string[];
  }[] = [
    {
      name: 'single HTTP listener',
      listeners: [httpListener('web')],
      want: { web: OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'unsupported protocol alone → Gateway not accepted',
      listeners: [{ name: 'bad', port: 80, protocol: 'INVALID' }],
      want: {
        bad: [
          'Accepted=False/UnsupportedProtocol',
          'Programmed=False/Invalid',
          'ResolvedRefs=True/ResolvedRefs',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=False/ListenersNotValid', 'Programmed=False/Invalid'],
    },
    {
      name: 'unsupported protocol next to a valid one → Accepted=True/ListenersNotValid',
      listeners: [httpListener('web'), { name: 'udp', port: 5353, protocol: 'example.com/QUIC' }],
      want: {
        web: OK,
        udp: [
          'Accepted=False/UnsupportedProtocol',
          'Programmed=False/Invalid',
          'ResolvedRefs=True/ResolvedRefs',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'TCP sharing port 80 reports ProtocolConflict, not UnsupportedProtocol',
      listeners: [httpListener('web'), { name: 'tcp', port: 80, protocol: 'TCP' }],
      want: { web: conflicted('ProtocolConflict'), tcp: conflicted('ProtocolConflict') },
      gateway: ['Accepted=False/ListenersNotValid', 'Programmed=False/Invalid'],
    },
    {
      name: 'HTTPS without certificateRefs',
      listeners: [{ name: 'secure', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate' } }],
      want: {
        secure: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/InvalidCertificateRef',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS without tls at all',
      listeners: [{ name: 'secure', port: 443, protocol: 'HTTPS' }],
      want: {
        secure: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/InvalidCertificateRef',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS with valid Secret',
      listeners: [httpsListener('secure', 443, undefined, 'web-cert')],
      objects: [tlsSecret('web-cert', { namespace: 'infra' })],
      want: { secure: OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS with missing Secret',
      listeners: [httpsListener('secure', 443, undefined, 'nope')],
      want: {
        secure: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/InvalidCertificateRef',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS with malformed Secret',
      listeners: [httpsListener('secure', 443, undefined, 'bad')],
      objects: [tlsSecret('bad', { namespace: 'infra', cert: 'garbage', key: 'garbage' })],
      want: {
        secure: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/InvalidCertificateRef',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS with cross-namespace Secret and no grant',
      listeners: [
        {
          name: 'secure',
          port: 443,
          protocol: 'HTTPS',
          tls: { certificateRefs: [{ name: 'web', namespace: 'certs' }] },
        },
      ],
      objects: [tlsSecret('web', { namespace: 'certs' })],
      want: {
        secure: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/RefNotPermitted',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS with cross-namespace Secret and grant',
      listeners: [
        {
          name: 'secure',
          port: 443,
          protocol: 'HTTPS',
          tls: { certificateRefs: [{ name: 'web', namespace: 'certs' }] },
        },
      ],
      objects: [
        tlsSecret('web', { namespace: 'certs' }),
        referenceGrant(
          'g',
          {
            from: [{ group: G, kind: 'Gateway', namespace: 'infra' }],
            to: [{ group: '', kind: 'Secret' }],
          },
          { namespace: 'certs' },
        ),
      ],
      want: { secure: OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'one good and one missing certificate: programmed, but ResolvedRefs=False',
      listeners: [
        {
          name: 'secure',
          port: 443,
          protocol: 'HTTPS',
          tls: { certificateRefs: [{ name: 'web-cert' }, { name: 'missing' }] },
        },
      ],
      objects: [tlsSecret('web-cert', { namespace: 'infra' })],
      want: {
        secure: [
          'Accepted=True/Accepted',
          'Programmed=True/Programmed',
          'ResolvedRefs=False/InvalidCertificateRef',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS in Passthrough mode is unsupported',
      listeners: [{ name: 'secure', port: 443, protocol: 'HTTPS', tls: { mode: 'Passthrough' } }],
      want: {
        secure: [
          'Accepted=False/UnsupportedValue',
          'Programmed=False/Invalid',
          'ResolvedRefs=True/ResolvedRefs',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=False/ListenersNotValid', 'Programmed=False/Invalid'],
    },
    {
      name: 'TLS passthrough needs no certificate',
      listeners: [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          hostname: 'abc.example.com',
          tls: { mode: 'Passthrough' },
        },
      ],
      want: { tls: OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'TLS terminate needs a certificate',
      listeners: [{ name: 'tls', port: 443, protocol: 'TLS', tls: { mode: 'Terminate' } }],
      want: {
        tls: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/InvalidCertificateRef',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'TLS passthrough + terminate on one port (TLSRouteModeMixed)',
      listeners: [
        {
          name: 'tls-terminate',
          port: 443,
          protocol: 'TLS',
          hostname: 'a.example.com',
          tls: { mode: 'Terminate', certificateRefs: [{ name: 'c' }] },
        },
        {
          name: 'tls-passthrough',
          port: 443,
          protocol: 'TLS',
          hostname: 'b.example.com',
          tls: { mode: 'Passthrough' },
        },
      ],
      objects: [tlsSecret('c', { namespace: 'infra' })],
      want: { 'tls-terminate': OK, 'tls-passthrough': OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS and TLS passthrough on one port with different hostnames',
      listeners: [
        httpsListener('https-terminate', 443, '*.example.com', 'c'),
        {
          name: 'tls-passthrough',
          port: 443,
          protocol: 'TLS',
          hostname: 'abc.example.com',
          tls: { mode: 'Passthrough' },
        },
      ],
      objects: [tlsSecret('c', { namespace: 'infra' })],
      want: { 'https-terminate': OK, 'tls-passthrough': OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'HTTPS and TLS on one port without hostnames conflict',
      listeners: [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          hostname: 'abc.example.com',
          tls: { mode: 'Passthrough' },
        },
        httpsListener('conflicted-https', 8443, undefined, 'c'),
        { name: 'conflicted-tls', port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' } },
      ],
      objects: [tlsSecret('c', { namespace: 'infra' })],
      want: {
        tls: OK,
        'conflicted-https': conflicted('ProtocolConflict'),
        'conflicted-tls': conflicted('ProtocolConflict'),
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'invalid route kind only → ResolvedRefs=False/InvalidRouteKinds, not programmed',
      listeners: [httpListener('web', 80, undefined, { allowedRoutes: { kinds: [{ kind: 'FooRoute' }] } })],
      want: {
        web: [
          'Accepted=True/Accepted',
          'Programmed=False/Invalid',
          'ResolvedRefs=False/InvalidRouteKinds',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'valid and invalid route kinds → programmed with the valid ones',
      listeners: [
        httpListener('web', 80, undefined, {
          allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }, { kind: 'FooRoute' }] },
        }),
      ],
      want: {
        web: [
          'Accepted=True/Accepted',
          'Programmed=True/Programmed',
          'ResolvedRefs=False/InvalidRouteKinds',
          'Conflicted=False/NoConflicts',
        ],
      },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
    {
      name: 'duplicate hostnames within the Gateway: both conflicted, others fine',
      listeners: [
        httpListener('a', 80, 'x.example.com'),
        httpListener('b', 80, 'x.example.com'),
        httpListener('c', 80, 'y.example.com'),
      ],
      want: { a: conflicted('HostnameConflict'), b: conflicted('HostnameConflict'), c: OK },
      gateway: ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'],
    },
    {
      name: 'port 8080 and port 80 coexist',
      listeners: [httpListener('a', 80), httpListener('b', 8080)],
      want: { a: OK, b: OK },
      gateway: ['Accepted=True/Accepted', 'Programmed=True/Programmed'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const st = gatewayStatusOf([gateway('gw', c.listeners, { namespace: 'infra' }), ...(c.objects ?? [])]);
      assert.deepEqual(condSummary(st.conditions), c.gateway, 'gateway conditions');
      assert.deepEqual(
        st.listeners.map((l) => l.name),
        c.listeners.map((l) => l.name),
        'one status entry per spec listener, in spec order',
      );
      for (const l of st.listeners) {
        assert.deepEqual(condSummary(l.conditions), c.want[l.name], `listener ${l.name}`);
        // Listeners that are not accepted support no route kind (conformance compares to []).
        if (condSummary(l.conditions)[0].startsWith('Accepted=False'))
          assert.deepEqual(l.supportedKinds, [], l.name);
      }
    });
  }
});

describe('resolveGateways', () => {
  test('only Gateways of owned classes, sorted by namespace/name', () => {
    const view = storeOf(
      gatewayClass(),
      gatewayClass('theirs', 'other.io/controller'),
      gateway('b', [httpListener('h')], { namespace: 'x' }),
      gateway('a', [httpListener('h')], { namespace: 'y' }),
      gateway('a', [httpListener('h')], { namespace: 'x' }),
      gateway('foreign', [httpListener('h')], { namespace: 'infra', className: 'theirs' }),
      gateway('orphan', [httpListener('h')], { namespace: 'infra', className: 'missing' }),
    );
    const gws = resolveGateways(view, OPTS);
    assert.deepEqual(
      gws.map((g) => g.fleet),
      ['x/a', 'x/b', 'y/a'],
    );
    const statuses = gatewayAndListenerSetStatuses(gws, OPTS);
    assert.deepEqual(
      statuses.map((s) => `${s.metadata.namespace}/${s.metadata.name}`),
      ['x/a', 'x/b', 'y/a'],
    );
  });

  test('deleting Gateways are skipped', () => {
    const gw = gateway('gw', [httpListener('h')], { namespace: 'infra' });
    gw.metadata.deletionTimestamp = NOW;
    assert.deepEqual(resolveGateways(storeOf(gatewayClass(), gw), OPTS), []);
  });

  test('resolved listener shape', () => {
    const view = storeOf(
      gatewayClass(),
      tlsSecret('cert', { namespace: 'infra' }),
      gateway(
        'gw',
        [
          httpListener('web', 80, 'www.example.com', {
            allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } },
          }),
          httpsListener('secure', 443, '*.example.com', 'cert', {
            allowedRoutes: { namespaces: { from: 'All' } },
          }),
        ],
        { namespace: 'infra' },
      ),
    );
    const [g] = resolveGateways(view, OPTS);
    assert.equal(g.accepted, true);
    assert.equal(g.fleet, 'infra/gw');
    const [web, secure] = g.listeners;
    assert.equal(web.qualifiedName, 'Gateway/infra/gw/web');
    assert.deepEqual(web.owner, { kind: 'Gateway', namespace: 'infra', name: 'gw' });
    assert.equal(web.hostname, 'www.example.com');
    assert.equal(web.tlsMode, undefined);
    assert.deepEqual(web.allowedNamespaces, { from: 'Selector', selector: { matchLabels: { team: 'a' } } });
    assert.equal(web.ready, true);
    assert.equal(web.attachedRoutes, 0);
    assert.deepEqual(web.certificates, []);
    assert.equal(secure.tlsMode, 'Terminate');
    assert.deepEqual(secure.allowedNamespaces, { from: 'All' });
    assert.deepEqual(
      secure.certificates.map((c) => c.name),
      ['infra/cert'],
    );
  });

  test('a listener that is not ready carries no certificates', () => {
    const view = storeOf(
      gatewayClass(),
      tlsSecret('cert', { namespace: 'infra' }),
      gateway(
        'gw',
        [httpsListener('a', 443, 'x.example.com', 'cert'), httpsListener('b', 443, 'x.example.com', 'cert')],
        { namespace: 'infra' },
      ),
    );
    const [g] = resolveGateways(view, OPTS);
    assert.ok(g.listeners.every((l) => !l.ready && l.certificates.length === 0));
  });

  test('conditions carry observedGeneration and now; statuses are Kubernetes-shaped', () => {
    const view = storeOf(
      gatewayClass(),
      gateway('gw', [httpListener('web')], { namespace: 'infra', generation: 7 }),
    );
    const gws = resolveGateways(view, OPTS);
    gws[0].listeners[0].attachedRoutes = 3;
    const [st] = gatewayAndListenerSetStatuses(gws, OPTS);
    assert.equal(st.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.equal(st.kind, 'Gateway');
    assert.deepEqual(st.metadata, { namespace: 'infra', name: 'gw', generation: 7 });
    const status = st.status as unknown as GatewayStatus;
    assert.equal(status.attachedListenerSets, 0);
    assert.deepEqual(status.addresses, []);
    assert.equal(status.listeners[0].attachedRoutes, 3);
    assert.deepEqual(status.listeners[0].supportedKinds, [
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
      { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
    ]);
    for (const c of [...status.conditions, ...status.listeners[0].conditions]) {
      assert.equal(c.observedGeneration, 7);
      assert.equal(c.lastTransitionTime, NOW);
      assert.ok(c.message.length > 0);
    }
  });

  test('spec.addresses are echoed with a type', () => {
    const st = gatewayStatusOf([
      gateway('gw', [httpListener('web')], {
        namespace: 'infra',
        spec: {
          addresses: [
            { value: '10.0.0.1' },
            { type: 'Hostname', value: 'lb.example.com' },
            { type: 'IPAddress' },
          ],
        },
      }),
    ]);
    assert.deepEqual(st.addresses, [
      { type: 'IPAddress', value: '10.0.0.1' },
      { type: 'Hostname', value: 'lb.example.com' },
    ]);
  });

  test('secrets in a rotated Secret are picked up (pure function of the store)', () => {
    const before = storeOf(
      gatewayClass(),
      tlsSecret('cert', { namespace: 'infra' }),
      gateway('gw', [httpsListener('s', 443, undefined, 'cert')], { namespace: 'infra' }),
    );
    const after = storeOf(
      gatewayClass(),
      tlsSecret('cert', { namespace: 'infra', cert: SELF_CERT, key: SELF_KEY }),
      gateway('gw', [httpsListener('s', 443, undefined, 'cert')], { namespace: 'infra' }),
    );
    const a = resolveGateways(before, OPTS)[0].listeners[0].certificates[0];
    const b = resolveGateways(after, OPTS)[0].listeners[0].certificates[0];
    assert.equal(a.name, b.name);
    assert.notEqual(a.certificateChain, b.certificateChain);
    assert.equal(b.certificateChain, SELF_CERT);
  });

  test('deterministic: same input, same output', () => {
    const mk = () =>
      storeOf(
        gatewayClass(),
        tlsSecret('cert', { namespace: 'infra' }),
        gateway(
          'gw',
          [httpListener('a'), httpsListener('b', 443, undefined, 'cert'), httpListener('c', 80)],
          { namespace: 'infra' },
        ),
      );
    const x = gatewayAndListenerSetStatuses(resolveGateways(mk(), OPTS), OPTS);
    const y = gatewayAndListenerSetStatuses(resolveGateways(mk(), OPTS), OPTS);
    assert.deepEqual(x, y);
  });
});

describe('listenerHostnameProblem', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, true],
    ['', true],
    ['foo.example.com', true],
    ['*.example.com', true],
    ['localhost', true],
    ['a-b.c-d.example', true],
    ['Foo.example.com', false],
    ['foo..example.com', false],
    ['-foo.example.com', false],
    ['foo.*.example.com', false],
    ['*example.com', false],
    ['*', false],
    ['10.0.0.1', false],
    ['::1', false],
    ['a'.repeat(64) + '.com', false],
    [`${'a'.repeat(60)}.`.repeat(5) + 'com', false],
  ];
  for (const [hostname, valid] of cases) {
    test(`${JSON.stringify(hostname)} → ${valid ? 'valid' : 'invalid'}`, () => {
      assert.equal(listenerHostnameProblem(hostname) === undefined, valid);
    });
  }

  test('a listener with an invalid hostname is not accepted', () => {
    const st = gatewayStatusOf([
      gateway('gw', [httpListener('bad', 80, '10.0.0.1'), httpListener('good', 80, 'a.example.com')], {
        namespace: 'infra',
      }),
    ]);
    assert.deepEqual(condSummary(st.listeners[0].conditions).slice(0, 2), [
      'Accepted=False/UnsupportedValue',
      'Programmed=False/Invalid',
    ]);
    assert.deepEqual(condSummary(st.listeners[1].conditions), OK);
  });
});

describe('OverlappingTLSConfig', () => {
  test('HTTPS listeners with overlapping hostnames on one port (conformance layout)', () => {
    const st = gatewayStatusOf([
      tlsSecret('c', { namespace: 'infra' }),
      gateway(
        'gw',
        [
          httpsListener('foo-https', 443, 'foo.example.com', 'c'),
          httpsListener('bar-https', 443, 'bar.bar.example.com', 'c'),
          httpsListener('wildcard-https', 443, '*.example.com', 'c'),
          httpsListener('not-overlapping-https', 443, 'example.com', 'c'),
          httpsListener('not-overlapping-other-port', 9443, 'foo.example.com', 'c'),
          httpListener('plain', 443, 'x.example.com', { port: 8080 }),
        ],
        { namespace: 'infra' },
      ),
    ]);
    const overlap = (name: string) =>
      st.listeners
        .find((l) => l.name === name)
        ?.conditions.filter((c) => c.type === 'OverlappingTLSConfig') ?? [];
    for (const name of ['foo-https', 'bar-https', 'wildcard-https']) {
      assert.deepEqual(
        overlap(name).map((c) => `${c.status}/${c.reason}`),
        ['True/OverlappingHostnames'],
        name,
      );
    }
    for (const name of ['not-overlapping-https', 'not-overlapping-other-port', 'plain']) {
      assert.deepEqual(overlap(name), [], `${name} must not carry the condition at all`);
    }
    // Informational only: the listeners stay programmed.
    for (const l of st.listeners)
      assert.ok(condSummary(l.conditions).includes('Programmed=True/Programmed'), l.name);
    const c = overlap('foo-https')[0];
    assert.equal(c.observedGeneration, 1);
    assert.equal(c.lastTransitionTime, NOW);
  });

  test('an HTTPS listener without hostname overlaps every other HTTPS listener on its port', () => {
    const st = gatewayStatusOf([
      tlsSecret('c', { namespace: 'infra' }),
      gateway(
        'gw',
        [httpsListener('any', 443, undefined, 'c'), httpsListener('one', 443, 'a.example.com', 'c')],
        { namespace: 'infra' },
      ),
    ]);
    for (const l of st.listeners)
      assert.ok(condSummary(l.conditions).includes('OverlappingTLSConfig=True/OverlappingHostnames'));
  });

  test('conflicted listeners do not count as overlapping', () => {
    const st = gatewayStatusOf([
      tlsSecret('c', { namespace: 'infra' }),
      gateway(
        'gw',
        [httpsListener('a', 443, 'a.example.com', 'c'), httpsListener('b', 443, 'a.example.com', 'c')],
        { namespace: 'infra' },
      ),
    ]);
    for (const l of st.listeners)
      assert.ok(!condSummary(l.conditions).some((x) => x.startsWith('OverlappingTLSConfig')));
  });
});

describe('Gateway-level problems', () => {
  test('infrastructure.parametersRef → Accepted=False/InvalidParameters, nothing programmed', () => {
    const view = storeOf(
      gatewayClass(),
      gateway('gw', [httpListener('web')], {
        namespace: 'infra',
        spec: {
          infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'nope' } },
        },
      }),
    );
    const gws = resolveGateways(view, OPTS);
    assert.equal(gws[0].accepted, false);
    assert.ok(gws[0].listeners.every((l) => !l.ready));
    const st = gatewayAndListenerSetStatuses(gws, OPTS)[0].status as unknown as GatewayStatus;
    assert.deepEqual(condSummary(st.conditions), [
      'Accepted=False/InvalidParameters',
      'Programmed=False/Invalid',
    ]);
    assert.ok(condSummary(st.listeners[0].conditions).includes('Programmed=False/Invalid'));
  });

  test('Gateway of an owned but rejected GatewayClass is not accepted', () => {
    const gc = gatewayClass();
    (gc.spec as Record<string, unknown>).parametersRef = { group: 'example.io', kind: 'Params', name: 'p' };
    const view = storeOf(gc, gateway('gw', [httpListener('web')], { namespace: 'infra' }));
    const gws = resolveGateways(view, OPTS);
    assert.equal(gws.length, 1);
    assert.equal(gws[0].accepted, false);
    const st = gatewayAndListenerSetStatuses(gws, OPTS)[0].status as unknown as GatewayStatus;
    assert.deepEqual(condSummary(st.conditions), ['Accepted=False/Invalid', 'Programmed=False/Invalid']);
  });
});

describe('indexed conflict and overlap detection agree with the pairwise definitions', () => {
  // Small deterministic PRNG (mulberry32) so failures reproduce.
  const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const HOSTS = [
    undefined,
    'a.example.com',
    'b.example.com',
    '*.example.com',
    'x.a.example.com',
    '*.a.example.com',
    'other.org',
  ];
  const PROTOCOLS = ['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP', 'FOO'];
  const MODES = ['Terminate', 'Passthrough'] as const;

  function naiveConflicts(cs: Parameters<typeof detectConflicts>[0]): (string | undefined)[] {
    const out: (string | undefined)[] = cs.map(() => undefined);
    for (let i = 0; i < cs.length; i++) {
      for (let j = 0; j < cs.length; j++) {
        if (i === j) continue;
        if (cs[i].fromGateway) {
          if (!cs[j].fromGateway) continue;
        } else if (j > i || (!cs[j].fromGateway && out[j])) continue;
        const r = listenerConflict(cs[i], cs[j]);
        if (r && (!out[i] || r === 'ProtocolConflict')) out[i] = r;
      }
    }
    return out;
  }

  test('detectConflicts on 300 random merged lists', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const n = 1 + Math.floor(r() * 14);
      const gwCount = Math.floor(r() * 4);
      const cs = Array.from({ length: n }, (_, i) => {
        const protocol = pick(r, PROTOCOLS);
        return {
          port: pick(r, [80, 443]),
          protocol,
          hostname: pick(r, HOSTS),
          tlsMode: protocol === 'TLS' || protocol === 'HTTPS' ? pick(r, MODES) : undefined,
          fromGateway: i < gwCount,
        };
      });
      assert.deepEqual(detectConflicts(cs), naiveConflicts(cs), `seed ${seed}: ${JSON.stringify(cs)}`);
    }
  });

  test('markOverlappingTLS on 300 random listener lists', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed * 7919);
      const n = 1 + Math.floor(r() * 10);
      const ls: ResolvedListener[] = Array.from({ length: n }, (_, i) => ({
        owner: { kind: 'Gateway', namespace: 'ns', name: 'gw' },
        name: `l${i}`,
        qualifiedName: `Gateway/ns/gw/l${i}`,
        port: pick(r, [443, 8443]),
        protocol: pick(r, ['HTTPS', 'HTTPS', 'TLS']),
        ...(() => {
          const h = pick(r, HOSTS);
          return h ? { hostname: h } : {};
        })(),
        certificates: [],
        allowedNamespaces: { from: 'Same' },
        supportedKinds: [],
        ready: true,
        conditions: [
          {
            type: 'Accepted',
            status: r() < 0.8 ? 'True' : 'False',
            reason: 'x',
            message: 'x',
            observedGeneration: 1,
            lastTransitionTime: NOW,
          },
        ],
        attachedRoutes: 0,
      }));
      const eligible = ls.filter((l) => l.protocol === 'HTTPS' && l.conditions[0].status === 'True');
      const want = new Set<string>();
      for (const a of eligible) {
        for (const b of eligible) {
          if (a === b || a.port !== b.port || (a.hostname ?? '') === (b.hostname ?? '')) continue;
          if (!a.hostname || !b.hostname || hostnameMatches(a.hostname, b.hostname)) want.add(a.name);
        }
      }
      markOverlappingTLS(ls, OPTS);
      const got = new Set(
        ls.filter((l) => l.conditions.some((c) => c.type === 'OverlappingTLSConfig')).map((l) => l.name),
      );
      assert.deepEqual(
        [...got].sort(),
        [...want].sort(),
        `seed ${seed}: ${JSON.stringify(ls.map((l) => [l.port, l.protocol, l.hostname, l.conditions[0].status]))}`,
      );
    }
  });
});
