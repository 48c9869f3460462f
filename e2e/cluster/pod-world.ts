import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { convoyMain, envoyBinary } from '../harness';
import { LocalCluster, REPO_ROOT } from './cluster';
import { KubeControllerManager } from './controller-manager';
import type { ImageBinaries } from './images';
import { LoadBalancerController } from './lb-controller';
import { KubeletServer } from './kubelet-server';
import { PodRunner } from './pod-runner';
import { BRIDGE_ADDRESS, assertPrivateWorld } from './pod-network';

/**
 * A Kubernetes cluster that runs pods, inside the private world of netns-run.sh: etcd,
 * kube-apiserver and the CRDs (cluster.ts), kube-controller-manager with the workload
 * controllers (controller-manager.ts), the pod runner standing in for the kubelet
 * (pod-runner.ts) with its logs endpoint for `kubectl logs` (kubelet-server.ts) and the
 * load-balancer controller (lb-controller.ts). Start-up times of each
 * part are recorded in `timings` (ms).
 */

/** The directory holding echo-basic (and the conformance binary), built by e2e/conformance/build.sh. */
export function conformanceBuildDir(): string {
  const env = process.env.CONVOY_CONFORMANCE_BIN;
  if (env) return fs.statSync(env).isDirectory() ? env : path.dirname(env);
  const script = path.join(REPO_ROOT, 'e2e', 'conformance', 'build.sh');
  const res = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (res.status !== 0) throw new Error(`e2e/conformance/build.sh failed with status ${res.status}`);
  return res.stdout.trim().split('\n').pop() ?? '';
}

/**
 * Returns a copy of `binary` under the OS temp dir, refreshed when its size or time differs: the
 * suite's coredns pod mounts its ConfigMap at /root, which hides the build cache under /root.
 */
function copyOutsideRoot(binary: string): string {
  const dir = path.join(os.tmpdir(), 'convoy-pod-images');
  const target = path.join(dir, path.basename(binary));
  const src = fs.statSync(binary);
  const dst = fs.existsSync(target) ? fs.statSync(target) : undefined;
  if (!dst || dst.size !== src.size || dst.mtimeMs < src.mtimeMs) {
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(binary, `${target}.tmp`);
    fs.chmodSync(`${target}.tmp`, 0o755);
    fs.renameSync(`${target}.tmp`, target);
  }
  return target;
}

/** The programs standing in for images in this checkout. */
export function localImageBinaries(): ImageBinaries {
  return {
    echoBasic: path.join(conformanceBuildDir(), 'echo-basic'),
    dnsServer: copyOutsideRoot(path.join(conformanceBuildDir(), 'dns-server')),
    envoy: envoyBinary(),
    node: process.execPath,
    convoyMain: convoyMain(),
  };
}

export interface PodWorldOptions {
  keep?: boolean;
  log?: (line: string) => void;
  /** The Gateway API channel of the CRDs (LocalClusterOptions.crdChannel). */
  crdChannel?: 'standard' | 'experimental';
}

export class PodWorld {
  readonly timings: Record<string, number> = {};

  private constructor(
    readonly cluster: LocalCluster,
    readonly kcm: KubeControllerManager,
    readonly runner: PodRunner,
    readonly lb: LoadBalancerController,
    readonly kubelet: KubeletServer,
  ) {}

  static async start(opts: PodWorldOptions = {}): Promise<PodWorld> {
    await assertPrivateWorld();
    const log = opts.log ?? (() => undefined);
    const timings: Record<string, number> = {};
    const bins = localImageBinaries();
    let t = Date.now();
    const cluster = await LocalCluster.start({ keep: opts.keep, crdChannel: opts.crdChannel });
    timings['etcd + kube-apiserver + CRDs + RBAC'] = Date.now() - t;
    let kcm: KubeControllerManager | undefined;
    let runner: PodRunner | undefined;
    try {
      t = Date.now();
      kcm = KubeControllerManager.start(cluster);
      timings['kube-controller-manager spawned'] = Date.now() - t;
      t = Date.now();
      runner = await PodRunner.start({
        admin: cluster.admin,
        dir: path.join(cluster.dir, 'pods'),
        bins,
        log,
      });
      timings['pod runner (Node registered, pods listed)'] = Date.now() - t;
      t = Date.now();
      const lb = await LoadBalancerController.start(cluster.admin, log);
      timings['load-balancer controller (synced)'] = Date.now() - t;
      const r = runner;
      const kubelet = await KubeletServer.start(BRIDGE_ADDRESS, cluster.dir, (ns, pod, c) =>
        r.running(ns, pod)?.containers.find((x) => x.cfg.name === c),
      );
      const w = new PodWorld(cluster, kcm, runner, lb, kubelet);
      Object.assign(w.timings, timings);
      return w;
    } catch (err) {
      await runner?.stop().catch(() => undefined);
      await kcm?.stop().catch(() => undefined);
      await cluster.teardown();
      throw err;
    }
  }

  /** Stops everything, pods first so their processes never outlive the world. */
  async teardown(): Promise<void> {
    await this.kubelet.stop().catch(() => undefined);
    await this.lb.stop().catch(() => undefined);
    await this.runner.stop().catch(() => undefined);
    await this.kcm.stop().catch(() => undefined);
    await this.cluster.teardown();
  }
}
