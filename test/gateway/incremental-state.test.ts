import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import { addListenerSet } from '../../src/gateway/incremental/listenerset';
import { updateRoutes } from '../../src/gateway/incremental/routes';
import { stateContents as contents } from '../support/build-state';
import type { FleetModel } from '../../src/model/fleet';
import type { HTTPRouteRule } from '../../src/gateway/api';
import type { KubeObject } from '../../src/store/objects';
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
  portRange,
  storeOf,
  tlsSecret,
} from '../support/objects';

/**
 * The fast paths return a new BuildState and leave the one they were given exactly as it was (a
 * caller may keep it; a fast path that gives up leaves nothing half done), and the state they
 * return holds what the state of a full build of the changed store holds.
 */

const LS_REF = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' } as const;

function rules(path: string): HTTPRouteRule[] {
  return [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [backendRef('web', 80)] }];
}

function world(): KubeObject[] {
  return [
    gatewayClass(),
    gateway('edge', [httpListener('http', 8080), httpsListener('https-a', 8443, 'a.example.com', 'a-cert')], {
      allowedListeners: { namespaces: { from: 'Same' } },
    }),
    listenerSet('first', { name: 'edge' }, [httpsListener('one', 8443, 'one.example.com', 'one-cert')]),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    tlsSecret('one-cert', { hostnames: ['one.example.com'] }),
    tlsSecret('two-cert', { hostnames: ['two.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    httpRoute('r-edge', rules('/edge'), { parentRefs: [parentRef('edge')] }),
    httpRoute('r-one', rules('/one'), { parentRefs: [parentRef('first', LS_REF)] }),
  ];
}

/** A ListenerSet newer than every other set of `edge`, and a route that names only it. */
function addedSet(): { set: KubeObject; route: KubeObject } {
  return {
    set: listenerSet(
      'second',
      { name: 'edge' },
      [httpsListener('two', 8443, 'two.example.com', 'two-cert')],
      {
        created: '2026-02-01T00:00:00Z',
      },
    ),
    route: httpRoute('r-two', rules('/two'), { parentRefs: [parentRef('second', LS_REF)] }),
  };
}

describe('fast paths and the state they are given', () => {
  test('addListenerSet leaves the state as it was and returns what a full build knows', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const built = buildGateways(store, OPTS, memo);
    const before = contents(built.state);
    const fleets = new Map<string, FleetModel>(built.fleets.map((f) => [f.fleet, f]));
    const { set, route } = addedSet();
    store.put(set);
    store.put(route);
    const result = addListenerSet(store, OPTS, memo, built.state, set, [route], (f) => fleets.get(f));
    assert.ok(result, 'the fast path applies');
    assert.deepEqual(contents(built.state), before);
    assert.deepEqual(contents(result.state), contents(buildGateways(store, OPTS).state));
    assert.notDeepEqual(contents(result.state), before);
  });

  test('updateRoutes leaves the state as it was and returns what a full build knows', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const built = buildGateways(store, OPTS, memo);
    const before = contents(built.state);
    const previous = store.get('HTTPRoute', 'default', 'r-one')!;
    const current = httpRoute('r-one', rules('/one/v2'), {
      parentRefs: [parentRef('first', LS_REF)],
      generation: 2,
    });
    store.put(current);
    const result = updateRoutes(store, OPTS, memo, built.state, [{ previous, current }]);
    assert.ok(result, 'the fast path applies');
    assert.deepEqual(contents(built.state), before);
    assert.deepEqual(contents(result.state), contents(buildGateways(store, OPTS).state));
    assert.notDeepEqual(contents(result.state), before);
  });

  test('fast paths in a row each leave their predecessor as it was', () => {
    const store = storeOf(...world());
    const memo = new BuildMemo();
    const built = buildGateways(store, OPTS, memo);
    const fleets = new Map<string, FleetModel>(built.fleets.map((f) => [f.fleet, f]));
    const { set, route } = addedSet();
    store.put(set);
    store.put(route);
    const added = addListenerSet(store, OPTS, memo, built.state, set, [route], (f) => fleets.get(f));
    assert.ok(added);
    const afterAdd = contents(added.state);
    const current = httpRoute('r-two', rules('/two/v2'), {
      parentRefs: [parentRef('second', LS_REF)],
      generation: 2,
    });
    store.put(current);
    const edited = updateRoutes(store, OPTS, memo, added.state, [{ previous: route, current }]);
    assert.ok(edited, 'a route of the added set can be edited on the fast path');
    assert.deepEqual(contents(added.state), afterAdd);
    assert.deepEqual(contents(edited.state), contents(buildGateways(store, OPTS).state));
  });
});

describe('fast paths with a ListenerPortRange (docs/gateway-api.md §30)', () => {
  const withRange = () => [...world(), portRange('wide', { name: 'edge', section: 'http' }, 8099)];

  test('a route edit keeps the range: the fast path gives what a full build gives', () => {
    const store = storeOf(...withRange());
    const memo = new BuildMemo();
    const built = buildGateways(store, OPTS, memo);
    assert.equal(built.fleets[0].ports.find((p) => p.port === 8080)?.endPort, 8099);
    const previous = store.get('HTTPRoute', 'default', 'r-edge')!;
    const current = httpRoute('r-edge', rules('/edge/v2'), {
      parentRefs: [parentRef('edge')],
      generation: 2,
    });
    store.put(current);
    const result = updateRoutes(store, OPTS, memo, built.state, [{ previous, current }]);
    assert.ok(result, 'the fast path applies');
    assert.deepEqual(contents(result.state), contents(buildGateways(store, OPTS).state));
    const fleet = result.fleets[0].model;
    assert.deepEqual(fleet, buildGateways(store, OPTS).fleets[0]);
  });

  test('a new ListenerSet takes a full build while ranges exist (its listener may fall in one)', () => {
    const store = storeOf(...withRange());
    const memo = new BuildMemo();
    const built = buildGateways(store, OPTS, memo);
    const fleets = new Map<string, FleetModel>(built.fleets.map((f) => [f.fleet, f]));
    const inside = listenerSet('inside', { name: 'edge' }, [httpListener('plain', 8090)], {
      created: '2026-02-01T00:00:00Z',
    });
    store.put(inside);
    assert.equal(
      addListenerSet(store, OPTS, memo, built.state, inside, [], (f) => fleets.get(f)),
      undefined,
    );
    const full = buildGateways(store, OPTS);
    const set = full.state.gateways[0].listenerSets.find((s) => s.object.metadata.name === 'inside')!;
    assert.equal(set.listeners[0].ready, false, 'the listener inside the range is Conflicted');
  });
});
