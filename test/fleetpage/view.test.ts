import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CertificateValidityReader } from '../../src/controller/certificate-validity';
import { TypeUrl } from '../../src/envoy/resources';
import { buildGateways } from '../../src/gateway/build';
import type { KubeObject } from '../../src/store/objects';
import { EXPIRING_SOON_MS, buildFleetView, type FleetViewInputs } from '../../src/fleetpage/view';
import {
  typeStateCounts,
  type StreamDebug,
  type TypeDebug,
  type XdsDebugState,
} from '../../src/xds/debug-state';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  parentRef,
  storeOf,
  tlsSecret,
} from '../support/objects';

/** A Gateway with an HTTP listener, a ListenerSet with a served and a broken HTTPS listener, a route. */
function world(): KubeObject[] {
  return [
    gatewayClass(),
    gateway('gw', [httpListener('http', 80)], { allowedListeners: { namespaces: { from: 'Same' } } }),
    gateway('other-class', [httpListener('http', 80)], { className: 'not-ours' }),
    listenerSet('extra', { name: 'gw' }, [
      httpsListener('secure', 443, 'secure.example.com', 'good-cert'),
      httpsListener('broken', 8443, 'broken.example.com', 'missing-cert'),
    ]),
    tlsSecret('good-cert'),
    ...backendService('web', 80, ['10.0.0.1']),
    httpRoute('web', [{ backendRefs: [backendRef('web', 80)] }], {
      parentRefs: [parentRef('extra', { kind: 'ListenerSet', sectionName: 'secure' })],
      hostnames: ['secure.example.com'],
    }),
  ];
}

function typeDebug(state: TypeDebug['state'], extra: Partial<TypeDebug> = {}): TypeDebug {
  return { state, wildcard: true, subscribed: 0, subscribedNames: [], ...extra };
}

function stream(id: number, nodeId: string, fleet: string, types: Record<string, TypeDebug>): StreamDebug {
  return {
    id,
    nodeId,
    fleet,
    variant: 'delta',
    connectedSince: '2026-03-01T11:00:00.000Z',
    peer: '127.0.0.1:1234',
    held: false,
    stalled: false,
    unflushed: { responses: 0, bytes: 0 },
    userAgent: 'envoy',
    types,
  };
}

const NACK = {
  version: 'v2',
  nonce: '7',
  message: 'Address already in use <script>',
  acceptedVersion: 'v1',
  time: '2026-03-01T11:59:00.000Z',
};

function inputs(objects: KubeObject[], now: number): FleetViewInputs {
  const store = storeOf(...objects);
  const result = buildGateways(store, OPTS);
  const served = new CertificateValidityReader().served(result.fleets);
  const xds: Pick<XdsDebugState, 'streams' | 'rejections'> = {
    streams: [
      stream(2, 'envoy-b', 'default/gw', {
        [TypeUrl.Listener]: typeDebug('nacked', { lastNack: NACK }),
        [TypeUrl.Cluster]: typeDebug('synced', { ackedTime: '2026-03-01T11:58:00.000Z' }),
      }),
      stream(1, 'envoy-a', 'default/gw', {
        [TypeUrl.Listener]: typeDebug('synced', {
          ackedTime: '2026-03-01T11:58:30.000Z',
          lastNack: { ...NACK, time: '2026-03-01T11:00:00.000Z' },
        }),
      }),
      stream(3, 'stray', 'default/nobody', { [TypeUrl.Cluster]: typeDebug('not_sent') }),
    ],
    rejections: [
      {
        fleet: 'default/gw',
        envoys: 2,
        resources: [
          {
            typeUrl: TypeUrl.Listener,
            name: 'http-80',
            version: 'v2',
            nodes: ['envoy-b'],
            message: NACK.message,
          },
        ],
      },
    ],
  };
  return {
    gateways: store.list('Gateway'),
    listenerSets: store.list('ListenerSet'),
    routes: store.list('HTTPRoute'),
    statuses: result.statuses,
    certificateExpiries: [...served].map(([listener, certs]) => ({
      listener,
      notAfter: Math.min(...certs.map((c) => c.validity.notAfter)),
    })),
    xds,
    now,
  };
}

/** The served certificate's expiry, read the way the Controller reads it. */
function servedNotAfter(): number {
  const input = inputs(world(), 0);
  const e = [...input.certificateExpiries];
  assert.equal(e.length, 1);
  return e[0].notAfter;
}

describe('buildFleetView', () => {
  const notAfter = servedNotAfter();

  test('lists the Gateway with its own and its ListenerSet listeners, owners, ports and hostnames', () => {
    const view = buildFleetView(inputs(world(), notAfter - 2 * EXPIRING_SOON_MS));
    assert.deepEqual(
      view.gateways.map((g) => g.fleet),
      ['default/gw'],
      'only Gateways with a status of Convoy (not other classes)',
    );
    const gw = view.gateways[0];
    assert.deepEqual(
      gw.listeners.map((l) => [l.id, l.owner.kind, l.port, l.protocol, l.hostname ?? '*']),
      [
        ['Gateway/default/gw/http', 'Gateway', 80, 'HTTP', '*'],
        ['ListenerSet/default/extra/secure', 'ListenerSet', 443, 'HTTPS', 'secure.example.com'],
        ['ListenerSet/default/extra/broken', 'ListenerSet', 8443, 'HTTPS', 'broken.example.com'],
      ],
    );
    assert.deepEqual(
      gw.listenerSets.map((s) => [s.name, s.health]),
      [['extra', 'ok']],
    );
  });

  test('colours a listener by its conditions: a missing certificate is an error', () => {
    const gw = buildFleetView(inputs(world(), notAfter - 2 * EXPIRING_SOON_MS)).gateways[0];
    const byName = new Map(gw.listeners.map((l) => [l.name, l]));
    assert.equal(byName.get('http')?.health, 'ok');
    assert.equal(byName.get('secure')?.health, 'ok');
    const broken = byName.get('broken')!;
    assert.equal(broken.health, 'error');
    const refs = broken.conditions.find((c) => c.type === 'ResolvedRefs');
    assert.equal(refs?.status, 'False');
    assert.equal(refs?.reason, 'InvalidCertificateRef');
    assert.equal(gw.health, 'error', 'the Gateway is as bad as its worst part');
  });

  test('gives the served certificate expiry and lists it as expiring soon only within 30 days', () => {
    const far = buildFleetView(inputs(world(), notAfter - 2 * EXPIRING_SOON_MS));
    const secure = far.gateways[0].listeners.find((l) => l.name === 'secure')!;
    assert.equal(secure.certificateNotAfter, new Date(notAfter).toISOString());
    assert.deepEqual(far.expiringCertificates, []);

    const soon = buildFleetView(inputs(world(), notAfter - EXPIRING_SOON_MS / 2));
    assert.equal(soon.gateways[0].listeners.find((l) => l.name === 'secure')?.health, 'warning');
    assert.deepEqual(soon.expiringCertificates, [
      {
        listener: 'ListenerSet/default/extra/secure',
        fleet: 'default/gw',
        notAfter: new Date(notAfter).toISOString(),
        expired: false,
      },
    ]);
    const expired = buildFleetView(inputs(world(), notAfter + 1000));
    assert.equal(expired.expiringCertificates[0]?.expired, true);
  });

  test('lists attached routes with their parent entries for this Gateway', () => {
    const gw = buildFleetView(inputs(world(), 0)).gateways[0];
    assert.deepEqual(
      gw.routes.map((r) => [
        r.kind,
        r.name,
        r.hostnames,
        r.parents.map((p) => [p.kind, p.name, p.sectionName]),
      ]),
      [['HTTPRoute', 'web', ['secure.example.com'], [['ListenerSet', 'extra', 'secure']]]],
    );
    assert.equal(gw.routes[0].health, 'ok');
  });

  test('gives each connected Envoy its per-type sync state under its Gateway, strays apart', () => {
    const view = buildFleetView(inputs(world(), 0));
    const envoys = view.gateways[0].envoys;
    assert.deepEqual(
      envoys.map((e) => [e.node, e.health, e.types.map((t) => `${t.type}:${t.state}`)]),
      [
        ['envoy-a', 'ok', ['LDS:SYNCED']],
        ['envoy-b', 'error', ['CDS:SYNCED', 'LDS:NACKED']],
      ],
    );
    assert.equal(envoys[1].types[1].error, NACK.message);
    assert.equal(envoys[1].types[1].since, NACK.time);
    assert.deepEqual(
      view.otherEnvoys.map((e) => [e.node, e.fleet, e.health]),
      [['stray', 'default/nobody', 'warning']],
    );
  });

  test('lists current rejections and the latest NACK of each Envoy and type, newest first', () => {
    const view = buildFleetView(inputs(world(), 0));
    assert.deepEqual(view.rejections, [
      {
        fleet: 'default/gw',
        type: 'LDS',
        resource: 'http-80',
        version: 'v2',
        nodes: ['envoy-b'],
        envoys: 2,
        message: NACK.message,
      },
    ]);
    assert.deepEqual(
      view.recentNacks.map((n) => [n.node, n.type, n.time, n.current]),
      [
        ['envoy-b', 'LDS', NACK.time, true],
        ['envoy-a', 'LDS', '2026-03-01T11:00:00.000Z', false],
      ],
    );
  });

  test('is deterministic: the same state in any input order gives the same JSON', () => {
    const a = inputs(world(), 0);
    const b = inputs([...world()].reverse(), 0);
    b.xds = { streams: [...a.xds.streams].reverse(), rejections: a.xds.rejections };
    b.statuses = [...b.statuses].reverse();
    assert.equal(JSON.stringify(buildFleetView(b)), JSON.stringify(buildFleetView(a)));
  });

  test('holds no certificate or key material', () => {
    const json = JSON.stringify(buildFleetView(inputs(world(), 0)));
    assert.doesNotMatch(json, /BEGIN|PRIVATE KEY|MII/);
  });
});

describe('typeStateCounts (convoy_xds_type_states)', () => {
  test('counts Envoy x type pairs per served fleet and state; unserved fleets count as unknown', () => {
    const counts = typeStateCounts({
      streams: [
        stream(1, 'a', 'default/gw', {
          [TypeUrl.Listener]: typeDebug('synced'),
          [TypeUrl.Cluster]: typeDebug('stale'),
        }),
        stream(2, 'b', 'default/gw', { [TypeUrl.Listener]: typeDebug('synced') }),
        stream(3, 'c', 'made/up', { [TypeUrl.Listener]: typeDebug('not_sent') }),
      ],
      fleets: [
        { fleet: 'default/gw', streams: 2, types: { [TypeUrl.Listener]: { version: 'v', resources: 1 } } },
        { fleet: 'made/up', streams: 1, types: {} },
      ],
    });
    assert.deepEqual(counts.map((c) => `${c.fleet} ${c.state} ${c.count}`).sort(), [
      'default/gw stale 1',
      'default/gw synced 2',
      'unknown not_sent 1',
    ]);
  });
});
