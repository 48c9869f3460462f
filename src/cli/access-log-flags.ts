/**
 * `convoy serve --access-log`: how the Envoys of unmanaged fleets log requests
 * (docs/operations.md §20). Each value is `[NAMESPACE/NAME=]FORMAT[:PATH]`: FORMAT is off, json or
 * text; PATH a file on the Envoy's host instead of its stdout; with `NAMESPACE/NAME=` it applies to
 * that Gateway's fleet only. The last value without a Gateway is the default for every other fleet
 * (JSON to stdout when none is given).
 */
import { DEFAULT_ACCESS_LOG, parseAccessLogFormat } from '../envoy/translate/access-log';
import type { AccessLogOptions } from '../envoy/translate/access-log';
import { isAbsoluteFilePath } from '../util/file-path';

export interface AccessLogSettings {
  default: AccessLogOptions;
  /** Per Gateway `namespace/name`. */
  gateways: Map<string, AccessLogOptions>;
}

const GATEWAY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;

/** Parses the --access-log values; throws an Error naming the bad value. */
export function parseAccessLogFlags(values: readonly string[]): AccessLogSettings {
  const settings: AccessLogSettings = { default: DEFAULT_ACCESS_LOG, gateways: new Map() };
  for (const value of values) {
    const eq = value.indexOf('=');
    const gateway = eq >= 0 ? value.slice(0, eq) : undefined;
    const rest = eq >= 0 ? value.slice(eq + 1) : value;
    if (gateway !== undefined && !GATEWAY.test(gateway)) {
      throw new Error(`--access-log ${value}: ${gateway} is not a Gateway NAMESPACE/NAME`);
    }
    const colon = rest.indexOf(':');
    const formatText = colon >= 0 ? rest.slice(0, colon) : rest;
    const format = parseAccessLogFormat(formatText);
    if (!format)
      throw new Error(`--access-log ${value}: the format must be off, json or text, got ${formatText}`);
    const options: AccessLogOptions = { format };
    if (colon >= 0) {
      const path = rest.slice(colon + 1);
      if (format === 'off') throw new Error(`--access-log ${value}: off takes no file`);
      // Envoy opens it: an absolute path without control characters, nothing relative to its cwd.
      if (!isAbsoluteFilePath(path)) {
        throw new Error(`--access-log ${value}: the file must be an absolute path`);
      }
      options.path = path;
    }
    if (gateway === undefined) settings.default = options;
    else settings.gateways.set(gateway, options);
  }
  return settings;
}

/** The access log options of each fleet, as translation asks for them (TranslateOptions.accessLog). */
export function accessLogForFleet(settings: AccessLogSettings): (fleet: string) => AccessLogOptions {
  return (fleet) => settings.gateways.get(fleet) ?? settings.default;
}
