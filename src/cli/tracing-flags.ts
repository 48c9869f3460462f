/**
 * `convoy serve --tracing`: OpenTelemetry tracing for unmanaged fleets (docs/operations.md §20).
 * Each value is `[NAMESPACE/NAME=]off|HOST:PORT`: HOST:PORT an OTLP/gRPC collector the Envoys reach;
 * with `NAMESPACE/NAME=` it applies to that Gateway's fleet only. Off by default.
 */
import type { TracingOptions } from '../envoy/translate/tracing';
import { parseHostPort } from '../util/host-port';

export interface TracingSettings {
  default?: TracingOptions;
  /** Per Gateway `namespace/name`; undefined: tracing off for that fleet. */
  gateways: Map<string, TracingOptions | undefined>;
}

const GATEWAY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;

/** Parses the --tracing values; throws an Error naming the bad value. */
export function parseTracingFlags(values: readonly string[]): TracingSettings {
  const settings: TracingSettings = { gateways: new Map() };
  for (const value of values) {
    const eq = value.indexOf('=');
    const gateway = eq >= 0 ? value.slice(0, eq) : undefined;
    const rest = eq >= 0 ? value.slice(eq + 1) : value;
    if (gateway !== undefined && !GATEWAY.test(gateway)) {
      throw new Error(`--tracing ${value}: ${gateway} is not a Gateway NAMESPACE/NAME`);
    }
    let options: TracingOptions | undefined;
    if (rest !== 'off') {
      try {
        const { host, port } = parseHostPort(rest, 'tracing');
        if (port === 0) throw new Error('port 0');
        options = { collector: { host, port } };
      } catch {
        throw new Error(`--tracing ${value}: expected off or a collector HOST:PORT`);
      }
    }
    if (gateway === undefined) settings.default = options;
    else settings.gateways.set(gateway, options);
  }
  return settings;
}

/** The tracing options of each fleet, as translation asks for them (TranslateOptions.tracing). */
export function tracingForFleet(settings: TracingSettings): (fleet: string) => TracingOptions | undefined {
  return (fleet) => (settings.gateways.has(fleet) ? settings.gateways.get(fleet) : settings.default);
}
