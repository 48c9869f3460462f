import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LocalCluster } from './cluster';

/**
 * kube-controller-manager for the pod world, with the controllers that Deployments, ReplicaSets,
 * EndpointSlices, namespace deletion, garbage collection and ServiceAccounts need. Its health
 * endpoint is off (--secure-port=0); callers judge it by effect (pods appear, slices list them).
 */
export const POD_WORLD_CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'endpointslice-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
];

export class KubeControllerManager {
  private constructor(
    readonly proc: ChildProcess,
    readonly logFile: string,
  ) {}

  /** Starts it against `cluster` as the admin identity; resolves once the process is spawned. */
  static start(cluster: LocalCluster, controllers = POD_WORLD_CONTROLLERS): KubeControllerManager {
    const logFile = path.join(cluster.dir, 'kube-controller-manager.log');
    const fd = fs.openSync(logFile, 'a');
    const kubeconfig = cluster.adminKubeconfig;
    const proc = spawn(
      path.join(cluster.bins.binDir, 'kube-controller-manager'),
      [
        `--controllers=${controllers.join(',')}`,
        '--leader-elect=false',
        '--use-service-account-credentials=false',
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        `--service-account-private-key-file=${path.join(cluster.dir, 'sa.key')}`,
        `--root-ca-file=${path.join(cluster.dir, 'certs', 'apiserver.crt')}`,
        '--concurrent-deployment-syncs=5',
        '--concurrent-replicaset-syncs=5',
        '--secure-port=0',
        '--v=1',
      ],
      { stdio: ['ignore', fd, fd] },
    );
    fs.closeSync(fd);
    const kill = () => proc.kill('SIGKILL');
    process.once('exit', kill);
    proc.once('exit', () => process.off('exit', kill));
    return new KubeControllerManager(proc, logFile);
  }

  /** Why it is not running, if it exited. */
  get exited(): string | undefined {
    const p = this.proc;
    return p.exitCode !== null || p.signalCode !== null
      ? `kube-controller-manager exited (${p.exitCode ?? p.signalCode})`
      : undefined;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const done = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(t);
  }
}
