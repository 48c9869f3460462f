import type { Listener } from '../../generated/envoy/config/listener/v3/Listener';
import type { FilterChain } from '../../generated/envoy/config/listener/v3/FilterChain';
import type { Filter } from '../../generated/envoy/config/listener/v3/Filter';
import type { ListenerFilter } from '../../generated/envoy/config/listener/v3/ListenerFilter';
import type { Cluster } from '../../generated/envoy/config/cluster/v3/Cluster';
import type { TcpProxy } from '../../generated/envoy/extensions/filters/network/tcp_proxy/v3/TcpProxy';
import type { Config as SetFilterStateConfig } from '../../generated/envoy/extensions/filters/network/set_filter_state/v3/Config';
import type { ProxyProtocol } from '../../generated/envoy/extensions/filters/listener/proxy_protocol/v3/ProxyProtocol';
import type { ProxyProtocolUpstreamTransport } from '../../generated/envoy/extensions/transport_sockets/proxy_protocol/v3/ProxyProtocolUpstreamTransport';
import type { FilterChainModel, PortModel } from '../../model/fleet';
import { ExtensionNames, ExtensionTypeUrl, memoByNode, typed } from './common';
import type { AccessLogOptions } from './access-log';
import {
  assignServerNames,
  buildTlsFilterChain,
  httpFilterChain,
  PER_CONNECTION_BUFFER_LIMIT_BYTES,
  portListener,
} from './listeners';

/**
 * The SNI-dispatch listener layout (docs/xds.md §16): a TLS port's Listener holds no per-hostname
 * chain; it forwards each connection, still encrypted, to an Envoy internal listener per Gateway
 * API listener (one LDS resource each), reached through a cluster per served hostname (one CDS
 * resource each). Adding, removing or changing one hostname changes one internal listener and
 * one cluster, so a delta xDS stream carries about a kilobyte instead of the port's whole
 * Listener, and no other hostname's connections are drained.
 *
 * Matching stays Envoy's own and equal to the chains layout (listeners.ts):
 * - exact names that no wildcard of the port covers are dispatched by the front Listener's
 *   catch-all chain: `set_filter_state` names the tcp_proxy cluster `sni:<port>:<SNI>`, so a new
 *   exact hostname needs no change to the front Listener;
 * - each wildcard, and each exact name a wildcard of the port covers (the wildcard's chain would
 *   otherwise take it), keeps an explicit `server_names` chain with a fixed cluster, so Envoy's
 *   "exact, then longest wildcard suffix" order decides as before;
 * - an unknown SNI, or none, names no cluster, and the connection is closed, as it is when no chain
 *   matches. A port with a hostname-less Gateway API listener must send those to it instead, and a
 *   per-connection cluster name cannot fall back; listing the exact names in a front chain would
 *   work but changes that chain on every add and remove, which drains every connection it carries
 *   (measured, docs/xds.md §16). Such a port keeps the chains layout.
 * The front chains match `transport_protocol: tls`, so plaintext still reaches only the port's HTTP
 * chain. The internal listener receives the original client address through PROXY protocol v2
 * (the cluster's transport socket writes it, the internal listener's listener filter reads it),
 * so `use_remote_address`, X-Forwarded-For and access logs see the client, not the front Listener.
 * Envoy needs the `envoy.bootstrap.internal_listener` bootstrap extension (src/envoy/bootstrap.ts).
 */

/** How a TLS port's hostnames are laid out in Envoy resources (docs/xds.md §16). */
export type ListenerLayout = 'chains' | 'sni-dispatch';

/** Prefix of the SNI-dispatch cluster names; `:` never occurs in a backend cluster's name. */
export const SNI_CLUSTER_PREFIX = 'sni:';

/** Returns the name of the cluster that forwards a port's connections for one server name. */
export function sniClusterName(portName: string, serverName: string): string {
  return `${SNI_CLUSTER_PREFIX}${portName}:${serverName}`;
}

/** Returns the name of the internal listener that serves one Gateway API listener of a port. */
export function internalListenerName(portName: string, chainName: string): string {
  return `${portName}/${chainName}`;
}

/** The filter state key tcp_proxy reads its cluster from (Envoy's well-known filter state objects). */
const TCP_PROXY_CLUSTER_KEY = 'envoy.tcp_proxy.cluster';

const TypeUrl = {
  SetFilterState: 'type.googleapis.com/envoy.extensions.filters.network.set_filter_state.v3.Config',
  ProxyProtocolListener:
    'type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol',
  ProxyProtocolUpstream:
    'type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport',
  /** Packed by hand: RawBuffer has no fields, so its encoding is zero bytes. */
  RawBuffer: 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer',
} as const;

/** PROXY protocol version 2 (envoy.config.core.v3.ProxyProtocolConfig.Version.V2). */
const PROXY_PROTOCOL_V2 = 1;

const PROXY_PROTOCOL_LISTENER_FILTER: ListenerFilter = {
  name: 'envoy.filters.listener.proxy_protocol',
  typed_config: typed<ProxyProtocol>(TypeUrl.ProxyProtocolListener, {}),
};

/** The resources of one port in the SNI-dispatch layout. */
export interface DispatchedPort {
  /** The front Listener that binds the port, then the internal listeners in chain order. */
  listeners: Listener[];
  /** One cluster per served name (and one for the hostname-less listener), in chain order. */
  clusters: Cluster[];
}

/** Returns a front tcp_proxy to a fixed cluster (no access log: the internal listener logs). */
function fixedProxy(statPrefix: string, cluster: string): Filter {
  return {
    name: ExtensionNames.TcpProxy,
    typed_config: typed<TcpProxy>(ExtensionTypeUrl.TcpProxy, { stat_prefix: statPrefix, cluster }),
  };
}

/**
 * Returns the two filters of the front Listener's dynamic chain: the SNI names the cluster through
 * filter state, and a tcp_proxy without a cluster of its own uses it.
 */
function dynamicProxy(portName: string): Filter[] {
  const setCluster: SetFilterStateConfig = {
    on_new_connection: [
      {
        object_key: TCP_PROXY_CLUSTER_KEY,
        format_string: {
          text_format_source: { inline_string: sniClusterName(portName, '%REQUESTED_SERVER_NAME%') },
        },
      },
    ],
  };
  return [
    {
      name: 'envoy.filters.network.set_filter_state',
      typed_config: typed(TypeUrl.SetFilterState, setCluster),
    },
    fixedProxy(portName, sniClusterName(portName, '')),
  ];
}

/** Returns true when `name` (exact) is covered by one of the `*.` wildcards. */
function coveredByWildcard(name: string, wildcards: readonly string[]): boolean {
  const lower = name.toLowerCase();
  return wildcards.some((w) => lower.endsWith(w.slice(1).toLowerCase()));
}

/** Builds the cluster that connects to one internal listener, passing the client address on. */
export function internalCluster(name: string, listenerName: string): Cluster {
  const inner = {
    name: 'envoy.transport_sockets.raw_buffer',
    typed_config: { type_url: TypeUrl.RawBuffer, value: Buffer.alloc(0) },
  };
  const transport: ProxyProtocolUpstreamTransport = {
    config: { version: PROXY_PROTOCOL_V2 },
    transport_socket: inner,
  };
  return {
    name,
    load_assignment: {
      cluster_name: name,
      endpoints: [
        {
          lb_endpoints: [
            { endpoint: { address: { envoy_internal_address: { server_listener_name: listenerName } } } },
          ],
        },
      ],
    },
    transport_socket: {
      name: 'envoy.transport_sockets.upstream_proxy_protocol',
      typed_config: typed(TypeUrl.ProxyProtocolUpstream, transport),
    },
  };
}

/** Builds the internal listener of one chain: PROXY protocol in, then the chain without its SNI match. */
function internalListener(name: string, chain: FilterChain): Listener {
  const { filter_chain_match: _match, ...unmatched } = chain;
  void _match;
  return {
    name,
    stat_prefix: name,
    per_connection_buffer_limit_bytes: { value: PER_CONNECTION_BUFFER_LIMIT_BYTES },
    listener_filters: [PROXY_PROTOCOL_LISTENER_FILTER],
    filter_chains: [unmatched],
    internal_listener: {},
  };
}

/** The internal listener and clusters of one chain, memoized per chain node and port variant. */
interface ChainParts {
  listener: Listener;
  clusters: Cluster[];
}

const memoChainParts = memoByNode((fc: FilterChainModel, variant: string): ChainParts => {
  const [portName, serverNames, accessLog, tracing] = JSON.parse(variant) as [
    string,
    string[],
    AccessLogOptions,
    HcmTracingOrNull,
  ];
  const listenerName = internalListenerName(portName, fc.name);
  const chain = buildTlsFilterChain(fc, portName, serverNames, accessLog, tracing ?? undefined);
  const names = serverNames.length ? serverNames : [''];
  return {
    listener: internalListener(listenerName, chain),
    clusters: names.map((sn) => internalCluster(sniClusterName(portName, sn.toLowerCase()), listenerName)),
  };
});

type HcmTracingOrNull = Parameters<typeof buildTlsFilterChain>[4] | null;

/**
 * Translates a TLS port to the SNI-dispatch layout; undefined for a port without TLS chains or
 * with a hostname-less TLS listener (the chains layout serves those, and plain HTTP and TCP/UDP
 * ports, unchanged).
 */
export function translateDispatchedPort(
  port: PortModel,
  bindAddress: string,
  accessLog: AccessLogOptions,
  tracing: HcmTracingOrNull,
): DispatchedPort | undefined {
  if (port.l4 || port.filterChains.length === 0) return undefined;
  return memoPort(port, JSON.stringify([bindAddress, accessLog, tracing])) ?? undefined;
}

const memoPort = memoByNode((port: PortModel, variant: string): DispatchedPort | null => {
  const [bindAddress, accessLog, tracing] = JSON.parse(variant) as [
    string,
    AccessLogOptions,
    HcmTracingOrNull,
  ];
  const assigned = assignServerNames(port.filterChains);
  const kept: { fc: FilterChainModel; names: string[] }[] = [];
  port.filterChains.forEach((fc, i) => {
    const names = assigned[i];
    if (names) kept.push({ fc, names });
  });
  if (kept.length === 0) return null;
  const wildcards = kept.flatMap((k) => k.names.filter((n) => n.startsWith('*.')));
  // A hostname-less listener keeps the chains layout (see the file comment).
  if (kept.some((k) => k.names.length === 0)) return null;

  const listeners: Listener[] = [];
  const clusters: Cluster[] = [];
  const explicit: FilterChain[] = [];
  for (const { fc, names } of kept) {
    const parts = memoChainParts(fc, JSON.stringify([port.name, names, accessLog, tracing]));
    listeners.push(parts.listener);
    clusters.push(...parts.clusters);
    for (const sn of names) {
      const cluster = sniClusterName(port.name, sn.toLowerCase());
      if (sn.startsWith('*.') || coveredByWildcard(sn, wildcards)) {
        explicit.push({
          name: `${fc.name}/${sn}`,
          filter_chain_match: { server_names: [sn] },
          filters: [fixedProxy(port.name, cluster)],
        });
      }
    }
  }
  const front: FilterChain[] = [
    ...explicit,
    {
      name: `${port.name}/by-sni`,
      filter_chain_match: { transport_protocol: 'tls' },
      filters: dynamicProxy(port.name),
    },
  ];
  if (port.http) front.unshift(httpFilterChain(port, true, accessLog, tracing ?? undefined));
  listeners.unshift(portListener(port, bindAddress, true, front));
  return { listeners, clusters };
});
