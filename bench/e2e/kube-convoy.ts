/**
 * Starts `convoy serve` in Kubernetes mode against a bench's local API server, as the status
 * benchmarks run it: the cluster's kubeconfig for Convoy, leader election in convoy-system, its
 * xDS certificates and working folder inside the cluster's folder.
 */
import * as path from 'node:path';
import type { LocalCluster } from '../../e2e/cluster/cluster';
import { ConvoyProcess } from '../../e2e/harness';

/**
 * Starts Convoy named `name` on `cluster` with `extraArgs` after the common ones; waits up to
 * 10 minutes for /readyz, which a large world's first LIST and build need on a busy machine.
 */
export function startConvoyOnCluster(
  cluster: LocalCluster,
  name: string,
  extraArgs: string[] = [],
  env?: Record<string, string>,
): Promise<ConvoyProcess> {
  return ConvoyProcess.start({
    name,
    args: [
      '--kubeconfig',
      cluster.convoyKubeconfig,
      '--leader-election-namespace',
      'convoy-system',
      '--xds-certs-dir',
      path.join(cluster.dir, 'xds-pki'),
      ...extraArgs,
    ],
    workDir: path.join(cluster.dir, 'convoy'),
    readyTimeoutMs: 600_000,
    env,
  });
}
