import { tuneGarbageCollection } from '../runtime/gc-tuning';
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createLogger } from '../observability/logger';
import { ConvoyMetrics } from '../observability/metrics';
import { AdminServer } from '../observability/admin-server';
import { ObjectStore } from '../store/store';
import { XdsCache } from '../xds/cache';
import { AdsServer } from '../xds/server';
import { renderXdsDebugText } from '../xds/sync-view';
import { Controller } from '../controller/controller';
import { StatusView } from '../status/view';
import type { StatusSink } from '../status/types';
import { FileProvider } from '../providers/files/provider';

export const DEFAULT_CONTROLLER_NAME = 'convoy.dev/gateway-controller';

const USAGE = `Usage: convoy serve [options]

Runs the control plane: watches Gateway API objects (from a directory or a Kubernetes
cluster), builds Envoy configuration and serves it over ADS.

Sources (pick one):
  --from-dir DIR                   Read objects from YAML/JSON files under DIR (watched)
  --kubeconfig FILE                Kubernetes mode (default when --from-dir is absent;
                                   also KUBECONFIG or in-cluster config)

Options:
  --controller-name NAME           GatewayClass controllerName Convoy owns
                                   (default ${DEFAULT_CONTROLLER_NAME})
  --xds-address HOST:PORT          ADS gRPC listen address (default 127.0.0.1:18000)
  --admin-address HOST:PORT        /healthz /readyz /metrics /debug/xds /status
                                   (default 127.0.0.1:9090)
  --xds-tls-cert FILE              Serve xDS over TLS with this certificate
  --xds-tls-key FILE               ... and key
  --xds-tls-ca FILE                Require Envoy client certificates signed by this CA
  --envoy-bind-address ADDR        Address Envoy listeners bind to (default 0.0.0.0)
  --gateway-address ADDR           Report ADDR (IP or hostname) in Gateways' status.addresses;
                                   repeatable
  --envoy-service NS/NAME          Report the load-balancer addresses of this Service (the one
                                   in front of the Envoy fleet) in status.addresses
  --enable-external-name-services  Allow routes to ExternalName Services (off by default:
                                   they can point Envoy at any host, e.g. its own admin)
  --leader-election-namespace NS   Lease namespace (Kubernetes mode; default from
                                   POD_NAMESPACE or convoy-system)
  --leader-election-name NAME      Lease name (default convoy-leader)
  --log-level LEVEL                trace|debug|info|warn|error (default info)
  -h, --help                       Show this help
`;

export async function serveCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'from-dir': { type: 'string' },
      kubeconfig: { type: 'string' },
      'controller-name': { type: 'string', default: DEFAULT_CONTROLLER_NAME },
      'xds-address': { type: 'string', default: '127.0.0.1:18000' },
      'admin-address': { type: 'string', default: '127.0.0.1:9090' },
      'xds-tls-cert': { type: 'string' },
      'xds-tls-key': { type: 'string' },
      'xds-tls-ca': { type: 'string' },
      'envoy-bind-address': { type: 'string', default: '0.0.0.0' },
      'enable-external-name-services': { type: 'boolean', default: false },
      'gateway-address': { type: 'string', multiple: true },
      'envoy-service': { type: 'string' },
      'leader-election-namespace': { type: 'string' },
      'leader-election-name': { type: 'string', default: 'convoy-leader' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const logger = createLogger({ level: values['log-level'] });
  const gcTuned = tuneGarbageCollection();
  logger.debug({ gcTuned, v8: process.versions.v8 }, 'V8 external-memory GC limit tuning');
  const metrics = new ConvoyMetrics({ processMetrics: true });
  const store = new ObjectStore();
  const cache = new XdsCache({ logger, metrics });
  const statusView = new StatusView();
  const sinks: StatusSink[] = [statusView];

  let tls: { cert: Buffer; key: Buffer; ca?: Buffer } | undefined;
  if (values['xds-tls-cert'] || values['xds-tls-key']) {
    if (!values['xds-tls-cert'] || !values['xds-tls-key']) {
      throw new Error('--xds-tls-cert and --xds-tls-key must be given together');
    }
    tls = {
      cert: fs.readFileSync(values['xds-tls-cert']),
      key: fs.readFileSync(values['xds-tls-key']),
      ca: values['xds-tls-ca'] ? fs.readFileSync(values['xds-tls-ca']) : undefined,
    };
  } else if (values['xds-tls-ca']) {
    throw new Error('--xds-tls-ca needs --xds-tls-cert and --xds-tls-key');
  }

  const stoppers: (() => Promise<void> | void)[] = [];
  let providerProblems: () => unknown = () => [];
  let providerReady: () => boolean = () => store.isSynced();

  if (values['from-dir']) {
    const files = new FileProvider({ dir: values['from-dir'], store, logger, metrics });
    providerProblems = () => files.problems();
    await files.start();
    stoppers.push(() => files.stop());
  } else {
    // Loaded lazily so file mode never pays for the Kubernetes client.
    const k8s = await import('./kubernetes-mode');
    const started = await k8s.startKubernetesMode({
      kubeconfig: values.kubeconfig,
      store,
      logger,
      metrics,
      controllerName: values['controller-name'] ?? DEFAULT_CONTROLLER_NAME,
      leaseNamespace: values['leader-election-namespace'] ?? process.env.POD_NAMESPACE ?? 'convoy-system',
      leaseName: values['leader-election-name'] ?? 'convoy-leader',
    });
    sinks.push(started.statusSink);
    providerReady = () => store.isSynced();
    stoppers.push(() => started.stop());
  }

  // Created before the controller, which follows what the Envoys reject.
  const ads = new AdsServer({ cache, logger, metrics, tls });

  const controller = new Controller({
    store,
    cache,
    statusSinks: sinks,
    logger,
    metrics,
    controllerName: values['controller-name'] ?? DEFAULT_CONTROLLER_NAME,
    externalNameServices: values['enable-external-name-services'] ?? false,
    gatewayAddresses: addressSource(values['gateway-address'], values['envoy-service']),
    translate: { bindAddress: values['envoy-bind-address'] },
    rejections: ads,
  });
  controller.start();
  stoppers.unshift(() => controller.stop());

  const xdsPort = await ads.listen(values['xds-address'] ?? '127.0.0.1:18000');
  stoppers.unshift(() => ads.stop(5000));

  const admin = new AdminServer({
    address: values['admin-address'] ?? '127.0.0.1:9090',
    logger,
    metrics,
    isReady: () => providerReady() && controller.isReady(),
    routes: {
      '/status': () => statusView.list(),
      '/status/problems': () => providerProblems(),
      '/debug/xds': () => ads.debugState(),
    },
    textRenderers: { '/debug/xds': (state) => renderXdsDebugText(state) },
  });
  const adminPort = await admin.listen();
  stoppers.push(() => admin.stop());
  logger.info(
    { xdsPort, adminPort, source: values['from-dir'] ? `dir:${values['from-dir']}` : 'kubernetes' },
    'convoy serving',
  );

  await new Promise<void>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      void (async () => {
        for (const stop of stoppers) {
          try {
            await stop();
          } catch (err) {
            logger.warn({ err }, 'error during shutdown');
          }
        }
        resolve();
      })();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
}

function addressSource(
  fixed: string[] | undefined,
  service: string | undefined,
): { service?: { namespace: string; name: string }; static?: string[] } | undefined {
  if (!fixed?.length && !service) return undefined;
  let svc: { namespace: string; name: string } | undefined;
  if (service) {
    const [namespace, name, extra] = service.split('/');
    if (!namespace || !name || extra !== undefined)
      throw new Error(`--envoy-service must be NAMESPACE/NAME, got ${service}`);
    svc = { namespace, name };
  }
  return { ...(svc ? { service: svc } : {}), ...(fixed?.length ? { static: fixed } : {}) };
}
