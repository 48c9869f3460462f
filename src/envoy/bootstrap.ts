import * as net from 'node:net';
import * as os from 'node:os';
import { stringify } from 'yaml';
import { parseHostPort } from '../util/host-port';
import type { HostPort } from '../util/host-port';
import { fleetName } from '../model/names';

/**
 * Generates the Envoy bootstrap (docs/xds.md §13).
 *
 * A pure function of its options: the same options give byte-identical YAML, so a bootstrap can be
 * regenerated and diffed safely.
 */

/** Name of the static cluster that carries the ADS stream to Convoy. */
export const XDS_CLUSTER_NAME = 'convoy_xds';
export const DEFAULT_ADMIN_ADDRESS = '127.0.0.1:19000';
/** Default cap on downstream connections across all listeners (overload manager). */
export const DEFAULT_MAX_DOWNSTREAM_CONNECTIONS = 50_000;

/** Holds the files and name for mTLS from Envoy to Convoy's xDS server. */
export interface BootstrapTlsOptions {
  /** PEM client certificate chain Envoy presents to Convoy. */
  certFile: string;
  /** PEM private key for certFile. */
  keyFile: string;
  /** PEM CA bundle that must have signed Convoy's serving certificate. */
  caFile: string;
  /**
   * Name the server certificate must carry (SAN) and the SNI to send. Defaults to the xDS host.
   * An IP address is matched as an IP SAN and is not sent as SNI.
   */
  serverName?: string;
}

/** Holds everything a bootstrap is generated from (the flags of `convoy bootstrap`). */
export interface BootstrapOptions {
  /** Convoy's xDS address, `host:port` (IPv6 as `[::1]:18000`). */
  xdsAddress: string;
  /** The Gateway this Envoy serves, `namespace/name`; becomes node.cluster (the fleet key). */
  gateway: string;
  /** node.id; defaults to the machine's hostname (the pod name in Kubernetes). */
  nodeId?: string;
  /** State-of-the-world ADS instead of the default delta ADS. */
  sotw?: boolean;
  /** Envoy admin listener, `host:port`; defaults to 127.0.0.1:19000. */
  adminAddress?: string;
  /** mTLS to the control plane. */
  tls?: BootstrapTlsOptions;
  /** Overload-manager cap on active downstream connections. */
  maxDownstreamConnections?: number;
}

/** Parses a Gateway reference `namespace/name`; throws unless it is a DNS-1123 label and subdomain. */
export function parseGatewayRef(value: string): { namespace: string; name: string } {
  const parts = value.split('/');
  const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  const subdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
  if (parts.length !== 2 || !label.test(parts[0]) || !subdomain.test(parts[1])) {
    throw new Error(`gateway: expected NAMESPACE/NAME, got ${JSON.stringify(value)}`);
  }
  return { namespace: parts[0], name: parts[1] };
}

/** Returns an Envoy `socket_address` for a host and port. */
function socketAddress(hp: HostPort): object {
  return { socket_address: { address: hp.host, port_value: hp.port } };
}

/**
 * Returns the transport socket of the xDS cluster: TLS 1.2+, ALPN h2, Envoy's client certificate, and
 * the server's SAN checked against the CA bundle.
 *
 * The expected name is `serverName`, else the xDS host; it is sent as SNI unless it is an IP address.
 */
function tlsTransportSocket(tls: BootstrapTlsOptions, host: string): object {
  const serverName = tls.serverName ?? host;
  const isIp = net.isIP(serverName) !== 0;
  const upstreamTls: Record<string, unknown> = {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    common_tls_context: {
      tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
      alpn_protocols: ['h2'],
      tls_certificates: [
        { certificate_chain: { filename: tls.certFile }, private_key: { filename: tls.keyFile } },
      ],
      validation_context: {
        trusted_ca: { filename: tls.caFile },
        match_typed_subject_alt_names: [
          { san_type: isIp ? 'IP_ADDRESS' : 'DNS', matcher: { exact: serverName } },
        ],
      },
    },
  };
  // SNI must be a hostname (RFC 6066); an IP literal is never sent.
  if (!isIp) upstreamTls.sni = serverName;
  return { name: 'envoy.transport_sockets.tls', typed_config: upstreamTls };
}

/** Builds the bootstrap as a plain object in Envoy's proto3 JSON/YAML shape. */
export function buildBootstrap(options: BootstrapOptions): Record<string, unknown> {
  const xds = parseHostPort(options.xdsAddress, 'xds-address');
  if (xds.port === 0) throw new Error('xds-address: port 0 is not a reachable port');
  const admin = parseHostPort(options.adminAddress ?? DEFAULT_ADMIN_ADDRESS, 'admin-address');
  const gateway = parseGatewayRef(options.gateway);
  const nodeId = options.nodeId ?? os.hostname();
  if (!nodeId) throw new Error('node-id: must not be empty');
  const maxConnections = options.maxDownstreamConnections ?? DEFAULT_MAX_DOWNSTREAM_CONNECTIONS;
  if (!Number.isInteger(maxConnections) || maxConnections < 1) {
    throw new Error('maxDownstreamConnections: expected a positive integer');
  }
  if (options.tls) {
    for (const [k, v] of Object.entries({ certFile: options.tls.certFile, keyFile: options.tls.keyFile })) {
      if (!v) throw new Error(`tls.${k} is required`);
    }
    if (!options.tls.caFile) throw new Error('tls.caFile is required');
  }

  // Wait for the control plane instead of going LIVE with nothing after 15 s (docs/xds.md §9;
  // Istio #49929: a gateway that is Ready with an empty config serves 404s).
  const adsSource = { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '0s' };
  const isIp = net.isIP(xds.host) !== 0;

  const xdsCluster: Record<string, unknown> = {
    name: XDS_CLUSTER_NAME,
    type: isIp ? 'STATIC' : 'STRICT_DNS',
    connect_timeout: '5s',
    load_assignment: {
      cluster_name: XDS_CLUSTER_NAME,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(xds) } }] }],
    },
    // gRPC needs HTTP/2; keepalive pings detect a control plane that vanished without a FIN.
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        explicit_http_config: {
          http2_protocol_options: { connection_keepalive: { interval: '30s', timeout: '5s' } },
        },
      },
    },
    upstream_connection_options: { tcp_keepalive: {} },
    // Several control-plane replicas behind one name: a reconnect may go to any of them, which
    // is safe because versions are content hashes (docs/architecture.md §6).
    circuit_breakers: {
      thresholds: [{ max_connections: 100_000, max_pending_requests: 100_000, max_requests: 100_000 }],
    },
  };
  if (!isIp) xdsCluster.dns_lookup_family = 'V4_PREFERRED';
  if (options.tls) xdsCluster.transport_socket = tlsTransportSocket(options.tls, xds.host);

  return {
    node: { id: nodeId, cluster: fleetName(gateway.namespace, gateway.name) },
    admin: { address: socketAddress(admin) },
    dynamic_resources: {
      ads_config: {
        api_type: options.sotw ? 'GRPC' : 'DELTA_GRPC',
        transport_api_version: 'V3',
        set_node_on_first_message_only: true,
        grpc_services: [
          {
            envoy_grpc: {
              cluster_name: XDS_CLUSTER_NAME,
              // Reconnect quickly after a control-plane restart, without hammering it.
              retry_policy: { retry_back_off: { base_interval: '0.25s', max_interval: '5s' } },
            },
          },
        ],
      },
      lds_config: adsSource,
      cds_config: adsSource,
    },
    static_resources: { clusters: [xdsCluster] },
    overload_manager: {
      resource_monitors: [
        {
          name: 'envoy.resource_monitors.global_downstream_max_connections',
          typed_config: {
            '@type':
              'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig',
            max_active_downstream_connections: maxConnections,
          },
        },
      ],
    },
    // Operators can flip runtime keys through the admin API (/runtime_modify) while debugging.
    layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] },
  };
}

/** Renders the bootstrap as YAML with a header comment saying where it came from. */
export function renderBootstrapYaml(options: BootstrapOptions): string {
  const header =
    `# Envoy bootstrap generated by "convoy bootstrap" for Gateway ${options.gateway}.\n` +
    `# ADS (${options.sotw ? 'state of the world' : 'delta'}) to ${options.xdsAddress}` +
    `${options.tls ? ' over mTLS' : ''}.\n`;
  return header + stringify(buildBootstrap(options), { lineWidth: 0, aliasDuplicateObjects: false });
}
