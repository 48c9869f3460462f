import type { Listener } from '../../generated/envoy/config/listener/v3/Listener';
import type { FilterChain } from '../../generated/envoy/config/listener/v3/FilterChain';
import type { Filter } from '../../generated/envoy/config/listener/v3/Filter';
import type { ListenerFilter } from '../../generated/envoy/config/listener/v3/ListenerFilter';
import type { Cluster } from '../../generated/envoy/config/cluster/v3/Cluster';
import type { TcpProxy } from '../../generated/envoy/extensions/filters/network/tcp_proxy/v3/TcpProxy';
import type { Config as SetFilterStateConfig } from '../../generated/envoy/extensions/filters/network/set_filter_state/v3/Config';
import type { FilterStateValue } from '../../generated/envoy/extensions/filters/common/set_filter_state/v3/FilterStateValue';
import type { OriginalDst } from '../../generated/envoy/extensions/filters/listener/original_dst/v3/OriginalDst';
import type { InternalUpstreamTransport } from '../../generated/envoy/extensions/transport_sockets/internal_upstream/v3/InternalUpstreamTransport';
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
import { DispatchReuse, type DispatchedChain, type DispatchedPort } from './dispatch-reuse';

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
 * chain. The internal listener sees the original client and local addresses: every front chain
 * stores them in the connection's filter state under the original_dst listener filter's well-known
 * keys, shared once with the upstream (internal) connection, and the internal listener's
 * original_dst filter restores them, so `use_remote_address`, X-Forwarded-For and access logs see
 * the client, not the front Listener.
 * Envoy needs the `envoy.bootstrap.internal_listener` bootstrap extension (src/envoy/bootstrap.ts).
 */

/** How a TLS port's hostnames are laid out in Envoy resources (docs/xds.md §16; layout-choice.ts). */
export type { ListenerLayout } from './layout-choice';

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

/** Filter state keys the original_dst listener filter restores an internal connection's addresses from. */
const ORIGINAL_REMOTE_KEY = 'envoy.filters.listener.original_dst.remote_ip';
const ORIGINAL_LOCAL_KEY = 'envoy.filters.listener.original_dst.local_ip';

const TypeUrl = {
  SetFilterState: 'type.googleapis.com/envoy.extensions.filters.network.set_filter_state.v3.Config',
  OriginalDst: 'type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst',
  InternalUpstream:
    'type.googleapis.com/envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport',
  /** Packed by hand: RawBuffer has no fields, so its encoding is zero bytes. */
  RawBuffer: 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer',
} as const;

const ORIGINAL_DST_LISTENER_FILTER: ListenerFilter = {
  name: 'envoy.filters.listener.original_dst',
  typed_config: typed<OriginalDst>(TypeUrl.OriginalDst, {}),
};

/** A filter state value from a substitution format, optionally handed once to the upstream connection. */
function formatted(objectKey: string, format: string, shared: boolean): FilterStateValue {
  return {
    object_key: objectKey,
    format_string: { text_format_source: { inline_string: format } },
    ...(shared ? { shared_with_upstream: 'ONCE' as const } : {}),
  };
}

/**
 * Returns a front chain's set_filter_state filter: the client and local addresses for the
 * internal listener (see the file comment) and, for the by-SNI chain, the cluster the SNI names.
 */
function setFilterState(sniCluster?: string): Filter {
  const config: SetFilterStateConfig = {
    on_new_connection: [
      formatted(ORIGINAL_REMOTE_KEY, '%DOWNSTREAM_REMOTE_ADDRESS%', true),
      formatted(ORIGINAL_LOCAL_KEY, '%DOWNSTREAM_LOCAL_ADDRESS%', true),
      ...(sniCluster ? [formatted(TCP_PROXY_CLUSTER_KEY, sniCluster, false)] : []),
    ],
  };
  return {
    name: 'envoy.filters.network.set_filter_state',
    typed_config: typed(TypeUrl.SetFilterState, config),
  };
}

export type { DispatchedPort } from './dispatch-reuse';

/** Returns a tcp_proxy to a fixed cluster (no access log: the internal listener logs). */
function tcpProxy(statPrefix: string, cluster: string): Filter {
  return {
    name: ExtensionNames.TcpProxy,
    typed_config: typed<TcpProxy>(ExtensionTypeUrl.TcpProxy, { stat_prefix: statPrefix, cluster }),
  };
}

/** Returns the filters of a front chain for one fixed cluster: addresses into filter state, then tcp_proxy. */
function fixedProxy(statPrefix: string, cluster: string): Filter[] {
  return [setFilterState(), tcpProxy(statPrefix, cluster)];
}

/**
 * Returns the filters of the front Listener's by-SNI chain: the SNI names the cluster through
 * filter state, and the tcp_proxy's own cluster is only the fallback Envoy requires.
 */
function dynamicProxy(portName: string): Filter[] {
  return [
    setFilterState(sniClusterName(portName, '%REQUESTED_SERVER_NAME%')),
    tcpProxy(portName, sniClusterName(portName, '')),
  ];
}

/** Returns true when `name` (exact) is covered by one of the `*.` wildcards. */
function coveredByWildcard(name: string, wildcards: readonly string[]): boolean {
  const lower = name.toLowerCase();
  return wildcards.some((w) => lower.endsWith(w.slice(1).toLowerCase()));
}

/**
 * The internal_upstream transport socket: it hands the filter state a front chain shares with the
 * upstream connection (the original addresses) to the internal listener's connection.
 */
const INTERNAL_UPSTREAM_SOCKET = {
  name: 'envoy.transport_sockets.internal_upstream',
  typed_config: typed<InternalUpstreamTransport>(TypeUrl.InternalUpstream, {
    transport_socket: {
      name: 'envoy.transport_sockets.raw_buffer',
      typed_config: { type_url: TypeUrl.RawBuffer, value: Buffer.alloc(0) },
    },
  }),
};

/** Builds the cluster that connects to one internal listener. */
export function internalCluster(name: string, listenerName: string): Cluster {
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
    transport_socket: INTERNAL_UPSTREAM_SOCKET,
  };
}

/** Builds the internal listener of one chain: addresses restored, then the chain without its SNI match. */
function internalListener(name: string, chain: FilterChain): Listener {
  const { filter_chain_match: _match, ...unmatched } = chain;
  void _match;
  return {
    name,
    stat_prefix: name,
    per_connection_buffer_limit_bytes: { value: PER_CONNECTION_BUFFER_LIMIT_BYTES },
    listener_filters: [ORIGINAL_DST_LISTENER_FILTER],
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

/** The options a port is translated with, parsed once from its variant key. */
interface PortOptions {
  bindAddress: string;
  accessLog: AccessLogOptions;
  tracing: HcmTracingOrNull;
}

/**
 * Returns one chain's parts: its internal listener and clusters (memoized), and the explicit
 * front chains of its names that are wildcards or that a wildcard of the port covers.
 */
function chainParts(
  fc: FilterChainModel,
  portName: string,
  names: string[],
  wildcards: readonly string[],
  options: PortOptions,
): DispatchedChain {
  const parts = memoChainParts(fc, JSON.stringify([portName, names, options.accessLog, options.tracing]));
  const explicit: FilterChain[] = [];
  for (const sn of names) {
    if (sn.startsWith('*.') || coveredByWildcard(sn, wildcards)) {
      explicit.push({
        name: `${fc.name}/${sn}`,
        filter_chain_match: { server_names: [sn] },
        filters: fixedProxy(portName, sniClusterName(portName, sn.toLowerCase())),
      });
    }
  }
  return { listener: parts.listener, clusters: parts.clusters, explicit };
}

/** Builds the front Listener: the port's HTTP chain, the explicit chains, then the by-SNI chain. */
function frontListener(port: PortModel, explicit: FilterChain[], options: PortOptions): Listener {
  const front: FilterChain[] = [
    ...explicit,
    {
      name: `${port.name}/by-sni`,
      filter_chain_match: { transport_protocol: 'tls' },
      filters: dynamicProxy(port.name),
    },
  ];
  if (port.http) front.unshift(httpFilterChain(port, true, options.accessLog, options.tracing ?? undefined));
  return portListener(port, options.bindAddress, true, front);
}

/** Each fleet's dispatched ports as last translated (dispatch-reuse.ts). */
const lastPorts = new DispatchReuse();

/** Forgets what translateDispatchedPort remembers of a fleet (the fleet is gone). */
export function forgetDispatchedPorts(fleet: string): void {
  lastPorts.forget(fleet);
}

/** Keeps what translateDispatchedPort remembers of a fleet's ports for these keys only. */
export function retainDispatchedPorts(fleet: string, keys: ReadonlySet<string>): void {
  lastPorts.retain(fleet, keys);
}

/**
 * Translates a TLS port to the SNI-dispatch layout; undefined for a port without TLS chains or
 * with a hostname-less TLS listener (the chains layout serves those, and plain HTTP and TCP/UDP
 * ports, unchanged). With `fleet`, the port is patched from the fleet's last translation of it
 * (dispatch-reuse.ts), with the same bytes as a full translation; `usedKey` receives the key it is
 * remembered under, for retainDispatchedPorts.
 */
export function translateDispatchedPort(
  port: PortModel,
  bindAddress: string,
  accessLog: AccessLogOptions,
  tracing: HcmTracingOrNull,
  fleet?: { name: string; usedKeys: Set<string> },
): DispatchedPort | undefined {
  if (port.l4 || port.filterChains.length === 0) return undefined;
  const variant = JSON.stringify([bindAddress, accessLog, tracing]);
  if (!fleet) return memoPort(port, variant).result ?? undefined;
  const key = `${port.name} ${variant}`;
  fleet.usedKeys.add(key);
  const options: PortOptions = { bindAddress, accessLog, tracing };
  const result = lastPorts.translate(fleet.name, key, port, {
    full: (p) => memoPort(p, variant),
    chain: (fc, wildcards) => chainParts(fc, port.name, fc.serverNames, wildcards, options),
    front: (p, explicit) => frontListener(p, explicit, options),
  });
  return result ?? undefined;
}

/** The full translation of a port, with each chain's parts when every chain kept all its names. */
const memoPort = memoByNode(
  (port: PortModel, variant: string): { result: DispatchedPort | null; parts?: DispatchedChain[] } => {
    const [bindAddress, accessLog, tracing] = JSON.parse(variant) as [
      string,
      AccessLogOptions,
      HcmTracingOrNull,
    ];
    const options: PortOptions = { bindAddress, accessLog, tracing };
    const assigned = assignServerNames(port.filterChains);
    const kept: { fc: FilterChainModel; names: string[] }[] = [];
    let conflictFree = true;
    port.filterChains.forEach((fc, i) => {
      const names = assigned[i];
      if (names !== fc.serverNames) conflictFree = false;
      if (names) kept.push({ fc, names });
    });
    if (kept.length === 0) return { result: null };
    const wildcards = kept.flatMap((k) => k.names.filter((n) => n.startsWith('*.')));
    // A hostname-less listener keeps the chains layout (see the file comment).
    if (kept.some((k) => k.names.length === 0)) return { result: null };

    const listeners: Listener[] = [];
    const clusters: Cluster[] = [];
    const explicit: FilterChain[] = [];
    const parts: DispatchedChain[] = [];
    for (const { fc, names } of kept) {
      const p = chainParts(fc, port.name, names, wildcards, options);
      parts.push(p);
      listeners.push(p.listener);
      clusters.push(...p.clusters);
      explicit.push(...p.explicit);
    }
    listeners.unshift(frontListener(port, explicit, options));
    return { result: { listeners, clusters }, ...(conflictFree ? { parts } : {}) };
  },
);
