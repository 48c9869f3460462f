/**
 * Envoy access logs on every HTTP connection manager and TCP proxy (docs/operations.md §20): JSON
 * lines on Envoy's stdout by default, each naming the Gateway API listener that served the request
 * (the filter chain name, `Gateway/ns/name/listener` or `ListenerSet/ns/name/listener` on TLS ports,
 * the Envoy listener `http-<port>` on plain HTTP ports), the route (`HTTPRoute/ns/name/rule/i/match/j`),
 * the upstream cluster and host, and Envoy's response flags.
 *
 * The path is logged without its query string, which may carry credentials. Formats are fixed
 * constants and every AccessLog object is built once per option value, so translation stays
 * byte-stable.
 */
import type { AccessLog } from '../../generated/envoy/config/accesslog/v3/AccessLog';
import type { SubstitutionFormatString } from '../../generated/envoy/config/core/v3/SubstitutionFormatString';
import type { FileAccessLog } from '../../generated/envoy/extensions/access_loggers/file/v3/FileAccessLog';
import type { StdoutAccessLog } from '../../generated/envoy/extensions/access_loggers/stream/v3/StdoutAccessLog';
import type { Struct } from '../../generated/google/protobuf/Struct';
import { ExtensionNames, ExtensionTypeUrl, typed } from './common';

export type AccessLogFormat = 'json' | 'text' | 'off';

/** How a fleet's Envoys log requests: the format, and a file instead of stdout. */
export interface AccessLogOptions {
  format: AccessLogFormat;
  /** A file on the Envoy's host; absent: Envoy's stdout. */
  path?: string;
}

export const DEFAULT_ACCESS_LOG: AccessLogOptions = { format: 'json' };

/** Fields shared by HTTP and TCP lines (the order is the JSON keys' order). */
const COMMON_FIELDS: [string, string][] = [
  ['time', '%START_TIME%'],
  ['listener', '%FILTER_CHAIN_NAME%'],
  ['upstream_cluster', '%UPSTREAM_CLUSTER%'],
  ['upstream_host', '%UPSTREAM_HOST%'],
  ['response_flags', '%RESPONSE_FLAGS%'],
  ['duration_ms', '%DURATION%'],
  ['bytes_sent', '%BYTES_SENT%'],
  ['downstream', '%DOWNSTREAM_REMOTE_ADDRESS%'],
];

const HTTP_FIELDS: [string, string][] = [
  ...COMMON_FIELDS.slice(0, 2),
  ['route', '%ROUTE_NAME%'],
  ['method', '%REQ(:METHOD)%'],
  ['authority', '%REQ(:AUTHORITY)%'],
  ['path', '%PATH(NQ)%'],
  ['status', '%RESPONSE_CODE%'],
  ...COMMON_FIELDS.slice(2),
  ['request_id', '%REQ(X-REQUEST-ID)%'],
];

const TCP_FIELDS: [string, string][] = [
  ...COMMON_FIELDS.slice(0, 2),
  ['sni', '%REQUESTED_SERVER_NAME%'],
  ...COMMON_FIELDS.slice(2),
];

function jsonFormat(fields: [string, string][]): SubstitutionFormatString {
  const struct: Struct = { fields: {} };
  for (const [key, value] of fields) struct.fields![key] = { stringValue: value };
  return { json_format: struct };
}

function textFormat(fields: [string, string][]): SubstitutionFormatString {
  return { text_format: fields.map(([k, v]) => `${k}=${v}`).join(' ') + '\n' };
}

function accessLog(options: AccessLogOptions, fields: [string, string][]): AccessLog[] {
  if (options.format === 'off') return [];
  const log_format = options.format === 'json' ? jsonFormat(fields) : textFormat(fields);
  if (options.path !== undefined) {
    return [
      {
        name: ExtensionNames.FileAccessLog,
        typed_config: typed<FileAccessLog>(ExtensionTypeUrl.FileAccessLog, {
          path: options.path,
          log_format,
        }),
      },
    ];
  }
  return [
    {
      name: ExtensionNames.StdoutAccessLog,
      typed_config: typed<StdoutAccessLog>(ExtensionTypeUrl.StdoutAccessLog, { log_format }),
    },
  ];
}

/** A key that tells option values apart (memo variants). */
export function accessLogKey(options: AccessLogOptions): string {
  return options.path === undefined ? options.format : `${options.format}:${options.path}`;
}

const cache = new Map<string, { http: AccessLog[]; tcp: AccessLog[] }>();

/** The access logs of an HTTP connection manager and of a TCP proxy for `options` (shared, never mutated). */
export function accessLogs(options: AccessLogOptions): { http: AccessLog[]; tcp: AccessLog[] } {
  const key = accessLogKey(options);
  let logs = cache.get(key);
  if (!logs) {
    logs = { http: accessLog(options, HTTP_FIELDS), tcp: accessLog(options, TCP_FIELDS) };
    // Option values come from flags: a handful in a process' life.
    if (cache.size < 1000) cache.set(key, logs);
  }
  return logs;
}

/** Parses `off|json|text`; undefined for anything else. */
export function parseAccessLogFormat(value: string): AccessLogFormat | undefined {
  return value === 'off' || value === 'json' || value === 'text' ? value : undefined;
}
