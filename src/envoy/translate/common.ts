import type { AnyExtension } from '@grpc/proto-loader';
import type { ConfigSource } from '../../generated/envoy/config/core/v3/ConfigSource';
import type { Duration } from '../../generated/google/protobuf/Duration';

/**
 * Shared pieces of the translators: type URLs, extension names, small value builders, and the
 * per-node memo. Everything here is pure and allocation-light; builders return fresh objects
 * except where noted (ADS config sources are shared, frozen constants).
 */

const TYPE_PREFIX = 'type.googleapis.com/';

/**
 * Type URLs of the extension messages packed into `typed_config` Anys (filters, transport
 * sockets, access loggers, protocol options); the xDS resource types themselves are TypeUrl in
 * src/envoy/resources.ts.
 */
export const ExtensionTypeUrl = {
  HttpConnectionManager: `${TYPE_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  Router: `${TYPE_PREFIX}envoy.extensions.filters.http.router.v3.Router`,
  Cors: `${TYPE_PREFIX}envoy.extensions.filters.http.cors.v3.Cors`,
  CorsPolicy: `${TYPE_PREFIX}envoy.extensions.filters.http.cors.v3.CorsPolicy`,
  TcpProxy: `${TYPE_PREFIX}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`,
  TlsInspector: `${TYPE_PREFIX}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`,
  DownstreamTlsContext: `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  UpstreamTlsContext: `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
  StdoutAccessLog: `${TYPE_PREFIX}envoy.extensions.access_loggers.stream.v3.StdoutAccessLog`,
  FileAccessLog: `${TYPE_PREFIX}envoy.extensions.access_loggers.file.v3.FileAccessLog`,
  HttpProtocolOptions: `${TYPE_PREFIX}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
  /**
   * envoy.extensions.filters.network.direct_response.v3.Config. Its proto is not in the manifest
   * (protos/envoy-manifest.json), so it is packed by hand; with no response configured the message
   * is empty, i.e. zero bytes, so the packed form is exact.
   */
  NetworkDirectResponse: `${TYPE_PREFIX}envoy.extensions.filters.network.direct_response.v3.Config`,
} as const;

export const ExtensionNames = {
  HttpConnectionManager: 'envoy.filters.network.http_connection_manager',
  TcpProxy: 'envoy.filters.network.tcp_proxy',
  NetworkDirectResponse: 'envoy.filters.network.direct_response',
  Router: 'envoy.filters.http.router',
  Cors: 'envoy.filters.http.cors',
  TlsInspector: 'envoy.filters.listener.tls_inspector',
  TlsTransportSocket: 'envoy.transport_sockets.tls',
  StdoutAccessLog: 'envoy.access_loggers.stdout',
  FileAccessLog: 'envoy.access_loggers.file',
  HttpProtocolOptions: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
} as const;

/**
 * Packs a message as a nested google.protobuf.Any in the `{ '@type', ...fields }` form that
 * protobufjs (src/envoy/protos.ts) understands.
 *
 * The type parameter is the generated type of the inner message; callers pass it explicitly so tsc
 * checks the literal's fields against it.
 */
export function typed<T extends object>(typeUrl: string, message: T): AnyExtension {
  return { '@type': typeUrl, ...message } as AnyExtension;
}

/**
 * Lists the Envoy enum values Convoy uses, as numbers.
 *
 * encodeMessage() (src/envoy/protos.ts) runs protobufjs verify(), which accepts enum fields only as
 * numbers, although the generated types also allow names. Every value is checked against the loaded
 * protos in test/envoy/resources.test.ts.
 */
export const Enum = {
  ApiVersion: { V3: 2 },
  DiscoveryType: { STATIC: 0, STRICT_DNS: 1, EDS: 3 },
  DnsLookupFamily: { V4_PREFERRED: 3 },
  HealthStatus: { HEALTHY: 1, UNHEALTHY: 2 },
  HeaderAppendAction: { OVERWRITE_IF_EXISTS_OR_ADD: 2 },
  RedirectResponseCode: { FOUND: 1, SEE_OTHER: 2, TEMPORARY_REDIRECT: 3, PERMANENT_REDIRECT: 4 },
  PathWithEscapedSlashesAction: { UNESCAPE_AND_REDIRECT: 3 },
  DenominatorType: { MILLION: 2 },
  ClusterNotFoundResponseCode: { INTERNAL_SERVER_ERROR: 2 },
  SanType: { DNS: 2, URI: 3 },
} as const;

/** Returns the config source `{ ads: {}, resource_api_version: V3 }`: fetch the resource over ADS. */
export function adsConfigSource(): ConfigSource {
  return { ads: {}, resource_api_version: Enum.ApiVersion.V3 };
}

/** Converts milliseconds to a google.protobuf.Duration, without zero fields (0 → `{}`, i.e. 0s). */
export function durationMs(ms: number): Duration {
  const whole = Math.max(0, Math.floor(ms));
  const seconds = Math.floor(whole / 1000);
  const nanos = (whole % 1000) * 1_000_000;
  const d: Duration = {};
  if (seconds) d.seconds = seconds;
  if (nanos) d.nanos = nanos;
  return d;
}

/** Escapes a literal for use inside an RE2 pattern. */
export function escapeRegex(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Returns `fn` memoized by model node identity (WeakMap), for pure per-node translations.
 *
 * The model is immutable plain data (src/model/fleet.ts), so an unchanged node that the builder
 * reuses across rebuilds translates once; callers must not mutate what a memoized function returns.
 * `variant` distinguishes inputs outside the node (e.g. the owning listener's stat prefix).
 */
export function memoByNode<K extends object, V>(
  fn: (node: K, variant: string) => V,
): (node: K, variant?: string) => V {
  // The default variant's value is kept in the WeakMap itself; a node translated under other
  // variants too gets a Map of them. Most nodes only ever have the default, and a Map per node
  // cost ~180 bytes for tens of thousands of nodes (bench/README.md, "Steady RSS, session 18").
  const byDefault = new WeakMap<K, V>();
  const byOther = new WeakMap<K, Map<string, V>>();
  return (node: K, variant = ''): V => {
    if (variant === '') {
      let value = byDefault.get(node);
      if (value === undefined) {
        value = fn(node, variant);
        byDefault.set(node, value);
      }
      return value;
    }
    let byVariant = byOther.get(node);
    if (!byVariant) {
      byVariant = new Map();
      byOther.set(node, byVariant);
    }
    let value = byVariant.get(variant);
    if (value === undefined) {
      value = fn(node, variant);
      byVariant.set(variant, value);
    }
    return value;
  };
}
