import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { ObjectStore } from '../store/store';
import type { StatusSink } from '../status/types';
import { KubernetesStatusWriter } from '../kubernetes/status-writer';
import { LeaderElector } from '../kubernetes/lease';
import { KubeClient } from '../kubernetes/client';
import { KubernetesProvider } from '../providers/kubernetes/provider';
import { watchedResources } from '../kubernetes/resources';
import { KubernetesFleetProvisioner } from '../fleets/kubernetes/provisioner';
import type { FleetCertificateSource } from '../fleets/kubernetes/provisioner';
import type { RenderSettings } from '../fleets/kubernetes/render';
import type { CertificateDirectory } from '../pki/certificate-directory';
import { syncXdsCaWithSecret } from '../fleets/kubernetes/xds-ca';

export { certificateDirectorySource } from '../fleets/kubernetes/xds-ca';

/**
 * Makes `certs` hold the xDS CA every replica shares, from (or into) Secret `namespace/name`
 * (docs/security.md §2); called before the xDS server's certificates are issued.
 */
export async function shareXdsCa(
  kubeconfig: string | undefined,
  certs: CertificateDirectory,
  namespace: string,
  name: string,
  logger: Logger,
): Promise<void> {
  const client = KubeClient.fromKubeconfig(kubeconfig);
  try {
    await syncXdsCaWithSecret(client, certs, namespace, name, logger);
  } finally {
    client.close();
  }
}

export interface KubernetesModeOptions {
  kubeconfig?: string;
  store: ObjectStore;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /** GatewayClass controllerName Convoy owns; default convoy.dev/gateway-controller. */
  controllerName?: string;
  leaseNamespace?: string;
  leaseName?: string;
  /** false: no Lease; this (single) replica always writes status. Default true. */
  leaderElection?: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** A client-side limit on status writes per second (default none: docs/gateway-api.md §16). */
  statusQps?: number;
  /** True while xDS bytes wait to go out: status writes let the push go first (KubernetesStatusWriterOptions.pushing). */
  pushing?: () => boolean;
  /** Watch legacy XListenerSets too (docs/gateway-api.md §29); their RBAC is needed only then. */
  xListenerSets?: boolean;
  /** Provision managed fleets (docs/architecture.md §13); only the leader writes. */
  fleets?: { settings: RenderSettings; certificates: FleetCertificateSource };
}

export interface KubernetesMode {
  statusSink: StatusSink;
  provider: KubernetesProvider;
  writer: KubernetesStatusWriter;
  elector?: LeaderElector;
  /** Set with options.fleets: give it every build's fleets (Controller onFleets). */
  provisioner?: KubernetesFleetProvisioner;
  isLeader(): boolean;
  stop(): Promise<void>;
}

/**
 * Kubernetes mode in one call: the provider filling the store, the status writer, and the
 * leader election that switches the writer on and off. Every replica serves xDS from the
 * store; only the replica holding the Lease writes status. One HTTP client is shared.
 */
export async function startKubernetesMode(o: KubernetesModeOptions): Promise<KubernetesMode> {
  const client = KubeClient.fromKubeconfig(o.kubeconfig);
  const provider = new KubernetesProvider({
    client,
    store: o.store,
    logger: o.logger,
    metrics: o.metrics,
    resources: watchedResources(o.xListenerSets === true),
    // The writer times its writes' echoes to size its window (kubernetes/write-window.ts).
    onObserved: (kind, namespace, name, resourceVersion) =>
      writer.observeEcho(kind, namespace, name, resourceVersion),
  });
  const writer = new KubernetesStatusWriter({
    client,
    controllerName: o.controllerName ?? 'convoy.dev/gateway-controller',
    logger: o.logger,
    metrics: o.metrics,
    store: o.store,
    ...(o.statusQps ? { qps: o.statusQps, burst: o.statusQps } : {}),
    ...(o.pushing ? { pushing: o.pushing } : {}),
  });
  const provisioner = o.fleets
    ? new KubernetesFleetProvisioner({ client, logger: o.logger, ...o.fleets })
    : undefined;
  const setLeader = (leader: boolean) => {
    writer.setLeader(leader);
    provisioner?.setLeader(leader);
  };
  let elector: LeaderElector | undefined;
  if (o.leaderElection !== false) {
    elector = new LeaderElector({
      client,
      logger: o.logger,
      metrics: o.metrics,
      name: o.leaseName,
      namespace: o.leaseNamespace,
      leaseDurationMs: o.leaseDurationMs,
      renewDeadlineMs: o.renewDeadlineMs,
      retryPeriodMs: o.retryPeriodMs,
      onStartedLeading: () => setLeader(true),
      onStoppedLeading: () => setLeader(false),
    });
  }
  await provider.start();
  provisioner?.start();
  if (elector) elector.start();
  else setLeader(true);
  return {
    statusSink: writer,
    provider,
    writer,
    elector,
    provisioner,
    isLeader: () => elector?.isLeader ?? true,
    async stop() {
      // Release the Lease first so a standby takes over while we drain.
      await elector?.stop();
      await provisioner?.stop();
      await writer.stop();
      await provider.stop();
      client.close();
    },
  };
}
