import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import {
  collectEndpointRefusals,
  endpointRefusal,
  refusedSliceEndpoints,
} from '../../src/gateway/endpoint-guard';
import type { BuildOptions } from '../../src/gateway/resolved';
import type { KubeObject } from '../../src/store/objects';
import { classifyAddress, isLoopbackHost } from '../../src/util/address-class';
import {
  OPTS,
  backendRef,
  backendService,
  endpointSlice,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  routeParents,
  service,
  storeOf,
} from '../support/objects';

describe('classifyAddress', () => {
  test('loopback, unspecified, link-local and routable, IPv4-mapped forms as their IPv4 address', () => {
    const cases: [string, string | undefined][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.3.4', 'loopback'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:2', 'loopback'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['::', 'unspecified'],
      ['169.254.169.254', 'link-local'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['febf::1', 'link-local'],
      ['fec0::1', 'routable'],
      ['10.0.0.1', 'routable'],
      ['128.0.0.1', 'routable'],
      ['169.255.0.1', 'routable'],
      ['2001:db8::1', 'routable'],
      ['localhost', undefined],
      ['example.com', undefined],
    ];
    for (const [address, expected] of cases) assert.equal(classifyAddress(address), expected, address);
  });

  test('isLoopbackHost: loopback addresses and localhost, not the unspecified address', () => {
    for (const h of ['127.0.0.1', '::1', 'localhost', 'LOCALHOST', '127.1.2.3'])
      assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', 'localhost.example.com'])
      assert.ok(!isLoopbackHost(h), h);
  });
});

describe('endpointRefusal', () => {
  test('refuses host-local addresses by default, naming the flag that allows them', () => {
    assert.match(endpointRefusal('127.0.0.1', 8080, {})!, /loopback address.*--allow-loopback-endpoints/);
    assert.match(endpointRefusal('0.0.0.0', 8080, {})!, /unspecified address.*--allow-loopback-endpoints/);
    assert.match(endpointRefusal('::1', 8080, {})!, /loopback/);
    assert.match(endpointRefusal('169.254.169.254', 80, {})!, /link-local.*--allow-link-local-endpoints/);
    assert.match(endpointRefusal('fe80::1', 80, {})!, /link-local/);
    for (const a of ['10.0.0.1', '192.0.2.7', '2001:db8::1', '1.2.3.4', '126.255.255.255'])
      assert.equal(endpointRefusal(a, 8080, {}), undefined, a);
  });

  test('the opt-ins allow their own range only; protected ports stay refused on loopback', () => {
    const loopback = { allowLoopback: true, protectedPorts: [9090, 18000, 19000] };
    assert.equal(endpointRefusal('127.0.0.1', 8080, loopback), undefined);
    assert.equal(endpointRefusal('0.0.0.0', 8080, loopback), undefined);
    assert.match(endpointRefusal('127.0.0.1', 19000, loopback)!, /admin or xDS port/);
    assert.match(endpointRefusal('::ffff:127.0.0.1', 9090, loopback)!, /admin or xDS port/);
    assert.match(endpointRefusal('169.254.169.254', 80, loopback)!, /link-local/);
    // Protected ports are host-local: the same port elsewhere is an ordinary backend.
    assert.equal(endpointRefusal('10.0.0.1', 9090, loopback), undefined);
    assert.equal(endpointRefusal('169.254.1.1', 80, { allowLinkLocal: true }), undefined);
    assert.match(endpointRefusal('127.0.0.1', 80, { allowLinkLocal: true })!, /loopback/);
  });

  test('the IPv4 shortcut agrees with the full classification', () => {
    for (let first = 0; first < 256; first++) {
      for (const rest of ['0.0.1', '254.1.1', '255.255.255']) {
        const address = `${first}.${rest}`;
        const expected = classifyAddress(address) === 'routable';
        assert.equal(endpointRefusal(address, 80, {}) === undefined, expected, address);
      }
    }
  });
});

describe('refusedSliceEndpoints and collectEndpointRefusals', () => {
  test('every TCP port times every refused address; FQDN slices and UDP ports are not judged', () => {
    const slice = endpointSlice(
      'web-1',
      'web',
      [{ name: 'http', port: 8080 }, { name: 'dns', port: 53, protocol: 'UDP' }, { port: 9000 }],
      [{ addresses: ['10.0.0.1', '127.0.0.1'] }, { addresses: ['169.254.1.1'], ready: false }],
    );
    assert.deepEqual(
      refusedSliceEndpoints(slice, {}).map((r) => `${r.portName}|${r.address}|${r.port}`),
      ['http|127.0.0.1|8080', '|127.0.0.1|9000', 'http|169.254.1.1|8080', '|169.254.1.1|9000'],
    );
    const fqdn = endpointSlice('n', 'web', [{ port: 80 }], [{ addresses: ['localhost'] }], {
      addressType: 'FQDN',
    });
    assert.deepEqual(refusedSliceEndpoints(fqdn, {}), []);
  });

  test('groups by Service, sorted; the fingerprint changes exactly when the refusals do', () => {
    const a = endpointSlice(
      'a-1',
      'a',
      [{ name: 'http', port: 80 }],
      [{ addresses: ['127.0.0.2', '127.0.0.1'] }],
    );
    const b = endpointSlice('b-1', 'b', [{ name: 'http', port: 80 }], [{ addresses: ['10.0.0.1'] }]);
    const r = collectEndpointRefusals([a, b], {});
    assert.deepEqual([...r.byService.keys()], ['default/a']);
    assert.deepEqual(
      r.byService.get('default/a')!.map((x) => x.address),
      ['127.0.0.1', '127.0.0.2'],
    );
    assert.equal(collectEndpointRefusals([b, a], {}).fingerprint, r.fingerprint);
    assert.equal(collectEndpointRefusals([b], {}).fingerprint, collectEndpointRefusals([], {}).fingerprint);
    assert.notEqual(collectEndpointRefusals([b], {}).fingerprint, r.fingerprint);
    assert.equal(collectEndpointRefusals([a, b], { allowLoopback: true }).byService.size, 0);
  });
});

describe('buildGateways with the endpoint guard', () => {
  const base = [
    gatewayClass(),
    gateway('gw', [httpListener('http', 80)]),
    httpRoute('web', [{ backendRefs: [backendRef('web', 8080)] }]),
  ];
  const build = (objects: KubeObject[], opts: Partial<BuildOptions> = {}) =>
    buildGateways(storeOf(...objects), { ...OPTS, ...opts });
  const resolvedRefs = (statuses: ReturnType<typeof build>['statuses']) =>
    routeParents(statuses, 'HTTPRoute', 'web')![0].conditions.find((c) => c.type === 'ResolvedRefs')!;

  test('a Service with a loopback endpoint is refused: ResolvedRefs=False, no cluster, the rule answers 500', () => {
    const result = build([...base, ...backendService('web', 8080, ['10.0.0.1', '127.0.0.1'])]);
    const c = resolvedRefs(result.statuses);
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'BackendNotFound');
    assert.equal(
      c.message,
      'Service default/web port 8080 is refused: 127.0.0.1 is a loopback address: Envoy would connect to its own host (convoy serve --allow-loopback-endpoints)',
    );
    const fleet = result.fleets[0];
    assert.deepEqual(fleet.clusters, []);
    const action = fleet.ports[0].http!.virtualHosts[0].routes[0].action;
    assert.equal(action.kind, 'direct');
    assert.equal((action as { status: number }).status, 500);
  });

  test('allowed by the opt-in, except on a protected port', () => {
    const objects = [...base, ...backendService('web', 8080, ['127.0.0.1'], { targetPort: 3000 })];
    const allowed = build(objects, { endpoints: { allowLoopback: true, protectedPorts: [19000] } });
    assert.equal(resolvedRefs(allowed.statuses).status, 'True');
    assert.deepEqual(allowed.fleets[0].clusters[0].endpoints, [
      { address: '127.0.0.1', port: 3000, ready: true },
    ]);
    const admin = [...base, ...backendService('web', 8080, ['127.0.0.1'], { targetPort: 19000 })];
    const refused = build(admin, { endpoints: { allowLoopback: true, protectedPorts: [19000] } });
    assert.match(resolvedRefs(refused.statuses).message, /127\.0\.0\.1:19000 is an admin or xDS port/);
    assert.deepEqual(refused.fleets[0].clusters, []);
  });

  test('only the slice port the Service port names counts', () => {
    const objects = [
      ...base,
      service('web', [
        { name: 'http', port: 8080 },
        { name: 'debug', port: 9000 },
      ]),
      endpointSlice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }]),
      endpointSlice('web-2', 'web', [{ name: 'debug', port: 9000 }], [{ addresses: ['127.0.0.1'] }]),
    ];
    assert.equal(resolvedRefs(build(objects).statuses).status, 'True');
  });

  test('an ExternalName Service naming localhost or a loopback address is refused like an endpoint', () => {
    for (const externalName of ['localhost', 'LOCALHOST.', '127.0.0.1', '169.254.169.254']) {
      const svc: KubeObject = {
        ...service('web', [{ name: 'http', port: 8080 }]),
        spec: { type: 'ExternalName', externalName, ports: [{ name: 'http', port: 8080 }] },
      };
      const c = resolvedRefs(build([...base, svc], { externalNameServices: true }).statuses);
      assert.equal(c.status, 'False', externalName);
      assert.match(c.message, /is refused: .*(loopback|link-local)/, externalName);
    }
    const svc: KubeObject = {
      ...service('web', [{ name: 'http', port: 8080 }]),
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'http', port: 8080 }] },
    };
    const allowed = build([...base, svc], { externalNameServices: true, endpoints: { allowLoopback: true } });
    assert.equal(resolvedRefs(allowed.statuses).status, 'True');
  });

  test('memoized route compilation follows a slice turning loopback and back', () => {
    const store = storeOf(...base, ...backendService('web', 8080, ['10.0.0.1']));
    assert.equal(resolvedRefs(buildGateways(store, OPTS).statuses).status, 'True');
    store.put(
      endpointSlice('web-abc12', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['127.0.0.1'] }]),
    );
    assert.equal(resolvedRefs(buildGateways(store, OPTS).statuses).status, 'False');
    store.put(
      endpointSlice('web-abc12', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.2'] }]),
    );
    const after = buildGateways(store, OPTS);
    assert.equal(resolvedRefs(after.statuses).status, 'True');
    assert.deepEqual(after.fleets[0].clusters[0].endpoints, [
      { address: '10.0.0.2', port: 8080, ready: true },
    ]);
  });
});
