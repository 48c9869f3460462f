import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet } from '../../src/envoy/translate';
import { l4TcpProxy, udpCluster } from '../../src/envoy/translate/l4-listeners';
import { INVALID_BACKEND_CLUSTER } from '../../src/envoy/translate/routes';
import type { FleetModel } from '../../src/model/fleet';
import { l4Fleet } from './fixtures-l4';
import { encodeAll } from './helpers';

/** Unit tests of the TCP and UDP listener translation (docs/gateway-api.md §28). */

/** Returns the encoded listeners of a fleet by name. */
function listenerBytes(model: FleetModel): Map<string, Buffer> {
  const res = translateFleet(model, { bindAddress: '127.0.0.1' });
  const encoded = encodeAll(res).listeners;
  return new Map(res.listeners.map((l, i) => [l.name!, encoded[i]]));
}

describe('TCP and UDP listeners', () => {
  test('tcp_proxy: one cluster alone, weighted clusters with the invalid share, nothing without weight', () => {
    const proxy = (backends: { cluster: string; weight: number }[], invalidWeight?: number) =>
      l4TcpProxy({ protocol: 'TCP', listener: 'Gateway/ns/gw/tcp', backends, invalidWeight }, [])
        ?.typed_config as Record<string, unknown> | undefined;
    assert.equal(proxy([{ cluster: 'ns/a/1', weight: 5 }])?.cluster, 'ns/a/1');
    assert.deepEqual(proxy([{ cluster: 'ns/a/1', weight: 2 }], 3)?.weighted_clusters, {
      clusters: [
        { name: 'ns/a/1', weight: 2 },
        { name: INVALID_BACKEND_CLUSTER, weight: 3 },
      ],
    });
    assert.deepEqual(proxy([{ cluster: 'ns/a/1', weight: 0 }], 1)?.weighted_clusters, {
      clusters: [{ name: INVALID_BACKEND_CLUSTER, weight: 1 }],
    });
    assert.equal(proxy([{ cluster: 'ns/a/1', weight: 0 }]), undefined);
    assert.equal(proxy([]), undefined);
  });

  test('udp_proxy: one backend directly, several through the weighted cluster, none drops datagrams', () => {
    const port = { name: 'udp-53', port: 53, filterChains: [] };
    const l4 = (backends: { cluster: string; weight: number }[]) => ({
      protocol: 'UDP' as const,
      listener: 'Gateway/ns/gw/udp',
      backends,
    });
    assert.equal(udpCluster(port, l4([{ cluster: 'ns/a/53/udp', weight: 2 }])), 'ns/a/53/udp');
    assert.equal(
      udpCluster(
        port,
        l4([
          { cluster: 'ns/a/53/udp', weight: 2 },
          { cluster: 'ns/b/53/udp', weight: 0 },
        ]),
      ),
      'ns/a/53/udp',
    );
    assert.equal(
      udpCluster(
        port,
        l4([
          { cluster: 'ns/a/53/udp', weight: 2 },
          { cluster: 'ns/b/53/udp', weight: 1 },
        ]),
      ),
      'convoy:udp-weighted:udp-53',
    );
    assert.equal(udpCluster(port, l4([{ cluster: 'ns/a/53/udp', weight: 0 }])), INVALID_BACKEND_CLUSTER);
    assert.equal(udpCluster(port, l4([])), INVALID_BACKEND_CLUSTER);
  });

  test('the weighted UDP cluster: one locality per backend with its weight and endpoints', () => {
    const res = translateFleet(l4Fleet(), { bindAddress: '127.0.0.1' });
    const weighted = res.clusters.filter((c) => c.name!.startsWith('convoy:'));
    assert.equal(weighted.length, 1);
    assert.deepEqual(
      weighted[0].load_assignment?.endpoints?.map((l) => [
        l.locality?.sub_zone,
        l.load_balancing_weight?.value,
        l.lb_endpoints?.map((e) => e.endpoint?.address?.socket_address?.address),
      ]),
      [
        ['other/dns/53/udp', 1, ['10.2.0.1']],
        ['other/dns-b/53/udp', 4, ['10.2.0.2']],
      ],
    );
  });

  test('the same model gives byte-identical listeners; a TCP and a UDP listener share a port number', () => {
    const a = listenerBytes(l4Fleet());
    const b = listenerBytes(l4Fleet());
    assert.deepEqual([...a.keys()], ['tcp-5300', 'udp-5300', 'tcp-5301', 'udp-5302']);
    for (const [name, bytes] of a) assert.ok(bytes.equals(b.get(name)!), name);
  });

  test("a change to one route's backends changes only its own listener", () => {
    const before = listenerBytes(l4Fleet());
    const changed = l4Fleet();
    const tcp = changed.ports[0].l4!;
    changed.ports[0] = { ...changed.ports[0], l4: { ...tcp, backends: [tcp.backends[0]], invalidWeight: 0 } };
    const udp = changed.ports[1].l4!;
    changed.ports[1] = { ...changed.ports[1], l4: { ...udp, backends: [udp.backends[0]] } };
    const after = listenerBytes(changed);
    const differing = [...before.keys()].filter((name) => !before.get(name)!.equals(after.get(name)!));
    assert.deepEqual(differing, ['tcp-5300', 'udp-5300']);
  });
});
