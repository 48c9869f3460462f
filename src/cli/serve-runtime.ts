import { format } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_ADMIN_ADDRESS as ENVOY_DEFAULT_ADMIN_ADDRESS } from '../envoy/bootstrap';
import { parseHostPort } from '../util/host-port';
import { renderXdsDebugText } from '../xds/sync-view';
import type { EndpointPolicy } from '../gateway/endpoint-guard';
import type { BuildOptions } from '../gateway/resolved';
import { AdminServer } from '../observability/admin-server';
import { AdminTokenFile } from '../observability/admin-token';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { FileProvider } from '../providers/files/provider';
import { startLocalEnvoys } from './local-envoys';
import { FleetModelSource } from '../fleets/local/model-source';
import type { LocalEnvoysOptions } from './local-envoys';
import { fleetPageEndpoints } from '../fleetpage/endpoints';
import { setUpXdsSecurity } from './xds-security';
import type { AccessLogSettings } from './access-log-flags';
import type { TracingSettings } from './tracing-flags';
import type { ListenerLayout } from '../envoy/translate/sni-dispatch';
import type { XdsSecurityFlags } from './xds-security';
import type { FileProviderOptions } from '../providers/files/provider';
import { tuneGarbageCollection } from '../runtime/gc-tuning';
import { startQuietCollector } from '../runtime/quiet-gc';
import { startSteadyGcTuning } from '../runtime/steady-gc';
import type { StatusSink } from '../status/types';
import { StatusView } from '../status/view';
import { ObjectStore } from '../store/store';
import { createBuilder, snapshotCache, type BuildThread } from './serve-builder';
import type { FleetModel } from '../model/fleet';
import type { CertificateDirectory } from '../pki/certificate-directory';
import type { FleetCertificateSource } from '../fleets/kubernetes/provisioner';
import type { RenderSettings } from '../fleets/kubernetes/render';
import { AdsServer } from '../xds/server';

/**
 * The running `convoy serve`: opens its parts in an order where everything that can fail on bad
 * input is checked first, and closes exactly what it opened, in reverse, when starting fails or
 * when it is told to stop.
 */

/** What `convoy serve` runs with, after its flags were checked (see serve.ts). */

/**
 * The controller's debounce in file mode: the file provider already gathers a burst of file
 * events (its own debounce, docs/architecture.md §10.1) and applies it to the store in one batch,
 * so a second 50 ms wait (the default, which gathers the separate requests of a kubectl apply in
 * Kubernetes mode) would only delay every change.
 */
const FILE_MODE_BUILD_DEBOUNCE_MS = 5;

export interface ServeOptions {
  source:
    | {
        dir: string;
        limits?: Pick<FileProviderOptions, 'maxFileBytes' | 'maxEntries' | 'maxDepth' | 'settleMs' | 'cache'>;
      }
    | { kubeconfig?: string };
  controllerName: string;
  xdsAddress: string;
  /** xDS mTLS (Convoy's CA by default), plaintext only by name, and stream limits (xds-security.ts). */
  xdsSecurity: XdsSecurityFlags;
  adminAddress: string;
  adminTokenFile?: string;
  healthAddress?: string;
  envoyBindAddress: string;
  /** Envoy access logs per fleet (access-log-flags.ts); JSON to stdout when absent. */
  accessLog?: AccessLogSettings;
  /** OpenTelemetry tracing per fleet (tracing-flags.ts); off when absent. */
  tracing?: TracingSettings;
  /** TLS ports' listener layout (docs/xds.md §16); `chains` when absent. */
  listenerLayout?: ListenerLayout;
  /** The `auto` layout's threshold in TLS listeners per port (translate/layout-choice.ts). */
  listenerLayoutThreshold?: number;
  gatewayAddresses?: BuildOptions['gatewayAddresses'];
  externalNameServices: boolean;
  /** The most ports a ListenerPortRange may span (docs/gateway-api.md §30). */
  maxPortRangePorts: number;
  /** Read legacy XListenerSets (docs/gateway-api.md §29). */
  xListenerSets?: boolean;
  /** The dynamic port pool of XListenerSet listeners without a port. */
  dynamicPorts?: { first: number; last: number };
  /** Convoy adds its own bound ports to protectedPorts. */
  endpoints: EndpointPolicy;
  leaseNamespace: string;
  leaseName: string;
  /** Kubernetes mode: a client-side limit on status writes per second (default none). */
  statusQps?: number;
  /** Kubernetes mode: provision managed fleets (docs/architecture.md §13). */
  fleets?: { xdsAddress: string; envoyImage: string; convoyImage: string; caSecret: string };
  logLevel?: string;
  /** Bound of the log destination's buffer (LogDestination.maxBufferBytes). */
  logBufferBytes: number;
  /** File mode: start and supervise one Envoy per Gateway (local-envoys.ts). */
  localEnvoys?: LocalEnvoysOptions;
  /** Where builds run (docs/architecture.md §14): this thread (default) or a worker thread. */
  buildThread?: BuildThread;
}

export interface RunningServe {
  /** Closes everything (controller, provider, admin and health servers, xDS with a grace period). */
  stop(): Promise<void>;
}

/** Close actions of what was opened, run in reverse order of opening. */
class OpenedParts {
  private readonly parts: { what: string; close: () => Promise<void> | void }[] = [];

  add(what: string, close: () => Promise<void> | void): void {
    this.parts.push({ what, close });
  }

  /** Closes every part, newest first; a part that fails to close is logged and the rest still close. */
  async closeAll(logger: Logger): Promise<void> {
    for (let part = this.parts.pop(); part; part = this.parts.pop()) {
      try {
        await part.close();
      } catch (err) {
        logger.warn({ err, part: part.what }, 'error while closing');
      }
    }
  }
}

/**
 * Starts serving: reads the TLS and token files, binds xDS, admin and health, starts the
 * provider and the controller. Rejects with one clear message after closing what it opened when
 * any step fails.
 */
export async function startServing(
  options: ServeOptions,
  logger: Logger,
  metrics: ConvoyMetrics,
): Promise<RunningServe> {
  const opened = new OpenedParts();
  try {
    return await open(options, logger, metrics, opened);
  } catch (err) {
    await opened.closeAll(logger);
    throw err;
  }
}

async function open(
  options: ServeOptions,
  logger: Logger,
  metrics: ConvoyMetrics,
  opened: OpenedParts,
): Promise<RunningServe> {
  // Files first: nothing is listening yet when one of them is missing or invalid.
  const token =
    options.adminTokenFile !== undefined
      ? await AdminTokenFile.load(options.adminTokenFile, (message) => logger.warn(message))
      : undefined;

  routeGrpcLogs(logger);
  // docs/architecture.md §10.5: V8's own heap growth until the first snapshot is served.
  const gcTuning = tuneGarbageCollection(process.env, {
    isReady: () => ready(),
    onApplied: () => logger.debug('V8 heap growing factor applied (first snapshot served)'),
  });
  opened.add('GC tuning', gcTuning.stop);
  logger.debug({ gcTuned: gcTuning.tuned, v8: process.versions.v8 }, 'V8 external-memory GC limit tuning');
  // docs/operations.md §11: one full collection once quiet, not the last burst's garbage kept;
  // opt-in, because that collection pauses the loop when the next change may arrive.
  if (process.env.CONVOY_QUIET_GC === 'on') {
    const stopQuietGc = startQuietCollector({
      onCollect: (ms, freed) =>
        logger.info(
          { ms: Math.round(ms), freedMiB: Math.round(freed / 1048576) },
          'quiet garbage collection',
        ),
    });
    opened.add('quiet garbage collection', stopQuietGc);
  }
  const store = new ObjectStore();
  // docs/operations.md §11: tighter GC limits while quiet, the usual ones while busy; opt-in,
  // because the collection it starts pauses the loop when the next change may arrive.
  if (process.env.CONVOY_STEADY_GC === 'on') {
    const quietFlags = process.env.CONVOY_QUIET_V8_FLAGS?.split(/\s+/).filter(Boolean);
    const stopSteadyGc = startSteadyGcTuning({
      // Not before the cold start's growing factor is set, which would undo a quiet one.
      isReady: () => ready() && gcTuning.applied(),
      ...(quietFlags?.length ? { quietFlags } : {}),
      onSwitch: (quiet) => logger.debug({ quiet }, 'steady GC limits'),
    });
    opened.add('steady GC limits', stopSteadyGc);
  }
  const cache = snapshotCache(options.buildThread ?? 'main', logger, metrics);
  const statusView = new StatusView();
  const sinks: StatusSink[] = [statusView];
  // Until the controller exists, Convoy is not ready.
  let ready: () => boolean = () => false;
  let providerProblems: () => unknown = () => [];

  // Ports next, before any watcher or API connection: a port in use fails fast.
  const fleets = 'dir' in options.source ? undefined : options.fleets;
  const kubeconfig = 'dir' in options.source ? undefined : options.source.kubeconfig;
  const xdsSecurity = await setUpXdsSecurity(fleetServerNames(options.xdsSecurity, fleets), {
    logger,
    xdsAddress: options.xdsAddress,
    ...(fleets
      ? {
          shareCa: async (certs) => {
            const k8s = await import('./kubernetes-mode');
            await k8s.shareXdsCa(kubeconfig, certs, options.leaseNamespace, fleets.caSecret, logger);
          },
        }
      : {}),
  });
  opened.add('xDS certificate renewal', () => xdsSecurity.stop());
  const ads = new AdsServer({
    cache,
    logger,
    metrics,
    tlsFiles: xdsSecurity.tlsFiles,
    limits: xdsSecurity.limits,
    unknownFleetTimeoutMs: xdsSecurity.unknownFleetTimeoutMs,
  });
  opened.add('xDS server', () => ads.stop(5000));
  metrics.xdsTypeStates = () => ads.typeStateCounts();
  const xdsPort = await listening('xDS server', options.xdsAddress, () => ads.listen(options.xdsAddress));

  const fleetPage = fleetPageEndpoints({ store, statuses: statusView, xds: ads, metrics, logger });
  opened.add('fleet page', () => fleetPage.stop());
  sinks.push(fleetPage.statusSink);
  const admin = new AdminServer({
    address: options.adminAddress,
    logger,
    metrics,
    isReady: () => ready(),
    token: token ? () => token.current() : undefined,
    routes: {
      '/status': () => statusView.list(),
      '/status/problems': () => providerProblems(),
      '/debug/xds': () => ads.debugState(),
      ...fleetPage.routes,
    },
    pages: fleetPage.pages,
    eventStreams: fleetPage.eventStreams,
    textRenderers: {
      '/debug/xds': (state) => renderXdsDebugText(state as Parameters<typeof renderXdsDebugText>[0]),
    },
  });
  opened.add('admin server', () => admin.stop());
  const adminPort = await listening('admin server', options.adminAddress, () => admin.listen());

  let healthPort: number | undefined;
  if (options.healthAddress !== undefined) {
    const health = new AdminServer({
      address: options.healthAddress,
      logger,
      metrics,
      endpoints: 'health',
      isReady: () => ready(),
    });
    opened.add('health server', () => health.stop());
    healthPort = await listening('health server', options.healthAddress, () => health.listen());
  }

  let onFleets: ((fleets: readonly FleetModel[], untouched: readonly string[]) => void) | undefined;
  // Local Envoys follow the published fleet models, and their parameters (docs/operations.md §14).
  const localSource = options.localEnvoys ? new FleetModelSource() : undefined;
  if (localSource) onFleets = (f) => localSource.update(f);
  if ('dir' in options.source) {
    const files = new FileProvider({
      dir: options.source.dir,
      store,
      logger,
      metrics,
      ...options.source.limits,
    });
    providerProblems = () => files.problems();
    opened.add('file provider', () => files.stop());
    await files.start();
  } else {
    // Loaded lazily so file mode never pays for the Kubernetes client.
    const k8s = await import('./kubernetes-mode');
    const started = await k8s.startKubernetesMode({
      kubeconfig: options.source.kubeconfig,
      store,
      logger,
      metrics,
      controllerName: options.controllerName,
      leaseNamespace: options.leaseNamespace,
      leaseName: options.leaseName,
      ...(options.statusQps ? { statusQps: options.statusQps } : {}),
      pushing: () => ads.sending,
      ...(options.xListenerSets ? { xListenerSets: true } : {}),
      ...(fleets
        ? {
            fleets: fleetProvisioning(
              fleets,
              xdsSecurity.certificates,
              k8s.certificateDirectorySource,
              options.listenerLayout,
            ),
          }
        : {}),
    });
    opened.add('Kubernetes provider', () => started.stop());
    sinks.push(started.statusSink);
    onFleets = started.provisioner ? (f, u) => started.provisioner?.update(f, u) : undefined;
  }

  const protectedPorts = [xdsPort, adminPort, ...(healthPort ? [healthPort] : [])];
  protectedPorts.push(parseHostPort(ENVOY_DEFAULT_ADMIN_ADDRESS).port);
  const controller = createBuilder(
    cache,
    {
      store,
      rejections: ads,
      statusSinks: sinks,
      logger,
      metrics,
      controllerName: options.controllerName,
      externalNameServices: options.externalNameServices,
      maxPortRangePorts: options.maxPortRangePorts,
      ...(options.xListenerSets ? { xListenerSets: true } : {}),
      ...(options.dynamicPorts ? { dynamicPorts: options.dynamicPorts } : {}),
      endpoints: { ...options.endpoints, protectedPorts },
      gatewayAddresses: options.gatewayAddresses,
      translate: {
        bindAddress: options.envoyBindAddress,
        ...(options.accessLog ? { accessLog: options.accessLog } : {}),
        ...(options.tracing ? { tracing: options.tracing } : {}),
        ...(options.listenerLayout ? { listenerLayout: options.listenerLayout } : {}),
        ...(options.listenerLayoutThreshold
          ? { listenerLayoutThreshold: options.listenerLayoutThreshold }
          : {}),
      },
      ...(fleets ? { managedFleets: true } : localSource ? { managedFleets: 'local' as const } : {}),
      ...(onFleets ? { onFleets } : {}),
      ...('dir' in options.source ? { debounceMs: FILE_MODE_BUILD_DEBOUNCE_MS } : {}),
    },
    options.logLevel,
  );
  opened.add('controller', () => controller.stop());
  controller.start();
  ready = () => store.isSynced() && controller.isReady();

  if (options.localEnvoys && localSource) {
    // Opened last, so closed first: Envoys drain while xDS still serves them.
    const fleet = startLocalEnvoys({
      options: options.localEnvoys,
      source: localSource,
      xdsAddress: options.xdsAddress,
      xdsPort,
      certificates: xdsSecurity.certificates,
      ...(options.listenerLayout ? { listenerLayout: options.listenerLayout } : {}),
      logger,
      metrics,
      protectedPorts,
      onProtectedPortsChange: () => controller.requestFullBuild(),
    });
    opened.add('managed Envoys', () => fleet.stop());
  } else if ('dir' in options.source) {
    logger.info(
      'no managed Envoys (--no-managed-envoy, --xds-tls-*, or no Envoy binary found): run them with convoy bootstrap',
    );
  }

  logger.info(
    {
      xdsPort,
      adminPort,
      healthPort,
      source: 'dir' in options.source ? `dir:${options.source.dir}` : 'kubernetes',
      envoyBinary: options.localEnvoys?.binary,
    },
    'convoy serving',
  );
  return { stop: () => opened.closeAll(logger) };
}

/**
 * Adds the host managed Envoys dial (when it is a name or IP of its own) to the serving
 * certificate's names, so their bootstraps can verify Convoy by that name.
 */
function fleetServerNames(flags: XdsSecurityFlags, fleets: ServeOptions['fleets']): XdsSecurityFlags {
  if (!fleets || flags['insecure-plaintext-xds'] || flags['xds-tls-cert'] !== undefined) return flags;
  const host = parseHostPort(fleets.xdsAddress).host;
  return { ...flags, 'xds-server-name': [...(flags['xds-server-name'] ?? []), host] };
}

/** The provisioner's settings: render settings, and client certificates from Convoy's CA (or plaintext). */
function fleetProvisioning(
  fleets: NonNullable<ServeOptions['fleets']>,
  certs: CertificateDirectory | undefined,
  fromDirectory: (certs: CertificateDirectory) => FleetCertificateSource,
  listenerLayout: ListenerLayout | undefined,
): { settings: RenderSettings; certificates: FleetCertificateSource } {
  return {
    settings: {
      xdsAddress: fleets.xdsAddress,
      envoyImage: fleets.envoyImage,
      convoyImage: fleets.convoyImage,
      ...(listenerLayout ? { listenerLayout } : {}),
    },
    certificates: certs ? fromDirectory(certs) : async () => undefined,
  };
}

/**
 * Sends grpc-js's own messages, which it writes to stderr by default, through Convoy's logger:
 * stderr keeps the one line a failed start prints, and no write there can block serving.
 */
function routeGrpcLogs(logger: Logger): void {
  const log = logger.child({ component: 'grpc-js' });
  const text = (message: unknown, params: unknown[]) => format(message, ...params);
  grpc.setLogger({
    error: (message?: unknown, ...params: unknown[]) => log.error(text(message, params)),
    info: (message?: unknown, ...params: unknown[]) => log.info(text(message, params)),
    debug: (message?: unknown, ...params: unknown[]) => log.debug(text(message, params)),
  });
}

/** Runs `listen`, turning its failure into one line that names the server and the address. */
async function listening(what: string, address: string, listen: () => Promise<number>): Promise<number> {
  try {
    return await listen();
  } catch (err) {
    throw new Error(`${what}: cannot listen on ${address}: ${listenFailure(err as NodeJS.ErrnoException)}`, {
      cause: err,
    });
  }
}

/** A short reason for a failed listen; grpc-js wraps the errno in its own message text. */
function listenFailure(err: NodeJS.ErrnoException): string {
  const text = `${err.code ?? ''} ${err.message ?? ''}`;
  if (text.includes('EADDRINUSE')) return 'address already in use';
  if (text.includes('EADDRNOTAVAIL')) return 'address not available on this host';
  if (text.includes('EACCES')) return 'permission denied';
  return err.message ?? String(err);
}

/** Resolves with the name of the first SIGINT or SIGTERM received. */
export function waitForShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
