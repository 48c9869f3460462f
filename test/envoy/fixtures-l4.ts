import type { ClusterModel, FleetModel, L4PortModel, PortModel } from '../../src/model/fleet';

/**
 * A hand-built FleetModel of TCP and UDP listeners (docs/gateway-api.md §28): a weighted TCP route
 * with an invalid share, a TCP listener with nothing to forward to, a UDP listener on the same port
 * number as the first TCP one with two backends (the heaviest serves), and a UDP listener without
 * a backend; the golden file and `envoy --mode validate` cover them.
 */

function l4(name: string, port: number, model: L4PortModel): PortModel {
  return { name, port, filterChains: [], l4: model };
}

function cluster(
  name: string,
  protocol: ClusterModel['protocol'],
  address: string,
  port: number,
): ClusterModel {
  return { name, protocol, endpoints: [{ address, port, ready: true }] };
}

/** TCP and UDP ports: weights, an invalid share, no backend, a shared port number. */
export function l4Fleet(): FleetModel {
  return {
    fleet: 'infra/gw',
    gateway: { namespace: 'infra', name: 'gw' },
    ports: [
      l4('tcp-5300', 5300, {
        protocol: 'TCP',
        listener: 'Gateway/infra/gw/tcp',
        backends: [
          { cluster: 'infra/echo-a/7000', weight: 3 },
          { cluster: 'infra/echo-b/7000', weight: 1 },
        ],
        invalidWeight: 1,
      }),
      l4('udp-5300', 5300, {
        protocol: 'UDP',
        listener: 'Gateway/infra/gw/dns',
        backends: [
          { cluster: 'other/dns/53/udp', weight: 1 },
          { cluster: 'other/dns-b/53/udp', weight: 4 },
        ],
      }),
      l4('tcp-5301', 5301, { protocol: 'TCP', listener: 'Gateway/infra/gw/empty', backends: [] }),
      l4('udp-5302', 5302, { protocol: 'UDP', listener: 'ListenerSet/team-a/set/udp', backends: [] }),
    ],
    clusters: [
      cluster('infra/echo-a/7000', 'tcp', '10.1.0.1', 7000),
      cluster('infra/echo-b/7000', 'tcp', '10.1.0.2', 7000),
      cluster('other/dns-b/53/udp', 'udp', '10.2.0.2', 5354),
      cluster('other/dns/53/udp', 'udp', '10.2.0.1', 5354),
    ],
    secrets: [],
  };
}
