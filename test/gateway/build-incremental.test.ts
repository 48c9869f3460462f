import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import type { FleetModel } from '../../src/model/fleet';
import type { KubeObject } from '../../src/store/objects';
import type { ObjectStore } from '../../src/store/store';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  parentRef,
  storeOf,
  tlsSecret,
} from '../support/objects';

/**
 * Builds over one long-lived store with one BuildMemo reuse last build's work (compiled routes,
 * virtual hosts). The result must always equal a build from scratch, and unchanged parts must keep
 * their identity.
 */

const hosts = ['a.example.com', 'b.example.com', 'c.example.com'];

function world(path = '/'): KubeObject[] {
  return [
    gatewayClass(),
    gateway('gw', [
      httpListener('http', 80),
      ...hosts.map((h, i) => httpsListener(`l${i}`, 443, h, `cert-${i}`)),
    ]),
    ...hosts.map((h, i) => tlsSecret(`cert-${i}`, { hostnames: [h] })),
    ...backendService('web', 80, ['10.0.0.1']),
    ...hosts.map((_h, i) =>
      httpRoute(
        `r${i}`,
        [
          {
            matches: [{ path: { type: 'PathPrefix', value: i === 0 ? path : '/' } }],
            backendRefs: [backendRef('web', 80)],
          },
        ],
        { parentRefs: [parentRef('gw', { sectionName: `l${i}` })] },
      ),
    ),
    httpRoute('plain', [{ backendRefs: [backendRef('web', 80)] }], {
      parentRefs: [parentRef('gw', { sectionName: 'http' })],
    }),
  ];
}

/** A build of `store` with `memo`, the memo of every earlier build of that store. */
function fleet(store: ObjectStore, memo: BuildMemo): FleetModel {
  return buildGateways(store, OPTS, memo).fleets[0];
}

function fresh(objects: KubeObject[]): FleetModel {
  return buildGateways(storeOf(...objects), OPTS).fleets[0];
}

describe('incremental builds over one store', () => {
  test('a rebuild without changes keeps every virtual host list', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const a = fleet(store, memo);
    const b = fleet(store, memo);
    assert.deepEqual(b, a);
    for (let p = 0; p < a.ports.length; p++) {
      assert.equal(b.ports[p].http?.virtualHosts, a.ports[p].http?.virtualHosts);
      a.ports[p].filterChains.forEach((fc, i) =>
        assert.equal(b.ports[p].filterChains[i].virtualHosts, fc.virtualHosts, fc.name),
      );
    }
  });

  test('a route edit changes only its chain and equals a build from scratch', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const a = fleet(store, memo);
    const edited = world('/v2');
    store.put(edited.find((o) => o.metadata.name === 'r0')!);
    const b = fleet(store, memo);
    assert.deepEqual(b, fresh(edited));
    const https = (f: FleetModel) => f.ports.find((p) => p.port === 443)!.filterChains;
    assert.notEqual(https(b)[0].virtualHosts, https(a)[0].virtualHosts);
    assert.equal(https(b)[1].virtualHosts, https(a)[1].virtualHosts);
    assert.equal(https(b)[2].virtualHosts, https(a)[2].virtualHosts);
  });

  test('a backend going away and coming back is reflected at once', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const before = fleet(store, memo);
    store.delete('Service', 'default', 'web');
    const without = world().filter((o) => !(o.kind === 'Service' && o.metadata.name === 'web'));
    assert.deepEqual(fleet(store, memo), fresh(without));
    for (const o of backendService('web', 80, ['10.0.0.1'])) store.put(o);
    assert.deepEqual(fleet(store, memo), before);
  });

  test('clusters keep their identity until their Service or EndpointSlices change', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const a = fleet(store, memo);
    const b = fleet(store, memo);
    assert.equal(b.clusters[0], a.clusters[0]);
    const moved = backendService('web', 80, ['10.0.0.2']);
    store.put(moved[1]);
    const c = fleet(store, memo);
    assert.notEqual(c.clusters[0], a.clusters[0]);
    assert.deepEqual(
      c.clusters[0].endpoints.map((e) => e.address),
      ['10.0.0.2'],
    );
    assert.deepEqual(c, fresh([...world().filter((o) => o.kind !== 'EndpointSlice'), moved[1]]));
  });
});
