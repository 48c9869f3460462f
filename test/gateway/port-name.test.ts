import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { FleetModel } from '../../src/model/fleet';
import type { KubeObject } from '../../src/store/objects';
import {
  OPTS,
  gateway,
  gatewayClass,
  httpsListener,
  listenerSet,
  storeOf,
  tlsListener,
  tlsSecret,
} from '../support/objects';

/**
 * The Listener of an HTTPS/TLS port is named after the first Accepted listener of the port, ready
 * or not (docs/architecture.md §5). Found by test/fuzz/isolation.test.ts: the name used to come from
 * the first *ready* listener, so creating the Secret of a Gateway's HTTPS listener renamed the port's
 * Listener from `tls-8443` to `https-8443`, and Envoy drained a ListenerSet's passthrough connections.
 */

function fleet(objects: KubeObject[]): FleetModel {
  const result = buildGateways(storeOf(gatewayClass(), ...objects), OPTS);
  assert.equal(result.fleets.length, 1);
  return result.fleets[0];
}

const world = [
  gateway('gw', [httpsListener('secure', 8443, 'example.com', 'cert')], {
    allowedListeners: { namespaces: { from: 'Same' } },
  }),
  listenerSet('team-b', { name: 'gw' }, [tlsListener('pass', 8443, 'pass.example.com', 'Passthrough')], {
    created: '2026-01-02T00:00:00Z',
  }),
];

describe('name of an HTTPS/TLS port Listener', () => {
  test('comes from the first Accepted listener even when only a later one is ready', () => {
    const f = fleet(world);
    assert.deepEqual(
      f.ports.map((p) => [p.name, p.filterChains.map((c) => c.name)]),
      [['https-8443', ['ListenerSet/default/team-b/pass']]],
    );
  });

  test('does not change when the first listener becomes ready; the other chain stays as it was', () => {
    const before = fleet(world);
    const after = fleet([...world, tlsSecret('cert')]);
    assert.deepEqual(
      after.ports.map((p) => [p.name, p.filterChains.map((c) => c.name)]),
      [['https-8443', ['Gateway/default/gw/secure', 'ListenerSet/default/team-b/pass']]],
    );
    assert.equal(after.ports[0].name, before.ports[0].name);
    assert.deepEqual(after.ports[0].filterChains[1], before.ports[0].filterChains[0]);
  });

  test('Conflicted listeners do not name the port', () => {
    const f = fleet([
      gateway('gw', [
        httpsListener('a', 8443, 'a.example.com', 'cert'),
        tlsListener('b', 8443, 'a.example.com', 'Passthrough'),
        tlsListener('c', 8443, 'c.example.com', 'Passthrough'),
      ]),
      tlsSecret('cert'),
    ]);
    assert.deepEqual(
      f.ports.map((p) => [p.name, p.filterChains.map((c) => c.name)]),
      [['tls-8443', ['Gateway/default/gw/c']]],
    );
  });
});
