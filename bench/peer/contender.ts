/**
 * A control plane under comparison in the peer bench: how it is installed into a fresh local
 * cluster, started against it, and how its one real Envoy is connected.
 */
import type { LocalCluster } from '../../e2e/cluster/cluster';
import type { EnvoyProcess } from '../../e2e/harness/envoy';
import type { World } from '../world';

export interface Contender {
  /** Short name used in tables and results ("convoy", "envoy-gateway"). */
  readonly name: string;
  /** The Envoy cluster name its bootstrap gives the xDS server (for the byte counters). */
  readonly xdsCluster: string;
  /**
   * Installs what a user installs before the world exists (CRDs, namespaces, certificates);
   * not timed.
   */
  prepare(cluster: LocalCluster, world: World): Promise<void>;
  /** Starts the control plane against the cluster; the clock runs from before this call. */
  start(cluster: LocalCluster, world: World): Promise<void>;
  /** Starts one real Envoy connected to the control plane's xDS server. */
  startEnvoy(cluster: LocalCluster, world: World): Promise<EnvoyProcess>;
  /** The control-plane process, for its memory. */
  readonly pid: number;
  /** A few lines of the control plane's log, for failure messages. */
  logContext(): string;
  /** Stops the Envoy and the control plane. */
  stop(): Promise<void>;
}
