import type { Listener } from '../../generated/envoy/config/listener/v3/Listener';
import type { FilterChain } from '../../generated/envoy/config/listener/v3/FilterChain';
import type { Filter } from '../../generated/envoy/config/listener/v3/Filter';
import type { ListenerFilter } from '../../generated/envoy/config/listener/v3/ListenerFilter';
import type { TransportSocket } from '../../generated/envoy/config/core/v3/TransportSocket';
import type { AccessLog } from '../../generated/envoy/config/accesslog/v3/AccessLog';
import type { HttpConnectionManager } from '../../generated/envoy/extensions/filters/network/http_connection_manager/v3/HttpConnectionManager';
import type { HttpFilter } from '../../generated/envoy/extensions/filters/network/http_connection_manager/v3/HttpFilter';
import type { Router } from '../../generated/envoy/extensions/filters/http/router/v3/Router';
import type { Cors } from '../../generated/envoy/extensions/filters/http/cors/v3/Cors';
import type { TcpProxy } from '../../generated/envoy/extensions/filters/network/tcp_proxy/v3/TcpProxy';
import type { TlsInspector } from '../../generated/envoy/extensions/filters/listener/tls_inspector/v3/TlsInspector';
import type { DownstreamTlsContext } from '../../generated/envoy/extensions/transport_sockets/tls/v3/DownstreamTlsContext';
import type { CommonTlsContext } from '../../generated/envoy/extensions/transport_sockets/tls/v3/CommonTlsContext';
import type { ClientValidationModel, FilterChainModel, PortModel, WeightedCluster } from '../../model/fleet';
import { Enum, ExtensionNames, ExtensionTypeUrl, adsConfigSource, memoByNode, typed } from './common';
import { activeBackends } from './routes';
import { DEFAULT_ACCESS_LOG, accessLogs, type AccessLogOptions } from './access-log';
import { rangeBindPorts } from '../../model/port-range';
import { buildL4Listener } from './l4-listeners';
import { withClientValidation } from './client-validation';
import { ListenerReuse } from './listener-reuse';

/**
 * Translates PortModels to Envoy Listeners (LDS).
 *
 * Shape:
 * - HTTP port: one filter chain, no match, an HTTP connection manager (HCM) on RDS `http-<port>`.
 * - HTTPS/TLS port: `tls_inspector`, then one filter chain per FilterChainModel, named after it and
 *   matched by SNI (`server_names` as given, wildcards included; Envoy prefers exact names, then
 *   the longest wildcard suffix). A chain without server names is the port's catch-all; it matches
 *   `transport_protocol: tls`, so a plaintext connection to a TLS port matches no chain and is
 *   closed instead of being proxied to a passthrough backend.
 *   - HTTPS (Terminate): DownstreamTlsContext with certificates by SDS name over ADS (never inline),
 *     ALPN h2 + http/1.1, client certificate validation when the port has it (client-validation.ts),
 *     then an HCM on RDS `fc.routeConfigName`.
 *   - TLS Terminate: the same TLS context without ALPN, then tcp_proxy. Passthrough: tcp_proxy only.
 *   - A chain that cannot forward (TLS with no backend of positive weight, HTTPS without a route
 *     configuration or certificate) still exists, so its SNI cannot fall through to another
 *     listener's catch-all; its only filter is `envoy.filters.network.direct_response` with no
 *     payload, which closes every connection it gets.
 *
 * Compactness: a port can carry thousands of chains, so each chain holds only non-default fields.
 * Chains are memoized per FilterChainModel node (and the listener's stat prefix).
 */

/** Holds the options of listener translation. */
export interface ListenerOptions {
  /** Address every listener binds; `0.0.0.0` in production, `127.0.0.1` in tests. */
  bindAddress: string;
  /** Access logs of HCMs and TCP proxies (access-log.ts); JSON to stdout by default. */
  accessLog?: AccessLogOptions;
  /** The HCMs' tracing block (tracing.ts); none by default. */
  tracing?: HcmTracing;
  /**
   * The fleet the port belongs to: its Listener is then translated from the fleet's last
   * translation of the same port (listener-reuse.ts); forgetListenerTranslations drops that.
   */
  fleet?: string;
}

type HcmTracing = NonNullable<HttpConnectionManager['tracing']>;

/** Per-connection read/write buffer limit, Envoy's documented recommendation for edge proxies. */
export const PER_CONNECTION_BUFFER_LIMIT_BYTES = 32768;

const ALPN_HTTPS = ['h2', 'http/1.1'];

/**
 * Shared, never mutated: the CORS filter every HCM carries, whether or not a route has a CORS
 * policy. It does nothing for routes without one (their policy is per route, typed_per_filter_config
 * in the RouteConfiguration), so adding or changing a route's CORS filter never changes a Listener
 * (docs/gateway-api.md §20).
 */
const CORS_FILTER: HttpFilter = {
  name: ExtensionNames.Cors,
  typed_config: typed<Cors>(ExtensionTypeUrl.Cors, {}),
};
/** Shared, never mutated: the router filter every HCM carries. */
const ROUTER_FILTER: HttpFilter = {
  name: ExtensionNames.Router,
  typed_config: typed<Router>(ExtensionTypeUrl.Router, {}),
};
const TLS_INSPECTOR: ListenerFilter = {
  name: ExtensionNames.TlsInspector,
  typed_config: typed<TlsInspector>(ExtensionTypeUrl.TlsInspector, {}),
};

/**
 * Builds the HTTP connection manager of a plain or TLS-terminating HTTP chain.
 *
 * codec_type is left at its default, AUTO. `stat_prefix` is the listener name: every HCM of one
 * port shares one set of `http.<listener>.*` stats instead of one set per hostname.
 */
export function httpConnectionManager(
  statPrefix: string,
  routeConfigName: string,
  accessLog: AccessLog[] = accessLogs(DEFAULT_ACCESS_LOG).http,
  tracing?: HcmTracing,
): Filter {
  const hcm: HttpConnectionManager = {
    stat_prefix: statPrefix,
    rds: { config_source: adsConfigSource(), route_config_name: routeConfigName },
    http_filters: [CORS_FILTER, ROUTER_FILTER],
    // WebSocket upgrades are allowed on every route (docs/gateway-api.md §23): a backend with
    // appProtocol kubernetes.io/ws needs them, and a per-route switch would not make routes safer.
    upgrade_configs: [{ upgrade_type: 'websocket' }],
    ...(accessLog.length ? { access_log: accessLog } : {}),
    use_remote_address: { value: true },
    normalize_path: { value: true },
    merge_slashes: true,
    path_with_escaped_slashes_action: Enum.PathWithEscapedSlashesAction.UNESCAPE_AND_REDIRECT,
    ...(tracing ? { tracing } : {}),
  };
  return {
    name: ExtensionNames.HttpConnectionManager,
    typed_config: typed<HttpConnectionManager>(ExtensionTypeUrl.HttpConnectionManager, hcm),
  };
}

/** Builds a tcp_proxy to one cluster, or to weighted clusters; undefined when no backend has weight > 0. */
export function tcpProxy(
  statPrefix: string,
  backends: WeightedCluster[],
  accessLog: AccessLog[] = accessLogs(DEFAULT_ACCESS_LOG).tcp,
): Filter | undefined {
  const active = activeBackends(backends);
  if (active.length === 0) return undefined;
  const proxy: TcpProxy =
    active.length === 1
      ? { stat_prefix: statPrefix, cluster: active[0].cluster }
      : {
          stat_prefix: statPrefix,
          weighted_clusters: { clusters: active.map((b) => ({ name: b.cluster, weight: b.weight })) },
        };
  if (accessLog.length) proxy.access_log = accessLog;
  return { name: ExtensionNames.TcpProxy, typed_config: typed<TcpProxy>(ExtensionTypeUrl.TcpProxy, proxy) };
}

/** Returns a terminal network filter that closes the connection: direct_response with no payload. */
export function rejectFilter(): Filter {
  return {
    name: ExtensionNames.NetworkDirectResponse,
    typed_config: { type_url: ExtensionTypeUrl.NetworkDirectResponse, value: Buffer.alloc(0) },
  };
}

/**
 * Builds a DownstreamTlsContext presenting the named SDS certificates, fetched over ADS, and
 * validating client certificates when `clientValidation` is given (client-validation.ts).
 */
export function downstreamTls(
  secretNames: string[],
  alpn: boolean,
  clientValidation?: ClientValidationModel,
): TransportSocket {
  const common: CommonTlsContext = {
    tls_certificate_sds_secret_configs: secretNames.map((name) => ({
      name,
      sds_config: adsConfigSource(),
    })),
    ...(alpn ? { alpn_protocols: ALPN_HTTPS } : {}),
  };
  const ctx: DownstreamTlsContext = clientValidation
    ? withClientValidation(common, clientValidation)
    : { common_tls_context: common };
  return {
    name: ExtensionNames.TlsTransportSocket,
    typed_config: typed<DownstreamTlsContext>(ExtensionTypeUrl.DownstreamTlsContext, ctx),
  };
}

/**
 * Builds one TLS-port filter chain.
 *
 * `serverNames` is normally `fc.serverNames`; the listener passes a reduced list only when it had to
 * drop names another chain already claimed.
 */
export function buildTlsFilterChain(
  fc: FilterChainModel,
  statPrefix: string,
  serverNames: string[],
  accessLog: AccessLogOptions = DEFAULT_ACCESS_LOG,
  tracing?: HcmTracing,
): FilterChain {
  const logs = accessLogs(accessLog);
  const chain: FilterChain = {
    name: fc.name,
    filter_chain_match: serverNames.length ? { server_names: serverNames } : { transport_protocol: 'tls' },
  };
  const terminate = fc.mode === 'Terminate';
  if (terminate && fc.secretNames.length === 0) {
    chain.filters = [rejectFilter()];
    return chain;
  }
  if (fc.protocol === 'HTTPS') {
    if (!terminate || !fc.routeConfigName) {
      chain.filters = [rejectFilter()];
      return chain;
    }
    chain.transport_socket = downstreamTls(fc.secretNames, true, fc.clientValidation);
    chain.filters = [httpConnectionManager(statPrefix, fc.routeConfigName, logs.http, tracing)];
    return chain;
  }
  // TLS: tcp_proxy over the decrypted (Terminate) or still-encrypted (Passthrough) stream.
  const proxy = tcpProxy(fc.name, fc.tcpBackends ?? [], logs.tcp);
  if (!proxy) {
    chain.filters = [rejectFilter()];
    return chain;
  }
  if (terminate) chain.transport_socket = downstreamTls(fc.secretNames, false);
  chain.filters = [proxy];
  return chain;
}

/** Memoized per chain node; the variant is the stat prefix, then the access log key. */
const memoTlsFilterChain = memoByNode((fc: FilterChainModel, variant: string) => {
  const [statPrefix, accessLog, tracing] = JSON.parse(variant) as [
    string,
    AccessLogOptions,
    HcmTracing | null,
  ];
  return buildTlsFilterChain(fc, statPrefix, fc.serverNames, accessLog, tracing ?? undefined);
});

/**
 * Builds the plain-HTTP chain; on a port that also has TLS chains it takes the non-TLS connections.
 * It is named after the port's Envoy listener, which access logs give as `listener` (several
 * Gateway API listeners can share a plain HTTP port; the route names which one matched).
 */
export function httpFilterChain(
  port: PortModel,
  alongsideTls: boolean,
  accessLog: AccessLogOptions,
  tracing: HcmTracing | undefined,
): FilterChain {
  const http = port.http!;
  const chain: FilterChain = {
    name: port.name,
    filters: [httpConnectionManager(port.name, http.routeConfigName, accessLogs(accessLog).http, tracing)],
  };
  if (alongsideTls) chain.filter_chain_match = { transport_protocol: 'raw_buffer' };
  return chain;
}

/**
 * Returns the server names each chain of a port keeps, or undefined for a dropped chain.
 *
 * Envoy rejects a listener in which two chains have the same match or the same name. The model
 * builder should never produce that; if it does, the first chain keeps the contested server name
 * (or the catch-all), later chains lose it, and a chain left with nothing to match is dropped.
 */
export function assignServerNames(chains: FilterChainModel[]): (string[] | undefined)[] {
  const claimed = new Set<string>();
  const names = new Set<string>();
  let catchAll = false;
  return chains.map((fc) => {
    if (names.has(fc.name)) return undefined;
    if (fc.serverNames.length === 0) {
      if (catchAll) return undefined;
      catchAll = true;
      names.add(fc.name);
      return fc.serverNames;
    }
    const kept: string[] = [];
    for (const sn of fc.serverNames) {
      const key = sn.toLowerCase();
      if (claimed.has(key)) continue;
      claimed.add(key);
      kept.push(sn);
    }
    if (kept.length === 0) return undefined;
    names.add(fc.name);
    return kept.length === fc.serverNames.length ? fc.serverNames : kept;
  });
}

/**
 * Translates a PortModel to a Listener; undefined for a port with nothing to serve (Envoy rejects
 * empty listeners).
 *
 * Memoized per PortModel node and bind address, like the chains: an unchanged port gives the very
 * same Listener object, so the xDS cache skips re-encoding it.
 */
export function translateListener(port: PortModel, options: ListenerOptions): Listener | undefined {
  const accessLog = options.accessLog ?? DEFAULT_ACCESS_LOG;
  const variant = JSON.stringify([
    options.bindAddress,
    accessLog,
    options.tracing ?? null,
    options.fleet ?? null,
  ]);
  return memoListener(port, variant) ?? undefined;
}

/** Each fleet's last Listener per port (listener-reuse.ts). */
const lastListeners = new ListenerReuse();

/** Forgets the fleet's last Listener translations (the fleet is gone). */
export function forgetListenerTranslations(fleet: string): void {
  lastListeners.forget(fleet);
}

const memoListener = memoByNode((port: PortModel, variant: string): Listener | null => {
  const [bindAddress, accessLog, tracing, fleet] = JSON.parse(variant) as [
    string,
    AccessLogOptions,
    HcmTracing | null,
    string | null,
  ];
  return buildListener(port, bindAddress, accessLog, tracing ?? undefined, fleet, variant) ?? null;
});

/**
 * Builds the Listener of a port: its HTTP chain first, then its TLS chains; undefined when it has
 * none. With a fleet, from the fleet's last translation of the port (listener-reuse.ts), which
 * gives the same bytes as the full translation here.
 */
function buildListener(
  port: PortModel,
  bindAddress: string,
  accessLog: AccessLogOptions,
  tracing: HcmTracing | undefined,
  fleet: string | null = null,
  variant = '',
): Listener | undefined {
  if (port.l4) {
    const tcpLogs = accessLogs(accessLog).tcp;
    return buildL4Listener(port, port.l4, bindAddress, tcpLogs, PER_CONNECTION_BUFFER_LIMIT_BYTES);
  }
  const chainVariant = JSON.stringify([port.name, accessLog, tracing ?? null]);
  const chainOf = (fc: FilterChainModel, names: string[]): FilterChain =>
    names === fc.serverNames
      ? memoTlsFilterChain(fc, chainVariant)
      : buildTlsFilterChain(fc, port.name, names, accessLog, tracing);
  const listenerOf = (tls: FilterChain[]): Listener | undefined => {
    const hasTls = tls.length > 0;
    const chains = port.http ? [httpFilterChain(port, hasTls, accessLog, tracing), ...tls] : tls.slice();
    return chains.length === 0 ? undefined : portListener(port, bindAddress, hasTls, chains);
  };
  if (fleet !== null) {
    const key = port.name + ' ' + variant;
    return lastListeners.translate(fleet, key, port.filterChains, assignServerNames, chainOf, listenerOf);
  }
  const chains: FilterChain[] = [];
  const serverNames = assignServerNames(port.filterChains);
  port.filterChains.forEach((fc, i) => {
    const names = serverNames[i];
    if (names) chains.push(chainOf(fc, names));
  });
  return listenerOf(chains);
}

/**
 * Builds the Listener that binds a port (and the rest of its range) around the given chains,
 * with the TLS inspector when a chain matches by SNI.
 */
export function portListener(
  port: PortModel,
  bindAddress: string,
  hasTls: boolean,
  chains: FilterChain[],
): Listener {
  const listener: Listener = {
    name: port.name,
    address: { socket_address: { address: bindAddress, port_value: port.bindPort ?? port.port } },
    stat_prefix: port.name,
    per_connection_buffer_limit_bytes: { value: PER_CONNECTION_BUFFER_LIMIT_BYTES },
  };
  const extra = rangeBindPorts(port);
  if (extra.length > 0) {
    // A port range (docs/gateway-api.md §30): one Listener, one set of chains, N sockets.
    listener.additional_addresses = extra.map((p) => ({
      address: { socket_address: { address: bindAddress, port_value: p } },
    }));
  }
  if (hasTls) listener.listener_filters = [TLS_INSPECTOR];
  listener.filter_chains = chains;
  return listener;
}
