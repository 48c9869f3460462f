import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import { translateFleet } from '../../src/envoy/translate';
import type { FleetModel } from '../../src/model/fleet';
import type { ObjectStatus } from '../../src/status/types';
import type { KubeObject } from '../../src/store/objects';
import {
  CONTROLLER,
  OPTS,
  backendRef,
  backendService,
  backendTlsPolicy,
  caConfigMap,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  parentRef,
  storeOf,
  tlsSecret,
} from '../support/objects';
import { ROOT_CERT, SELF_CERT } from '../support/certs';
import { envoyValidate, staticBootstrap } from '../envoy/helpers';

const route = (services: string[]) =>
  httpRoute('r', [{ backendRefs: services.map((s) => backendRef(s, 443)) }], {
    parentRefs: [parentRef('gw')],
  });

function build(objects: KubeObject[], gw: KubeObject = gateway('gw', [httpListener('http', 80)])) {
  return buildGateways(storeOf(gatewayClass(), gw, ...objects), OPTS);
}

function fleet(result: { fleets: FleetModel[] }): FleetModel {
  const f = result.fleets.find((x) => x.gateway.name === 'gw');
  assert.ok(f);
  return f;
}

/** Returns `[type, status, reason]` of each condition of the policy's ancestor `gw`. */
function policyConditions(statuses: ObjectStatus[], name: string): string[][] | undefined {
  const s = statuses.find((x) => x.kind === 'BackendTLSPolicy' && x.metadata.name === name);
  const ancestors = s?.status.ancestors as
    | {
        ancestorRef: { name: string };
        controllerName: string;
        conditions: { type: string; status: string; reason: string }[];
      }[]
    | undefined;
  const a = ancestors?.find((x) => x.ancestorRef.name === 'gw' && x.controllerName === CONTROLLER);
  return a?.conditions.map((c) => [c.type, c.status, c.reason]);
}

const svc = (name: string, o: { portName?: string; appProtocol?: string } = {}) =>
  backendService(name, 443, ['10.0.0.1'], {
    targetPort: 8443,
    portName: o.portName ?? 'https',
    appProtocol: o.appProtocol,
  });

describe('BackendTLSPolicy (docs/gateway-api.md §24)', () => {
  test('a valid policy puts SNI, CA and hostname SAN on the targeted cluster and is Accepted', () => {
    const r = build([
      ...svc('b'),
      route(['b']),
      caConfigMap('ca', ROOT_CERT),
      backendTlsPolicy('p', 'b', 'b.example.com'),
    ]);
    const c = fleet(r).clusters.find((x) => x.name === 'default/b/443');
    assert.equal(c?.tls?.sni, 'b.example.com');
    assert.deepEqual(c?.tls?.subjectAltNames, [{ type: 'DNS', value: 'b.example.com' }]);
    assert.match(c?.tls?.caBundle ?? '', /BEGIN CERTIFICATE/);
    assert.equal(c?.endpoints.length, 1);
    assert.deepEqual(policyConditions(r.statuses, 'p'), [
      ['Accepted', 'True', 'Accepted'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
    ]);
  });

  test('subjectAltNames replace the hostname for authentication', () => {
    const r = build([
      ...svc('b'),
      route(['b']),
      caConfigMap('ca', ROOT_CERT),
      backendTlsPolicy('p', 'b', 'b.example.com', {
        subjectAltNames: [
          { type: 'Hostname', hostname: '*.example.org' },
          { type: 'URI', uri: 'spiffe://td/b' },
        ],
      }),
    ]);
    const tls = fleet(r).clusters[0].tls;
    assert.equal(tls?.sni, 'b.example.com');
    assert.deepEqual(tls?.subjectAltNames, [
      { type: 'DNS', value: '*.example.org' },
      { type: 'URI', value: 'spiffe://td/b' },
    ]);
  });

  test('a missing or malformed CA ConfigMap: NoValidCACertificate, InvalidCACertificateRef, no endpoints', () => {
    for (const objects of [[], [caConfigMap('ca', 'not a certificate')]]) {
      const r = build([...svc('b'), route(['b']), ...objects, backendTlsPolicy('p', 'b', 'b.example.com')]);
      assert.deepEqual(policyConditions(r.statuses, 'p'), [
        ['Accepted', 'False', 'NoValidCACertificate'],
        ['ResolvedRefs', 'False', 'InvalidCACertificateRef'],
      ]);
      const c = fleet(r).clusters[0];
      assert.equal(c.tls?.refuse, true);
      assert.deepEqual(c.endpoints, []);
    }
  });

  test('wellKnownCACertificates is not supported: Accepted=False/Invalid, the backend refused', () => {
    const r = build([
      ...svc('b'),
      route(['b']),
      backendTlsPolicy('p', 'b', 'b.example.com', { wellKnown: 'System' }),
    ]);
    assert.deepEqual(policyConditions(r.statuses, 'p'), [
      ['Accepted', 'False', 'Invalid'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
    ]);
    assert.deepEqual(fleet(r).clusters[0].endpoints, []);
  });

  test('a CA reference of another kind: InvalidKind', () => {
    const r = build([
      ...svc('b'),
      route(['b']),
      backendTlsPolicy('p', 'b', 'b.example.com', {
        caRefs: [{ group: 'invalid.io', kind: 'InvalidKind', name: 'x' }],
      }),
    ]);
    assert.deepEqual(policyConditions(r.statuses, 'p'), [
      ['Accepted', 'False', 'NoValidCACertificate'],
      ['ResolvedRefs', 'False', 'InvalidKind'],
    ]);
  });

  test('conflicts: the older policy wins, then namespace/name; a sectionName policy is no conflict', () => {
    const r = build([
      ...svc('b'),
      route(['b']),
      caConfigMap('ca', ROOT_CERT),
      backendTlsPolicy('p-2', 'b', 'two.example.com', { created: '2026-01-01T00:00:00Z' }),
      backendTlsPolicy('p-1', 'b', 'one.example.com', { created: '2026-01-01T00:00:00Z' }),
      backendTlsPolicy('p-0', 'b', 'zero.example.com', { created: '2026-01-02T00:00:00Z' }),
      backendTlsPolicy('p-port', 'b', 'port.example.com', {
        sectionName: 'https',
        created: '2026-01-03T00:00:00Z',
      }),
    ]);
    assert.deepEqual(policyConditions(r.statuses, 'p-1')?.[0], ['Accepted', 'True', 'Accepted']);
    assert.deepEqual(policyConditions(r.statuses, 'p-2')?.[0], ['Accepted', 'False', 'Conflicted']);
    assert.deepEqual(policyConditions(r.statuses, 'p-0')?.[0], ['Accepted', 'False', 'Conflicted']);
    assert.deepEqual(policyConditions(r.statuses, 'p-port')?.[0], ['Accepted', 'True', 'Accepted']);
    // The port-specific policy applies to its port.
    assert.equal(fleet(r).clusters[0].tls?.sni, 'port.example.com');
  });

  test('appProtocol HTTPS needs a policy; a policy makes the backend resolvable', () => {
    const without = build([...svc('b', { appProtocol: 'HTTPS' }), route(['b'])]);
    assert.equal(fleet(without).clusters.length, 0);
    const withPolicy = build([
      ...svc('b', { appProtocol: 'HTTPS' }),
      route(['b']),
      caConfigMap('ca', ROOT_CERT),
      backendTlsPolicy('p', 'b', 'b.example.com'),
    ]);
    assert.equal(fleet(withPolicy).clusters[0].tls?.sni, 'b.example.com');
  });

  test('a policy created after its route reaches the route through a shared build memo', () => {
    const memo = new BuildMemo();
    const store = storeOf(
      gatewayClass(),
      gateway('gw', [httpListener('http', 80)]),
      ...svc('b', { appProtocol: 'HTTPS' }),
      route(['b']),
    );
    const before = buildGateways(store, OPTS, memo);
    assert.equal(fleet(before).clusters.length, 0, 'no policy yet: UnsupportedProtocol');
    store.put(caConfigMap('ca', ROOT_CERT));
    store.put(backendTlsPolicy('p', 'b', 'b.example.com'));
    const after = buildGateways(store, OPTS, memo);
    assert.equal(fleet(after).clusters[0]?.tls?.sni, 'b.example.com', 'the memoized route is compiled again');
  });

  test('a policy no route uses has no status; one that targets another Service leaves clusters plain', () => {
    const r = build([
      ...svc('b'),
      ...svc('c'),
      route(['b']),
      caConfigMap('ca', ROOT_CERT),
      backendTlsPolicy('p', 'c', 'c.example.com'),
    ]);
    assert.equal(policyConditions(r.statuses, 'p'), undefined);
    assert.equal(fleet(r).clusters[0].tls, undefined);
  });

  test('a policy change changes only the clusters of the Service it targets (byte-stable translation)', () => {
    const base = [
      ...svc('b'),
      ...svc('c'),
      route(['b', 'c']),
      caConfigMap('ca', ROOT_CERT),
      caConfigMap('ca2', SELF_CERT),
    ];
    const before = translateFleet(fleet(build([...base, backendTlsPolicy('p', 'b', 'b.example.com')])));
    const after = translateFleet(
      fleet(build([...base, backendTlsPolicy('p', 'b', 'b.example.com', { caConfigMaps: ['ca2'] })])),
    );
    const bytes = (res: typeof before) => new Map(res.clusters.map((c) => [c.name, JSON.stringify(c)]));
    const a = bytes(before);
    const b = bytes(after);
    assert.notEqual(a.get('default/b/443'), b.get('default/b/443'));
    assert.equal(a.get('default/c/443'), b.get('default/c/443'));
    assert.deepEqual(JSON.stringify(before.listeners), JSON.stringify(after.listeners));
    assert.deepEqual(JSON.stringify(before.routes), JSON.stringify(after.routes));
  });
});

describe('Gateway backend client certificate (docs/gateway-api.md §24)', () => {
  const withClientCert = (ref: Record<string, unknown>) => {
    const gw = gateway('gw', [httpListener('http', 80)]);
    (gw.spec as Record<string, unknown>).tls = { backend: { clientCertificateRef: ref } };
    return gw;
  };
  const gatewayResolvedRefs = (statuses: ObjectStatus[]) => {
    const s = statuses.find((x) => x.kind === 'Gateway' && x.metadata.name === 'gw');
    const conds = s?.status.conditions as { type: string; status: string; reason: string }[];
    return conds
      .filter((c) => c.type === 'ResolvedRefs' || c.type === 'Accepted')
      .map((c) => [c.type, c.status, c.reason]);
  };

  test('a valid Secret is presented to TLS backends and served over SDS', () => {
    const r = build(
      [
        ...svc('b'),
        route(['b']),
        caConfigMap('ca', ROOT_CERT),
        backendTlsPolicy('p', 'b', 'b.example.com'),
        tlsSecret('client'),
      ],
      withClientCert({ group: '', kind: 'Secret', name: 'client' }),
    );
    const f = fleet(r);
    assert.equal(f.clusters[0].tls?.clientCertificate, 'default/client');
    assert.deepEqual(
      f.secrets.map((s) => s.name),
      ['default/client'],
    );
    assert.deepEqual(gatewayResolvedRefs(r.statuses), [
      ['Accepted', 'True', 'Accepted'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
    ]);
  });

  test('invalid references: the spec reasons, the Gateway stays Accepted, nothing presented', () => {
    const cases: [Record<string, unknown>, KubeObject[], string][] = [
      [{ group: '', kind: 'Secret', name: 'missing' }, [], 'InvalidClientCertificateRef'],
      [
        { group: 'wrong.io', kind: 'Secret', name: 'client' },
        [tlsSecret('client')],
        'InvalidClientCertificateRef',
      ],
      [
        { group: '', kind: 'WrongKind', name: 'client' },
        [tlsSecret('client')],
        'InvalidClientCertificateRef',
      ],
      [
        { group: '', kind: 'Secret', name: 'client' },
        [tlsSecret('client', { type: 'Opaque' })],
        'InvalidClientCertificateRef',
      ],
      [
        { group: '', kind: 'Secret', name: 'client', namespace: 'other' },
        [tlsSecret('client', { namespace: 'other' })],
        'RefNotPermitted',
      ],
    ];
    for (const [ref, objects, reason] of cases) {
      const r = build(
        [
          ...svc('b'),
          route(['b']),
          caConfigMap('ca', ROOT_CERT),
          backendTlsPolicy('p', 'b', 'b.example.com'),
          ...objects,
        ],
        withClientCert(ref),
      );
      assert.deepEqual(gatewayResolvedRefs(r.statuses), [
        ['Accepted', 'True', 'Accepted'],
        ['ResolvedRefs', 'False', reason],
      ]);
      assert.equal(fleet(r).clusters[0].tls?.clientCertificate, undefined);
    }
  });
});

describe('real Envoy accepts the upstream TLS translation (envoy --mode validate)', () => {
  test('inline CA with SANs, a refusing policy and a client certificate', () => {
    const gw = gateway('gw', [httpListener('http', 80)]);
    (gw.spec as Record<string, unknown>).tls = {
      backend: { clientCertificateRef: { group: '', kind: 'Secret', name: 'client' } },
    };
    const r = build(
      [
        ...svc('b'),
        ...svc('c'),
        ...svc('d'),
        route(['b', 'c', 'd']),
        tlsSecret('client'),
        caConfigMap('ca', ROOT_CERT),
        backendTlsPolicy('p-b', 'b', 'b.example.com', {
          subjectAltNames: [
            { type: 'Hostname', hostname: '*.example.org' },
            { type: 'URI', uri: 'spiffe://td/b' },
          ],
        }),
        backendTlsPolicy('p-c', 'c', 'c.example.com', { caConfigMaps: ['ca', 'ca2'] }),
        caConfigMap('ca2', SELF_CERT),
        backendTlsPolicy('p-d', 'd', 'd.example.com', { caConfigMaps: ['missing'] }),
      ],
      gw,
    );
    const res = translateFleet(fleet(r), { bindAddress: '127.0.0.1' });
    // The refusing policy's cluster (d) has no endpoints and no TLS context: nothing to trust.
    assert.deepEqual(
      res.clusters.map((c) => [c.name, Boolean(c.transport_socket)]),
      [
        ['default/b/443', true],
        ['default/c/443', true],
        ['default/d/443', false],
      ],
    );
    assert.deepEqual(res.endpoints.find((e) => e.cluster_name === 'default/d/443')?.endpoints ?? [], []);
    const run = envoyValidate(staticBootstrap(res), 'backend-tls');
    assert.equal(run.status, 0, `envoy --mode validate rejected it:\n${run.output}`);
  });

  test('control: Envoy rejects an UpstreamTlsContext whose CA is not a certificate', () => {
    const r = build([
      ...svc('b'),
      route(['b']),
      caConfigMap('ca', ROOT_CERT),
      backendTlsPolicy('p', 'b', 'b.example.com'),
    ]);
    const f = fleet(r);
    const broken = {
      ...f,
      clusters: f.clusters.map((c) => ({ ...c, tls: { ...c.tls!, caBundle: 'garbage' } })),
    };
    const run = envoyValidate(
      staticBootstrap(translateFleet(broken, { bindAddress: '127.0.0.1' })),
      'backend-tls-control',
    );
    assert.notEqual(run.status, 0);
  });
});
