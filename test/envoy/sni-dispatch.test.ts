import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet } from '../../src/envoy/translate';
import { sniClusterName } from '../../src/envoy/translate/sni-dispatch';
import { checkConsistency } from '../../src/xds/consistency';
import type { FilterChainModel, FleetModel } from '../../src/model/fleet';
import type { Listener } from '../../src/generated/envoy/config/listener/v3/Listener';
import type { Cluster } from '../../src/generated/envoy/config/cluster/v3/Cluster';
import { httpsFleet, httpsFleetWithoutCatchAll, mixedFleet } from './fixtures';
import { encodeAll } from './helpers';

/** The SNI-dispatch listener layout (src/envoy/translate/sni-dispatch.ts, docs/xds.md §16). */

const LAYOUT = { listenerLayout: 'sni-dispatch' as const, bindAddress: '127.0.0.1' };

function front(listeners: Listener[], name = 'https-8443'): Listener {
  const l = listeners.find((x) => x.name === name);
  assert.ok(l, `front listener ${name}`);
  return l;
}

function chainNames(l: Listener): string[] {
  return (l.filter_chains ?? []).map((c) => c.name!);
}

function serverNamesOf(l: Listener, chain: string): string[] | undefined {
  return l.filter_chains?.find((c) => c.name === chain)?.filter_chain_match?.server_names ?? undefined;
}

function internalTarget(c: Cluster): string {
  const address = c.load_assignment?.endpoints?.[0]?.lb_endpoints?.[0]?.endpoint?.address;
  return address?.envoy_internal_address?.server_listener_name ?? '';
}

const withoutCatchAll = httpsFleetWithoutCatchAll;

describe('SNI-dispatch layout', () => {
  test('each TLS chain becomes an internal listener with one unmatched chain, reached by a cluster per name', () => {
    const res = translateFleet(withoutCatchAll(), LAYOUT);
    const internal = res.listeners.filter((l) => l.internal_listener);
    assert.deepEqual(
      internal.map((l) => l.name),
      [
        'https-8443/Gateway/infra/gw/www',
        'https-8443/Gateway/infra/gw/wildcard',
        'https-8443/ListenerSet/team-a/tenants/a',
        'https-8443/ListenerSet/team-b/tenants/b',
      ],
    );
    for (const l of internal) {
      assert.equal(l.address, undefined);
      assert.equal(l.filter_chains?.length, 1);
      assert.equal(l.filter_chains![0].filter_chain_match, undefined);
      assert.ok(l.filter_chains![0].transport_socket, `${l.name} terminates TLS`);
      assert.deepEqual(
        l.listener_filters?.map((f) => f.name),
        ['envoy.filters.listener.original_dst'],
        'the internal listener restores the client and local addresses',
      );
    }
    for (const l of res.listeners.filter((x) => x.address))
      for (const chain of l.filter_chains!.filter(
        (c) => c.filter_chain_match?.transport_protocol === 'tls' || c.filter_chain_match?.server_names,
      ))
        assert.equal(
          chain.filters![0].name,
          'envoy.filters.network.set_filter_state',
          `front chain ${chain.name} hands the addresses on`,
        );
    const clusters = new Map(
      res.clusters.filter((c) => c.name!.startsWith('sni:')).map((c) => [c.name!, internalTarget(c)]),
    );
    assert.deepEqual(
      [...clusters],
      [
        [sniClusterName('https-8443', 'www.example.com'), 'https-8443/Gateway/infra/gw/www'],
        [sniClusterName('https-8443', '*.example.com'), 'https-8443/Gateway/infra/gw/wildcard'],
        [sniClusterName('https-8443', 'a.tenant.test'), 'https-8443/ListenerSet/team-a/tenants/a'],
        [sniClusterName('https-8443', 'b.tenant.test'), 'https-8443/ListenerSet/team-b/tenants/b'],
      ],
    );
    for (const c of res.clusters.filter((x) => x.name!.startsWith('sni:')))
      assert.equal(c.transport_socket?.name, 'envoy.transport_sockets.internal_upstream', c.name);
    assert.deepEqual(checkConsistency(res).errors, []);
  });

  test('a port with a hostname-less listener keeps the chains layout', () => {
    const dispatched = translateFleet(httpsFleet(), LAYOUT);
    const chains = translateFleet(httpsFleet(), { bindAddress: '127.0.0.1' });
    const a = encodeAll(dispatched);
    const b = encodeAll(chains);
    assert.equal(a.listeners.length, b.listeners.length);
    a.listeners.forEach((buf, i) => assert.ok(buf.equals(b.listeners[i]), `listener ${i}`));
    assert.equal(dispatched.clusters.length, chains.clusters.length);
  });

  test('without one: exact names are not in the front Listener at all, and adding one leaves it unchanged', () => {
    const model = withoutCatchAll();
    const before = translateFleet(model, LAYOUT);
    const l = front(before.listeners);
    assert.deepEqual(chainNames(l), [
      'Gateway/infra/gw/www/www.example.com',
      'Gateway/infra/gw/wildcard/*.example.com',
      'https-8443/by-sni',
    ]);
    assert.deepEqual(
      l.filter_chains![2].filters!.map((f) => f.name),
      ['envoy.filters.network.set_filter_state', 'envoy.filters.network.tcp_proxy'],
    );
    assert.equal(l.filter_chains![2].filter_chain_match?.transport_protocol, 'tls');
    const port = model.ports[1];
    const added: FilterChainModel = {
      ...port.filterChains[2],
      name: 'ListenerSet/team-c/tenants/c',
      serverNames: ['c.tenant.test'],
      routeConfigName: 'https-8443/c.tenant.test',
    };
    const grown: FleetModel = {
      ...model,
      ports: [model.ports[0], { ...port, filterChains: [...port.filterChains, added] }],
    };
    const after = translateFleet(grown, LAYOUT);
    const encBefore = encodeAll(before);
    const encAfter = encodeAll(after);
    // The front Listener's bytes are equal; every old internal listener and cluster is the very same object.
    assert.ok(encAfter.listeners[1].equals(encBefore.listeners[1]));
    for (const l of before.listeners.filter((x) => x.internal_listener))
      assert.ok(after.listeners.includes(l));
    for (const c of before.clusters) assert.ok(after.clusters.includes(c), c.name);
    assert.equal(after.listeners.length, before.listeners.length + 1);
    assert.equal(after.clusters.length, before.clusters.length + 1);
    assert.deepEqual(checkConsistency(after).errors, []);
  });

  test('an exact name under a wildcard added later moves into an explicit front chain', () => {
    const model = withoutCatchAll();
    const port = model.ports[1];
    const covered: FilterChainModel = {
      ...port.filterChains[2],
      name: 'ListenerSet/team-c/tenants/api',
      serverNames: ['api.example.com'],
    };
    const l = front(
      translateFleet(
        { ...model, ports: [model.ports[0], { ...port, filterChains: [...port.filterChains, covered] }] },
        LAYOUT,
      ).listeners,
    );
    assert.deepEqual(serverNamesOf(l, 'ListenerSet/team-c/tenants/api/api.example.com'), ['api.example.com']);
  });

  test('plain HTTP stays a raw_buffer chain of the front Listener; TLS passthrough forwards still encrypted', () => {
    const res = translateFleet(mixedFleet(), LAYOUT);
    const internal = res.listeners.filter((l) => l.internal_listener);
    assert.ok(internal.length > 0);
    const pass = internal.find((l) => l.name!.endsWith('pass'));
    assert.ok(pass, 'the passthrough listener');
    assert.equal(pass.filter_chains![0].transport_socket, undefined, 'passthrough does not terminate');
    assert.deepEqual(checkConsistency(res).errors, []);
  });

  test('byte-deterministic: the same model gives the same encodings', () => {
    const a = encodeAll(translateFleet(withoutCatchAll(), LAYOUT));
    const b = encodeAll(translateFleet(withoutCatchAll(), LAYOUT));
    for (const kind of Object.keys(a) as (keyof typeof a)[]) {
      assert.equal(a[kind].length, b[kind].length);
      a[kind].forEach((buf, i) => assert.ok(buf.equals(b[kind][i]), `${kind}[${i}]`));
    }
  });

  test('the consistency check reports a cluster whose internal listener is missing', () => {
    const res = translateFleet(withoutCatchAll(), LAYOUT);
    res.listeners = res.listeners.filter((l) => l.name !== 'https-8443/ListenerSet/team-a/tenants/a');
    assert.deepEqual(checkConsistency(res).errors, [
      `cluster "${sniClusterName('https-8443', 'a.tenant.test')}": internal listener "https-8443/ListenerSet/team-a/tenants/a" not found`,
    ]);
  });

  test('the chains layout is the default and unchanged', () => {
    const res = translateFleet(httpsFleet(), { bindAddress: '127.0.0.1' });
    assert.equal(res.listeners.filter((l) => l.internal_listener).length, 0);
    assert.equal(res.clusters.filter((c) => c.name!.startsWith('sni:')).length, 0);
  });
});
