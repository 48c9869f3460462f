import type { Listener } from '../../generated/envoy/config/listener/v3/Listener';
import type { Filter } from '../../generated/envoy/config/listener/v3/Filter';
import type { AccessLog } from '../../generated/envoy/config/accesslog/v3/AccessLog';
import type { TcpProxy } from '../../generated/envoy/extensions/filters/network/tcp_proxy/v3/TcpProxy';
import type { UdpProxyConfig } from '../../generated/envoy/extensions/filters/udp/udp_proxy/v3/UdpProxyConfig';
import type { Route as UdpRoute } from '../../generated/envoy/extensions/filters/udp/udp_proxy/v3/Route';
import type { L4PortModel, PortModel } from '../../model/fleet';
import { ExtensionNames, ExtensionTypeUrl, typed } from './common';
import { INVALID_BACKEND_CLUSTER, activeBackends } from './routes';
import { needsUdpWeightedCluster, udpWeightedClusterName } from './udp-weights';

/**
 * Translates the ports of TCP and UDP listeners (docs/gateway-api.md §28) to Envoy Listeners.
 *
 * - TCP: one filter chain named after the Gateway API listener, with a tcp_proxy to the route's
 *   cluster, or weighted_clusters when it has several backends or invalid ones; invalid backendRefs
 *   keep their share as INVALID_BACKEND_CLUSTER, a name no cluster has, so tcp_proxy closes that
 *   share of connections. With nothing to forward to, the chain's only filter closes every
 *   connection (direct_response without payload).
 * - UDP: a UDP socket (`udp_listener_config`) whose listener filter is udp_proxy, routing every
 *   datagram session to one cluster through the matcher's `on_no_match`: the route's one backend,
 *   or the port's locality-weighted cluster when it has several (udp-weights.ts); with none,
 *   sessions go to INVALID_BACKEND_CLUSTER and their datagrams are dropped.
 *
 * Each port is its own Listener, translated from its PortModel alone: a change to one TCP or UDP route
 * changes only its listener's bytes.
 */

const UDP_PROXY_FILTER = 'envoy.filters.udp_listener.udp_proxy';
const UDP_PROXY_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig';
const UDP_ROUTE_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route';
/** envoy.config.core.v3.SocketAddress.Protocol.UDP, as the number protobufjs verify() accepts. */
const SOCKET_PROTOCOL_UDP = 1;

/** Returns a terminal network filter that closes the connection: direct_response with no payload. */
function closeConnection(): Filter {
  return {
    name: ExtensionNames.NetworkDirectResponse,
    typed_config: { type_url: ExtensionTypeUrl.NetworkDirectResponse, value: Buffer.alloc(0) },
  };
}

/**
 * Builds the tcp_proxy of a TCP port: one cluster, or weighted clusters with the invalid share as
 * INVALID_BACKEND_CLUSTER; undefined when nothing has weight.
 */
export function l4TcpProxy(l4: L4PortModel, accessLog: AccessLog[]): Filter | undefined {
  const active = activeBackends(l4.backends);
  const invalid = l4.invalidWeight ?? 0;
  if (active.length === 0 && !(invalid > 0)) return undefined;
  const proxy: TcpProxy = { stat_prefix: l4.listener };
  if (active.length === 1 && !(invalid > 0)) proxy.cluster = active[0].cluster;
  else {
    const clusters = active.map((b) => ({ name: b.cluster, weight: b.weight }));
    if (invalid > 0) clusters.push({ name: INVALID_BACKEND_CLUSTER, weight: invalid });
    proxy.weighted_clusters = { clusters };
  }
  if (accessLog.length) proxy.access_log = accessLog;
  return { name: ExtensionNames.TcpProxy, typed_config: typed<TcpProxy>(ExtensionTypeUrl.TcpProxy, proxy) };
}

/**
 * Returns the cluster a UDP port sends its sessions to: its one backend, the port's weighted cluster
 * (udp-weights.ts) when it has several, INVALID_BACKEND_CLUSTER when it has none.
 */
export function udpCluster(port: PortModel, l4: L4PortModel): string {
  if (needsUdpWeightedCluster(l4)) return udpWeightedClusterName(port);
  const [only] = activeBackends(l4.backends);
  return only ? only.cluster : INVALID_BACKEND_CLUSTER;
}

/**
 * Builds the Listener of a TCP or UDP port (`l4` is its `port.l4`), bound at `bindAddress`;
 * `tcpAccessLog` are the tcp_proxy access logs (access-log.ts).
 */
export function buildL4Listener(
  port: PortModel,
  l4: L4PortModel,
  bindAddress: string,
  tcpAccessLog: AccessLog[],
  bufferLimitBytes: number,
): Listener {
  const portValue = port.bindPort ?? port.port;
  if (l4.protocol === 'UDP') {
    const route = typed<UdpRoute>(UDP_ROUTE_TYPE_URL, { cluster: udpCluster(port, l4) });
    const proxy = typed<UdpProxyConfig>(UDP_PROXY_TYPE_URL, {
      stat_prefix: l4.listener,
      matcher: { on_no_match: { action: { name: 'route', typed_config: route } } },
    });
    return {
      name: port.name,
      address: {
        socket_address: { protocol: SOCKET_PROTOCOL_UDP, address: bindAddress, port_value: portValue },
      },
      stat_prefix: port.name,
      udp_listener_config: {},
      listener_filters: [{ name: UDP_PROXY_FILTER, typed_config: proxy }],
    };
  }
  return {
    name: port.name,
    address: { socket_address: { address: bindAddress, port_value: portValue } },
    stat_prefix: port.name,
    per_connection_buffer_limit_bytes: { value: bufferLimitBytes },
    filter_chains: [{ name: l4.listener, filters: [l4TcpProxy(l4, tcpAccessLog) ?? closeConnection()] }],
  };
}
