import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { parseHostPort } from '../util/host-port';
import type { HostPort } from '../util/host-port';
import type { ListenerLayout } from './translate/sni-dispatch';

/**
 * Envoy bootstrap generation (docs/xds.md §13). A pure function of its options: the same options give
 * byte-identical YAML, so a bootstrap can be regenerated and diffed safely.
 */

/** Name of the static cluster that carries the ADS stream to Convoy. */
export const XDS_CLUSTER_NAME = 'convoy_xds';
export const DEFAULT_ADMIN_ADDRESS = '127.0.0.1:19000';
/** Default cap on downstream connections across all listeners (overload manager). */
export const DEFAULT_MAX_DOWNSTREAM_CONNECTIONS = 50_000;

/**
 * mTLS to Convoy (docs/security.md §2). Envoy reads the client certificate and the CA through
 * two SDS files (renderXdsSdsFiles) rather than inline in the bootstrap: Envoy reloads
 * file-based SDS secrets when their folder changes, so a renewed certificate is picked up
 * without a restart.
 */
export interface BootstrapTlsOptions {
  /** PEM client certificate chain Envoy presents to Convoy (absolute path, as Envoy sees it). */
  certFile: string;
  /** PEM private key for certFile. */
  keyFile: string;
  /** PEM CA bundle that must have signed Convoy's serving certificate. */
  caFile: string;
  /** Absolute folder where Envoy finds the SDS files (written beside the bootstrap). */
  sdsDir: string;
  /** Prefix of the SDS file names, so several bootstraps can share a folder. Default: none. */
  sdsPrefix?: string;
  /**
   * Name the server certificate must carry (SAN) and the SNI to send. Defaults to the xDS host.
   * An IP address is matched as an IP SAN and is not sent as SNI.
   */
  serverName?: string;
}

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
  /**
   * Serve GET /ready of the admin API (and nothing else) on this `host:port`, so a kubelet can
   * probe readiness while admin stays on loopback (docs/architecture.md §13).
   */
  readinessAddress?: string;
  /**
   * The listener layout Convoy serves this Envoy (docs/xds.md §16). `sni-dispatch` and `auto` (which
   * dispatches large ports) add the runtime setting internal listeners need: Envoy would otherwise
   * turn the close of an internal connection into a reset of the client's, dropping a
   * `Connection: close` response.
   */
  listenerLayout?: ListenerLayout;
}

/**
 * Runtime for the SNI-dispatch layout (docs/xds.md §16): tcp_proxy must close the client's
 * connection with a FIN, after the data, when an internal listener closes; with the default, Envoy
 * sees that close as a reset and resets the client, losing a `Connection: close` response.
 */
const SNI_DISPATCH_RUNTIME = {
  'envoy.reloadable_features.propagate_upstream_rst_through_tunneled_tcp_proxy': false,
};

/**
 * Returns true when the layout can dispatch a port by SNI, so the bootstrap needs
 * SNI_DISPATCH_RUNTIME: `sni-dispatch` always, `auto` once a port reaches its threshold, which
 * may happen long after the Envoy started (docs/xds.md §16).
 */
export function needsDispatchRuntime(layout: ListenerLayout | undefined): boolean {
  return layout === 'sni-dispatch' || layout === 'auto';
}

/** Names of the static readiness listener and of the cluster it proxies to (admin). */
export const READINESS_LISTENER_NAME = 'convoy_readiness';
export const ADMIN_CLUSTER_NAME = 'convoy_admin';

/** A static listener that proxies exactly GET /ready to the admin listener; every other path is 404. */
function readinessResources(readiness: HostPort, admin: HostPort): { listener: object; cluster: object } {
  const hcm = {
    '@type':
      'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    stat_prefix: READINESS_LISTENER_NAME,
    route_config: {
      name: READINESS_LISTENER_NAME,
      virtual_hosts: [
        {
          name: READINESS_LISTENER_NAME,
          domains: ['*'],
          routes: [
            {
              match: { path: '/ready', headers: [{ name: ':method', string_match: { exact: 'GET' } }] },
              route: { cluster: ADMIN_CLUSTER_NAME },
            },
          ],
        },
      ],
    },
    http_filters: [
      {
        name: 'envoy.filters.http.router',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
      },
    ],
  };
  return {
    listener: {
      name: READINESS_LISTENER_NAME,
      address: socketAddress(readiness),
      filter_chains: [
        { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] },
      ],
    },
    cluster: {
      name: ADMIN_CLUSTER_NAME,
      type: 'STATIC',
      connect_timeout: '1s',
      load_assignment: {
        cluster_name: ADMIN_CLUSTER_NAME,
        endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(admin) } }] }],
      },
    },
  };
}

/** Parses `namespace/name` (both DNS-1123 labels). */
export function parseGatewayRef(value: string): { namespace: string; name: string } {
  const parts = value.split('/');
  const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  const subdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
  if (parts.length !== 2 || !label.test(parts[0]) || !subdomain.test(parts[1])) {
    throw new Error(`gateway: expected NAMESPACE/NAME, got ${JSON.stringify(value)}`);
  }
  return { namespace: parts[0], name: parts[1] };
}

function socketAddress(hp: HostPort): object {
  return { socket_address: { address: hp.host, port_value: hp.port } };
}

/** SDS secret names of the xDS client certificate and of the CA that signed Convoy's. */
export const XDS_CLIENT_CERTIFICATE_SECRET = 'convoy_xds_client_certificate';
export const XDS_TRUSTED_CA_SECRET = 'convoy_xds_trusted_ca';

/** The names of the two SDS files of a bootstrap with mTLS. */
export function xdsSdsFileNames(prefix = ''): { certificate: string; trustedCa: string } {
  return { certificate: `${prefix}xds-client-certificate.yaml`, trustedCa: `${prefix}xds-trusted-ca.yaml` };
}

function sdsConfig(tls: BootstrapTlsOptions, file: string): object {
  return { path_config_source: { path: path.posix.join(tls.sdsDir, file) }, resource_api_version: 'V3' };
}

const SECRET_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';

/**
 * The SDS files a bootstrap with mTLS refers to, by file name. Each names its PEM files and
 * watches their folder: a rename there (an atomic rewrite, or a Kubernetes Secret volume
 * switching its `..data` link) makes Envoy read them again.
 */
export function renderXdsSdsFiles(tls: BootstrapTlsOptions): Record<string, string> {
  const names = xdsSdsFileNames(tls.sdsPrefix);
  const doc = (secret: object) =>
    '# SDS file generated by "convoy bootstrap": the xDS mTLS material, reloaded when its folder changes.\n' +
    stringify({ resources: [{ '@type': SECRET_TYPE, ...secret }] }, { lineWidth: 0 });
  return {
    [names.certificate]: doc({
      name: XDS_CLIENT_CERTIFICATE_SECRET,
      tls_certificate: {
        certificate_chain: { filename: tls.certFile },
        private_key: { filename: tls.keyFile },
        watched_directory: { path: path.posix.dirname(tls.certFile) },
      },
    }),
    [names.trustedCa]: doc({
      name: XDS_TRUSTED_CA_SECRET,
      validation_context: {
        trusted_ca: { filename: tls.caFile },
        watched_directory: { path: path.posix.dirname(tls.caFile) },
      },
    }),
  };
}

function tlsTransportSocket(tls: BootstrapTlsOptions, host: string): object {
  const serverName = tls.serverName ?? host;
  const isIp = net.isIP(serverName) !== 0;
  const names = xdsSdsFileNames(tls.sdsPrefix);
  const upstreamTls: Record<string, unknown> = {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    common_tls_context: {
      tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
      alpn_protocols: ['h2'],
      tls_certificate_sds_secret_configs: [
        { name: XDS_CLIENT_CERTIFICATE_SECRET, sds_config: sdsConfig(tls, names.certificate) },
      ],
      combined_validation_context: {
        default_validation_context: {
          match_typed_subject_alt_names: [
            { san_type: isIp ? 'IP_ADDRESS' : 'DNS', matcher: { exact: serverName } },
          ],
        },
        validation_context_sds_secret_config: {
          name: XDS_TRUSTED_CA_SECRET,
          sds_config: sdsConfig(tls, names.trustedCa),
        },
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
    for (const [k, v] of Object.entries({
      certFile: options.tls.certFile,
      keyFile: options.tls.keyFile,
      caFile: options.tls.caFile,
      sdsDir: options.tls.sdsDir,
    })) {
      // Envoy resolves relative names against its working directory, which is nobody's intent.
      if (!v || !path.posix.isAbsolute(v))
        throw new Error(`tls.${k} must be an absolute path, got ${JSON.stringify(v)}`);
    }
  }

  // Wait for the control plane instead of going LIVE with nothing after 15 s (docs/xds.md §13;
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
  const readiness =
    options.readinessAddress !== undefined
      ? readinessResources(parseHostPort(options.readinessAddress, 'readiness-address'), admin)
      : undefined;

  return {
    node: { id: nodeId, cluster: `${gateway.namespace}/${gateway.name}` },
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
    static_resources: readiness
      ? { listeners: [readiness.listener], clusters: [xdsCluster, readiness.cluster] }
      : { clusters: [xdsCluster] },
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
    layered_runtime: {
      layers: [
        ...(needsDispatchRuntime(options.listenerLayout)
          ? [{ name: 'sni-dispatch', static_layer: SNI_DISPATCH_RUNTIME }]
          : []),
        { name: 'admin', admin_layer: {} },
      ],
    },
    // Internal listeners, which the SNI-dispatch listener layout uses (docs/xds.md §16); inert otherwise.
    bootstrap_extensions: [
      {
        name: 'envoy.bootstrap.internal_listener',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.bootstrap.internal_listener.v3.InternalListener',
        },
      },
    ],
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
