import type { Logger } from '../../observability/logger';
import type { ConvoyMetrics } from '../../observability/metrics';
import type { ObjectStore } from '../../store/store';
import { KubeClient } from '../../kubernetes/client';
import { Informer } from './informer';
import type { ObservedHook } from './informer';
import { kubernetesMetrics } from '../../kubernetes/metrics';
import type { ResourceType } from '../../kubernetes/resources';
import { RESOURCE_TYPES } from '../../kubernetes/resources';

export const KUBERNETES_SOURCE = 'kubernetes';

export interface KubernetesProviderOptions {
  /** Path to a kubeconfig; otherwise $KUBECONFIG, in-cluster, then ~/.kube/config. */
  kubeconfig?: string;
  /** An existing client (shared with the status writer and the lease); wins over kubeconfig. */
  client?: KubeClient;
  store: ObjectStore;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /** Kinds to watch; defaults to every kind in WATCHED_KINDS. */
  resources?: readonly ResourceType[];
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  missingRetryMs?: number;
  pageSize?: number;
  watchTimeoutSeconds?: [number, number];
  /** Called with every object a watch event carries (InformerOptions.onObserved). */
  onObserved?: ObservedHook;
}

export interface InformerState {
  kind: string;
  phase: string;
  synced: boolean;
  lastError?: string;
}

/**
 * Fills the ObjectStore from a Kubernetes API server: one informer per watched kind. It knows
 * nothing about Gateway API semantics. start() returns once the informers are running; the
 * store learns that the initial sync is complete through markSynced('kubernetes'), once every
 * kind has been listed (or, for an optional Gateway API CRD, found not installed).
 */
export class KubernetesProvider {
  readonly client: KubeClient;
  private readonly ownsClient: boolean;
  private informers: Informer[] = [];
  private started = false;

  constructor(private readonly o: KubernetesProviderOptions) {
    this.ownsClient = !o.client;
    this.client = o.client ?? KubeClient.fromKubeconfig(o.kubeconfig);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { store, logger } = this.o;
    store.registerSource(KUBERNETES_SOURCE);
    const metrics = this.o.metrics ? kubernetesMetrics(this.o.metrics) : undefined;
    const resources = this.o.resources ?? RESOURCE_TYPES;
    let pending = resources.length;
    const log = logger.child({ component: 'kubernetes-provider' });
    log.info(
      { server: this.client.server.origin, kinds: resources.map((r) => r.kind) },
      'watching the API server',
    );
    this.informers = resources.map(
      (resource) =>
        new Informer({
          client: this.client,
          resource,
          store,
          logger: log,
          metrics,
          backoffBaseMs: this.o.backoffBaseMs,
          backoffMaxMs: this.o.backoffMaxMs,
          missingRetryMs: this.o.missingRetryMs,
          pageSize: this.o.pageSize,
          watchTimeoutSeconds: this.o.watchTimeoutSeconds,
          onObserved: this.o.onObserved,
          onSynced: () => {
            if (--pending === 0) {
              log.info('initial sync complete');
              store.markSynced(KUBERNETES_SOURCE);
            }
          },
        }),
    );
    for (const i of this.informers) i.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
    if (this.ownsClient) this.client.close();
  }

  /** Per-kind state for /debug and readiness messages. */
  state(): InformerState[] {
    return this.informers.map((i) => ({
      kind: i.kind,
      phase: i.phase,
      synced: i.synced,
      lastError: i.lastError,
    }));
  }
}
