import { parseHostPort } from '../util/host-port';
import { DEFAULT_LOG_BUFFER_BYTES, LogDestination } from '../observability/log-destination';
import { createLogger } from '../observability/logger';
import { ConvoyMetrics } from '../observability/metrics';
import { isLoopbackHost } from '../util/address-class';
import { parseAccessLogFlags, type AccessLogSettings } from './access-log-flags';
import { parseTracingFlags, type TracingSettings } from './tracing-flags';
import { UsageError, defineCommand, parseCommand } from './args';
import type { ParsedOptions } from './args';
import { LOCAL_ENVOY_OPTIONS, localEnvoysFromFlags } from './local-envoys';
import { startServing, waitForShutdownSignal } from './serve-runtime';
import { convoyVersion } from './main';
import { DEFAULT_MAX_RANGE_PORTS } from '../gateway/port-ranges';
import {
  DEFAULT_MAX_STREAMS,
  DEFAULT_MAX_STREAMS_PER_PEER,
  DEFAULT_UNKNOWN_FLEET_TIMEOUT,
} from './xds-security';
import type { ServeOptions } from './serve-runtime';
import { parsePortPool } from '../gateway/dynamic-ports';
import { DEFAULT_LAYOUT_THRESHOLD } from '../envoy/translate/layout-choice';

/**
 * `convoy serve`: its flags (one declarative table, which also renders --help), the checks that
 * turn them into ServeOptions, and the command itself; serve-runtime.ts opens and closes the parts.
 */

export const DEFAULT_CONTROLLER_NAME = 'convoy.dev/gateway-controller';
export const DEFAULT_FLEET_ENVOY_IMAGE = 'envoyproxy/envoy:v1.40-latest';
export const DEFAULT_FLEET_CONVOY_IMAGE = 'convoy:dev';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** How long exiting waits for buffered log lines to be written (never forever: see LogDestination). */
const LOG_FLUSH_TIMEOUT_MS = 2_000;

export const serveSpec = defineCommand({
  name: 'serve',
  summary: 'run the control plane (Gateway API objects from a directory or Kubernetes → xDS)',
  options: {
    // Where the objects come from.
    'from-dir': {
      type: 'string',
      valueName: 'DIR',
      description: 'Read objects from YAML/JSON files under DIR (watched). Without it: Kubernetes mode.',
    },
    'from-dir-max-file-size': {
      type: 'string',
      valueName: 'BYTES',
      description: 'Larger files are reported, not read (suffixes Ki, Mi, Gi).',
      default: '4Mi',
    },
    'from-dir-max-files': {
      type: 'string',
      valueName: 'N',
      description: 'Read at most N files and directories under --from-dir.',
      default: '10000',
    },
    'from-dir-max-depth': {
      type: 'string',
      valueName: 'N',
      description: 'Read at most N directory levels below --from-dir.',
      default: '16',
    },
    'from-dir-settle-ms': {
      type: 'string',
      valueName: 'MS',
      description:
        'Read a changed file once it has been left alone this long (0 reads at once). Write files atomically: write elsewhere, then rename.',
      default: '500',
    },
    'from-dir-cache-dir': {
      type: 'string',
      valueName: 'DIR',
      description:
        "Keep each file's parsed and validated objects in DIR between runs (keyed by content hash and Convoy build), so a restart reads only what changed. Holds Secrets' keys as the files do. Default: off.",
    },
    kubeconfig: {
      type: 'string',
      valueName: 'FILE',
      description: 'Kubernetes mode with this kubeconfig. Default: KUBECONFIG, ~/.kube/config or in-cluster.',
    },
    'controller-name': {
      type: 'string',
      valueName: 'NAME',
      description: 'GatewayClass controllerName Convoy owns.',
      default: DEFAULT_CONTROLLER_NAME,
    },
    // xDS.
    'xds-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description: 'ADS gRPC listen address.',
      default: '127.0.0.1:18000',
    },
    'xds-certs-dir': {
      type: 'string',
      valueName: 'DIR',
      description:
        "Convoy's xDS CA and certificates, created if missing; the serving certificate and every DIR/gateways/NS/NAME client certificate are renewed while serving (convoy certgen makes the same layout). Default: $XDG_STATE_HOME/convoy/xds-pki.",
    },
    'xds-server-name': {
      type: 'string',
      valueName: 'NAME',
      multiple: true,
      description:
        'Extra DNS name or IP for the serving certificate (localhost, 127.0.0.1 and ::1 are always in it).',
    },
    'xds-tls-cert': {
      type: 'string',
      valueName: 'FILE',
      description:
        'Serve xDS with this certificate (PEM) instead of --xds-certs-dir; reloaded when it changes.',
    },
    'xds-tls-key': { type: 'string', valueName: 'FILE', description: 'Private key (PEM) of --xds-tls-cert.' },
    'xds-tls-ca': {
      type: 'string',
      valueName: 'FILE',
      description:
        'Require Envoy client certificates signed by this CA bundle (PEM); needed with --xds-tls-cert.',
    },
    'insecure-plaintext-xds': {
      type: 'boolean',
      description:
        "Serve xDS WITHOUT TLS: any process that reaches the xDS address can read every Gateway's TLS private keys.",
    },
    'xds-max-streams': {
      type: 'string',
      valueName: 'N',
      description: 'Most open ADS streams.',
      default: String(DEFAULT_MAX_STREAMS),
    },
    'xds-max-streams-per-peer': {
      type: 'string',
      valueName: 'N',
      description: 'Most open ADS streams per client IP address.',
      default: String(DEFAULT_MAX_STREAMS_PER_PEER),
    },
    'xds-unknown-fleet-timeout': {
      type: 'string',
      valueName: 'DURATION',
      description: 'Close a stream whose Gateway does not exist after this long (e.g. 60s, 5m).',
      default: DEFAULT_UNKNOWN_FLEET_TIMEOUT,
    },
    // Admin.
    'admin-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description:
        'Admin HTTP address: /healthz /readyz /metrics /status /debug/xds. Off loopback it needs --admin-token-file (or --allow-unauthenticated-admin).',
      default: '127.0.0.1:9090',
    },
    'admin-token-file': {
      type: 'string',
      valueName: 'FILE',
      description:
        'Require "Authorization: Bearer <token>" on every admin endpoint but /healthz and /readyz; the token is the content of FILE (at least 16 characters), read again when FILE changes.',
    },
    'allow-unauthenticated-admin': {
      type: 'boolean',
      description:
        'Allow a non-loopback --admin-address without --admin-token-file: anyone who reaches it reads status, configuration and metrics.',
    },
    'health-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description:
        'Also serve /healthz and /readyz, and nothing else, here (e.g. 0.0.0.0:9091 for kubelet probes while admin stays on loopback).',
    },
    // Managed local Envoys (file mode).
    ...LOCAL_ENVOY_OPTIONS,
    // What Convoy tells Envoy and reports on Gateways.
    'envoy-bind-address': {
      type: 'string',
      valueName: 'ADDR',
      description:
        "Address Envoy listeners bind to (file mode: a Gateway's EnvoyFleet local.bindAddress wins).",
      default: '0.0.0.0',
    },
    'access-log': {
      type: 'string',
      valueName: '[NS/NAME=]FORMAT[:PATH]',
      multiple: true,
      description:
        "Envoy access logs: FORMAT off, json (default) or text; PATH an absolute file on the Envoy's host instead of stdout; NS/NAME= for one Gateway's fleet only.",
    },
    'listener-layout': {
      type: 'string',
      valueName: 'LAYOUT',
      choices: ['chains', 'sni-dispatch', 'auto'],
      description:
        'How a TLS port lays out its hostnames (docs/xds.md §16): chains (one filter chain each in the port listener), sni-dispatch (an internal listener and a cluster each; a hostname change costs a delta xDS Envoy ~4 KiB; needs a bootstrap from this version) or auto (sni-dispatch for ports with at least --listener-layout-threshold TLS listeners, chains below).',
      default: 'chains',
    },
    'listener-layout-threshold': {
      type: 'string',
      valueName: 'N',
      description: `With --listener-layout auto: the number of TLS listeners from which a port is dispatched by SNI (default ${DEFAULT_LAYOUT_THRESHOLD}; docs/xds.md §16).`,
    },
    tracing: {
      type: 'string',
      valueName: '[NS/NAME=]off|HOST:PORT',
      multiple: true,
      description:
        "OpenTelemetry tracing: the OTLP/gRPC collector HOST:PORT Envoys send spans to (off by default); NS/NAME= for one Gateway's fleet only.",
    },
    'gateway-address': {
      type: 'string',
      valueName: 'ADDR',
      multiple: true,
      description: "Report ADDR (IP or hostname) in Gateways' status.addresses.",
    },
    'envoy-service': {
      type: 'string',
      valueName: 'NAMESPACE/NAME',
      description:
        "Report the load-balancer addresses of this Service (the one in front of the Envoy fleet) in status.addresses; {namespace} and {name} stand for the Gateway's, for a Service per Gateway (e.g. {namespace}/envoy-{name}).",
    },
    'max-port-range-ports': {
      type: 'string',
      valueName: 'N',
      description:
        'The most ports a ListenerPortRange may span, both ends included (docs/gateway-api.md §30); a larger range is refused with reason Invalid.',
      default: String(DEFAULT_MAX_RANGE_PORTS),
    },
    // Which backends may be reached (docs/security.md §7).
    'enable-external-name-services': {
      type: 'boolean',
      description:
        'Allow routes to ExternalName Services (off by default: they can point Envoy at any host, e.g. its own admin).',
    },
    'allow-loopback-endpoints': {
      type: 'boolean',
      description:
        "Allow loopback (127.0.0.0/8, ::1) and unspecified (0.0.0.0, ::) endpoint addresses: backends on the Envoy's own host (file mode, demos). Convoy's admin, health and xDS ports and Envoy's default admin port stay refused.",
    },
    'allow-link-local-endpoints': {
      type: 'boolean',
      description:
        'Allow link-local endpoint addresses (169.254.0.0/16, fe80::/10), where cloud metadata services answer.',
    },
    // Kubernetes mode.
    'leader-election-namespace': {
      type: 'string',
      valueName: 'NS',
      description: 'Lease namespace (Kubernetes mode). Default: POD_NAMESPACE, else convoy-system.',
    },
    'leader-election-name': {
      type: 'string',
      valueName: 'NAME',
      description: 'Lease name.',
      default: 'convoy-leader',
    },
    'status-qps': {
      type: 'string',
      valueName: 'N',
      description:
        "A client-side limit on status writes per second (Kubernetes mode). Default: none; the API server's priority and fairness paces them.",
    },
    // Managed fleets (docs/architecture.md §13).
    // The legacy XListenerSet and its dynamic ports (docs/gateway-api.md §29).
    'enable-xlistenerset': {
      type: 'boolean',
      description:
        'Read the legacy XListenerSet (gateway.networking.x-k8s.io/v1alpha1) like ListenerSet; Kubernetes mode watches it only then.',
    },
    'dynamic-port-range': {
      type: 'string',
      valueName: 'FIRST-LAST',
      description:
        'Give XListenerSet listeners without a port one from this range (off by default: they are refused with UnsupportedPort).',
    },
    'managed-fleets': {
      type: 'boolean',
      description:
        'Kubernetes mode: provision the Envoys of every Gateway whose class or infrastructure names EnvoyFleet parameters (the leader applies them).',
    },
    'fleet-xds-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description:
        'What managed Envoys dial to reach Convoy. Default: convoy-xds.NAMESPACE.svc:PORT (the Lease namespace, the --xds-address port).',
    },
    'fleet-envoy-image': {
      type: 'string',
      valueName: 'IMAGE',
      description: 'Envoy image of managed fleets unless their parameters name one.',
      default: DEFAULT_FLEET_ENVOY_IMAGE,
    },
    'fleet-convoy-image': {
      type: 'string',
      valueName: 'IMAGE',
      description: "Image of managed fleets' shutdown-manager sidecar (runs convoy envoy-shutdown-manager).",
      default: DEFAULT_FLEET_CONVOY_IMAGE,
    },
    'fleet-ca-secret': {
      type: 'string',
      valueName: 'NAME',
      description:
        "Secret in the Lease namespace holding the xDS CA all replicas share (created if missing); managed fleets' client certificates come from it.",
      default: 'convoy-xds-ca',
    },
    'build-thread': {
      type: 'string',
      valueName: 'THREAD',
      choices: ['main', 'worker'] as const,
      description:
        'Where builds, translation and encoding run: main (this thread) or worker (a worker thread, so a full build never delays xDS streams; docs/architecture.md §14).',
      default: 'main',
    },
    'log-level': {
      type: 'string',
      valueName: 'LEVEL',
      choices: LOG_LEVELS,
      description: 'Log level. Default: CONVOY_LOG_LEVEL, else info.',
    },
    'log-buffer-bytes': {
      type: 'string',
      valueName: 'BYTES',
      description:
        'Log output held while stdout cannot take it (a full pipe or disk); beyond it lines are dropped and counted in convoy_log_lines_dropped_total.',
      default: String(DEFAULT_LOG_BUFFER_BYTES),
    },
  },
  details: `Any startup failure (a port in use, an unreadable directory or file, a bad kubeconfig) exits with
status 1 after closing what was opened; a bad flag exits with status 2.

In file mode Convoy starts one Envoy per Gateway and supervises it (restarts with backoff, drains
it when its Gateway goes and on SIGTERM) when it finds an Envoy binary; --no-managed-envoy turns
that off.

Examples:
  convoy serve --from-dir examples --allow-loopback-endpoints --envoy-bind-address 127.0.0.1
  convoy serve --kubeconfig ~/.kube/config --gateway-address 203.0.113.10
  convoy serve --admin-address 0.0.0.0:9090 --admin-token-file /var/run/secrets/convoy/admin-token`,
});

export type ServeFlags = ParsedOptions<typeof serveSpec.options>;

/**
 * Turns parsed flags into ServeOptions, refusing contradictions and unsafe combinations with a
 * UsageError (exit 2) before anything is opened; exported for tests.
 */
export function serveOptionsFromFlags(v: ServeFlags): ServeOptions {
  if (v['from-dir'] !== undefined && v.kubeconfig !== undefined) {
    throw new UsageError('--from-dir and --kubeconfig exclude each other', 'serve');
  }
  const xdsAddress = checkedAddress(v['xds-address'], 'xds-address');
  const adminAddress = checkedAddress(v['admin-address'], 'admin-address');
  const healthAddress = v['health-address'] && checkedAddress(v['health-address'], 'health-address');
  const localEnvoys = localEnvoysFromFlags(v);
  const adminHost = parseHostPort(adminAddress).host;
  if (!isLoopbackHost(adminHost) && !v['admin-token-file'] && !v['allow-unauthenticated-admin']) {
    throw new UsageError(
      `--admin-address ${adminAddress} is not a loopback address: protect it with --admin-token-file FILE, or accept anyone who reaches it with --allow-unauthenticated-admin`,
      'serve',
    );
  }
  const leaseNamespace = v['leader-election-namespace'] ?? process.env.POD_NAMESPACE ?? 'convoy-system';
  const fleets = v['managed-fleets']
    ? {
        xdsAddress: checkedAddress(
          v['fleet-xds-address'] ?? `convoy-xds.${leaseNamespace}.svc:${parseHostPort(xdsAddress).port}`,
          'fleet-xds-address',
        ),
        envoyImage: v['fleet-envoy-image'],
        convoyImage: v['fleet-convoy-image'],
        caSecret: v['fleet-ca-secret'],
      }
    : undefined;
  if (fleets && v['xds-tls-cert'] !== undefined) {
    throw new UsageError(
      "--managed-fleets issues the fleets' client certificates from Convoy's CA: use --xds-certs-dir (the default), not --xds-tls-*",
      'serve',
    );
  }
  if (fleets && v['from-dir'] !== undefined) {
    throw new UsageError('--managed-fleets provisions Kubernetes objects: it needs Kubernetes mode', 'serve');
  }
  return {
    source:
      v['from-dir'] !== undefined
        ? {
            dir: v['from-dir'],
            limits: {
              maxFileBytes: checkedBytes(v['from-dir-max-file-size'], 'from-dir-max-file-size'),
              maxEntries: checkedCount(v['from-dir-max-files'], 'from-dir-max-files'),
              maxDepth: checkedCount(v['from-dir-max-depth'], 'from-dir-max-depth'),
              settleMs: checkedCount(v['from-dir-settle-ms'], 'from-dir-settle-ms', 0),
              ...(v['from-dir-cache-dir'] !== undefined
                ? { cache: { dir: v['from-dir-cache-dir'], convoyVersion: convoyVersion() } }
                : {}),
            },
          }
        : { kubeconfig: v.kubeconfig },
    controllerName: v['controller-name'],
    xdsAddress,
    xdsSecurity: {
      'insecure-plaintext-xds': v['insecure-plaintext-xds'],
      'xds-server-name': v['xds-server-name'],
      'xds-max-streams': v['xds-max-streams'],
      'xds-max-streams-per-peer': v['xds-max-streams-per-peer'],
      'xds-unknown-fleet-timeout': v['xds-unknown-fleet-timeout'],
      ...(v['xds-certs-dir'] !== undefined ? { 'xds-certs-dir': v['xds-certs-dir'] } : {}),
      ...(v['xds-tls-cert'] !== undefined ? { 'xds-tls-cert': v['xds-tls-cert'] } : {}),
      ...(v['xds-tls-key'] !== undefined ? { 'xds-tls-key': v['xds-tls-key'] } : {}),
      ...(v['xds-tls-ca'] !== undefined ? { 'xds-tls-ca': v['xds-tls-ca'] } : {}),
    },
    adminAddress,
    ...(v['admin-token-file'] ? { adminTokenFile: v['admin-token-file'] } : {}),
    ...(healthAddress ? { healthAddress } : {}),
    envoyBindAddress: v['envoy-bind-address'],
    accessLog: checkedAccessLog(v['access-log']),
    ...(v.tracing?.length ? { tracing: checkedTracing(v.tracing) } : {}),
    ...listenerLayoutOptions(v['listener-layout'], v['listener-layout-threshold']),
    // Managed Envoys listen on the bind address: Gateways report it unless told otherwise.
    gatewayAddresses:
      addressSource(v['gateway-address'], v['envoy-service']) ??
      (localEnvoys ? { static: [v['envoy-bind-address']] } : undefined),
    ...(localEnvoys ? { localEnvoys } : {}),
    externalNameServices: v['enable-external-name-services'],
    maxPortRangePorts: checkedPortRangeBound(v['max-port-range-ports']),
    ...legacyListenerSetOptions(v['enable-xlistenerset'], v['dynamic-port-range']),
    endpoints: {
      allowLoopback: v['allow-loopback-endpoints'],
      allowLinkLocal: v['allow-link-local-endpoints'],
    },
    leaseNamespace,
    ...(fleets ? { fleets } : {}),
    leaseName: v['leader-election-name'],
    ...(v['status-qps'] ? { statusQps: checkedCount(v['status-qps'], 'status-qps') } : {}),
    ...(v['log-level'] ? { logLevel: v['log-level'] } : {}),
    buildThread: v['build-thread'] === 'worker' ? 'worker' : 'main',
    logBufferBytes: checkedCount(v['log-buffer-bytes'], 'log-buffer-bytes', MIN_LOG_BUFFER_BYTES),
  };
}

/** Returns the XListenerSet options of ServeOptions; a range without the kind enabled is a usage error. */
function legacyListenerSetOptions(
  enabled: boolean | undefined,
  range: string | undefined,
): Pick<ServeOptions, 'xListenerSets' | 'dynamicPorts'> {
  if (range === undefined) return enabled ? { xListenerSets: true } : {};
  if (!enabled)
    throw new UsageError('--dynamic-port-range applies to XListenerSets: add --enable-xlistenerset', 'serve');
  try {
    return { xListenerSets: true, dynamicPorts: parsePortPool(range) };
  } catch (err) {
    throw new UsageError(`--dynamic-port-range: ${(err as Error).message}`, 'serve');
  }
}

/** Returns the --listener-layout settings; a threshold without `auto` is a UsageError. */
function listenerLayoutOptions(
  layout: string,
  threshold: string | undefined,
): Pick<ServeOptions, 'listenerLayout' | 'listenerLayoutThreshold'> {
  if (threshold !== undefined && layout !== 'auto') {
    throw new UsageError('--listener-layout-threshold applies to --listener-layout auto', 'serve');
  }
  if (layout !== 'sni-dispatch' && layout !== 'auto') return {};
  return {
    listenerLayout: layout,
    ...(threshold !== undefined
      ? { listenerLayoutThreshold: checkedCount(threshold, 'listener-layout-threshold') }
      : {}),
  };
}

/** Parses the --access-log values (access-log-flags.ts), turning a bad one into a UsageError. */
function checkedAccessLog(values: readonly string[] | undefined): AccessLogSettings {
  try {
    return parseAccessLogFlags(values ?? []);
  } catch (err) {
    throw new UsageError((err as Error).message, 'serve');
  }
}

/** Parses the --tracing values (tracing-flags.ts), turning a bad one into a UsageError. */
function checkedTracing(values: readonly string[]): TracingSettings {
  try {
    return parseTracingFlags(values);
  } catch (err) {
    throw new UsageError((err as Error).message, 'serve');
  }
}

/** Smallest log buffer: one long line (a full build's debug line) must fit. */
const MIN_LOG_BUFFER_BYTES = 16 * 1024;

/** Parses a byte count: digits with an optional binary suffix (Ki, Mi, Gi), e.g. "4Mi". */
function checkedBytes(value: string, flag: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(value);
  if (!m)
    throw new UsageError(`--${flag} must be a byte count such as 4194304 or 4Mi, got ${value}`, 'serve');
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

/** Parses a whole number of at least `min`, else throws a UsageError. */
function checkedCount(value: string, flag: string, min = 1): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) {
    throw new UsageError(`--${flag} must be a whole number of at least ${min}, got ${value}`, 'serve');
  }
  return Number(value);
}

/** Returns the --max-port-range-ports bound: a whole number of ports from 2 (a range's least) to 65535. */
function checkedPortRangeBound(value: string): number {
  const n = checkedCount(value, 'max-port-range-ports', 2);
  if (n > 65535) throw new UsageError(`--max-port-range-ports must be at most 65535, got ${value}`, 'serve');
  return n;
}

/** Returns `value` when it is HOST:PORT with a port in 0..65535, else throws a UsageError. */
function checkedAddress(value: string, flag: string): string {
  try {
    parseHostPort(value, `--${flag}`);
  } catch (err) {
    throw new UsageError((err as Error).message, 'serve');
  }
  return value;
}

function addressSource(fixed: string[], service: string | undefined): ServeOptions['gatewayAddresses'] {
  if (fixed.length === 0 && !service) return undefined;
  let svc: { namespace: string; name: string } | undefined;
  if (service) {
    const [namespace, name, extra] = service.split('/');
    if (!namespace || !name || extra !== undefined)
      throw new UsageError(`--envoy-service must be NAMESPACE/NAME, got ${JSON.stringify(service)}`, 'serve');
    svc = { namespace, name };
  }
  return { ...(svc ? { service: svc } : {}), ...(fixed.length ? { static: fixed } : {}) };
}

/**
 * Runs `convoy serve` until SIGINT or SIGTERM. A startup failure rejects after everything
 * opened so far is closed, so the process exits instead of running half-alive.
 */
export async function serveCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(serveSpec, argv);
  if (!parsed) return;
  const options = serveOptionsFromFlags(parsed.values);
  const metrics = new ConvoyMetrics({ processMetrics: true });
  const logs = new LogDestination({
    maxBufferBytes: options.logBufferBytes,
    onDropped: (lines) => metrics.logLinesDropped.inc(lines),
    onWriteError: () => metrics.logWriteErrors.inc(),
  });
  const logger = createLogger({ level: options.logLevel, destination: logs });
  try {
    const running = await startServing(options, logger, metrics);
    const signal = await waitForShutdownSignal();
    logger.info({ signal }, 'shutting down');
    await running.stop();
  } finally {
    await logs.flush(LOG_FLUSH_TIMEOUT_MS);
    logs.close();
  }
}
