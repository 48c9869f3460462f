/**
 * OpenTelemetry tracing for a fleet's HTTP connection managers (docs/operations.md §20): spans go
 * over OTLP/gRPC to a collector at a fixed `host:port`, reached through one extra cluster (STATIC
 * for an IP address, STRICT_DNS for a name) named `convoy-otel-collector` (no Service cluster can take that name: theirs are
 * `namespace/service/port`). Off unless configured. Every object is built once per option value, so
 * translation stays byte-stable.
 */
import type { Cluster } from '../../generated/envoy/config/cluster/v3/Cluster';
import type { OpenTelemetryConfig } from '../../generated/envoy/config/trace/v3/OpenTelemetryConfig';
import type { HttpConnectionManager } from '../../generated/envoy/extensions/filters/network/http_connection_manager/v3/HttpConnectionManager';
import type { HttpProtocolOptions } from '../../generated/envoy/extensions/upstreams/http/v3/HttpProtocolOptions';
import * as net from 'node:net';
import { Enum, ExtensionNames, ExtensionTypeUrl, typed } from './common';

/** Where a fleet's Envoys send spans: an OTLP/gRPC collector, and the share of requests traced. */
export interface TracingOptions {
  collector: { host: string; port: number };
  /** Percentage of requests traced (0–100); 100 when absent. */
  samplingPercent?: number;
}

export const OTEL_COLLECTOR_CLUSTER = 'convoy-otel-collector';
const OPEN_TELEMETRY_TRACER = 'envoy.tracers.opentelemetry';
const OPEN_TELEMETRY_CONFIG = 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig';

type HcmTracing = NonNullable<HttpConnectionManager['tracing']>;

const cache = new Map<string, { hcm: HcmTracing; cluster: Cluster }>();

function build(options: TracingOptions, serviceName: string): { hcm: HcmTracing; cluster: Cluster } {
  const hcm: HcmTracing = {
    provider: {
      name: OPEN_TELEMETRY_TRACER,
      typed_config: typed<OpenTelemetryConfig>(OPEN_TELEMETRY_CONFIG, {
        grpc_service: { envoy_grpc: { cluster_name: OTEL_COLLECTOR_CLUSTER } },
        service_name: serviceName,
      }),
    },
  };
  if (options.samplingPercent !== undefined) hcm.random_sampling = { value: options.samplingPercent };
  // An IP address needs no resolver: STATIC keeps a host without DNS configuration able to export.
  const isIp = net.isIP(options.collector.host) !== 0;
  const cluster: Cluster = {
    name: OTEL_COLLECTOR_CLUSTER,
    type: isIp ? Enum.DiscoveryType.STATIC : Enum.DiscoveryType.STRICT_DNS,
    ...(isIp ? {} : { dns_lookup_family: Enum.DnsLookupFamily.V4_PREFERRED }),
    connect_timeout: { seconds: 5 },
    load_assignment: {
      cluster_name: OTEL_COLLECTOR_CLUSTER,
      endpoints: [
        {
          lb_endpoints: [
            {
              endpoint: {
                address: {
                  socket_address: { address: options.collector.host, port_value: options.collector.port },
                },
              },
            },
          ],
        },
      ],
    },
    // OTLP/gRPC needs HTTP/2.
    typed_extension_protocol_options: {
      [ExtensionNames.HttpProtocolOptions]: typed<HttpProtocolOptions>(ExtensionTypeUrl.HttpProtocolOptions, {
        explicit_http_config: { http2_protocol_options: {} },
      }),
    },
  };
  return { hcm, cluster };
}

/** The HCM tracing block and the collector cluster for `options` (shared, never mutated). */
export function tracing(options: TracingOptions, serviceName: string): { hcm: HcmTracing; cluster: Cluster } {
  const key = JSON.stringify([
    options.collector.host,
    options.collector.port,
    options.samplingPercent,
    serviceName,
  ]);
  let out = cache.get(key);
  if (!out) {
    out = build(options, serviceName);
    if (cache.size < 1000) cache.set(key, out);
  }
  return out;
}
