/**
 * Convoy as a peer-bench contender: `convoy serve` in Kubernetes mode as its ServiceAccount
 * identity (deploy/'s RBAC, which LocalCluster applies), Envoy bootstrapped by Convoy's own
 * generator with a client certificate from Convoy's xDS CA, listeners bound to loopback.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LocalCluster } from '../../e2e/cluster/cluster';
import { ConvoyProcess } from '../../e2e/harness/convoy';
import { EnvoyProcess } from '../../e2e/harness/envoy';
import { XDS_CLUSTER_NAME } from '../../src/envoy/bootstrap';
import { MALLOC_ENV } from '../../src/runtime/memory';
import { FLEET } from '../world';
import type { Contender } from './contender';

export class ConvoyContender implements Contender {
  readonly name = 'convoy';
  readonly xdsCluster = XDS_CLUSTER_NAME;
  private convoy?: ConvoyProcess;
  private envoy?: EnvoyProcess;

  constructor(private readonly readyTimeoutMs: number) {}

  async prepare(): Promise<void> {
    // LocalCluster installed the Gateway API CRDs and deploy/'s namespace and RBAC.
  }

  async start(cluster: LocalCluster): Promise<void> {
    this.convoy = await ConvoyProcess.start({
      name: 'convoy',
      args: [
        '--kubeconfig',
        cluster.convoyKubeconfig,
        '--envoy-bind-address',
        '127.0.0.1',
        '--leader-election-namespace',
        'convoy-system',
        '--xds-certs-dir',
        path.join(cluster.dir, 'convoy-xds-pki'),
      ],
      allowLoopbackEndpoints: false,
      // As deployed: the Dockerfile sets MALLOC_ENV for glibc.
      env: { ...MALLOC_ENV, NODE_ENV: 'production' },
      workDir: path.join(cluster.dir, 'convoy'),
      readyTimeoutMs: this.readyTimeoutMs,
    });
  }

  async startEnvoy(cluster: LocalCluster): Promise<EnvoyProcess> {
    if (!this.convoy) throw new Error('convoy is not running');
    const dir = path.join(cluster.dir, 'convoy-envoy');
    const file = path.join(dir, 'bootstrap.yaml');
    fs.mkdirSync(dir, { recursive: true });
    await this.convoy.writeEnvoyBootstrap(file, {
      gateway: FLEET,
      nodeId: 'bench-envoy',
      adminAddress: '127.0.0.1:0',
    });
    this.envoy = await EnvoyProcess.start({
      configPath: file,
      name: 'convoy-envoy',
      logLevel: 'warning',
      drainTimeS: 1,
      workDir: dir,
    });
    return this.envoy;
  }

  get pid(): number {
    const pid = this.convoy?.pid;
    if (pid === undefined) throw new Error('convoy is not running');
    return pid;
  }

  logContext(): string {
    return [this.convoy?.logContext(20), this.envoy?.logContext(20)].filter(Boolean).join('\n');
  }

  async stop(): Promise<void> {
    await this.envoy?.stop(2000);
    await this.convoy?.stop();
    this.envoy = undefined;
    this.convoy = undefined;
  }
}
