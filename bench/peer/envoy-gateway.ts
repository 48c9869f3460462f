/**
 * Envoy Gateway as a peer-bench contender, in its normal mode: the Kubernetes provider against
 * the local API server, installed as its Helm chart would install it minus the Deployment:
 * its CRDs (the release's own, from the module cache), the `envoy-gateway-system` namespace,
 * the xDS mTLS Secrets its `certgen` job writes, and its configuration file.
 *
 * Where the cluster has no kubelet, two things stand in for it:
 * - the controller's xDS server certificate, which a pod mounts at /certs, is bind-mounted there
 *   inside the bench's private mount namespace (e2e/cluster/netns-run.sh), from the Secret
 *   certgen wrote; the path is fixed in Envoy Gateway for the Kubernetes provider;
 * - the Envoy Deployment Envoy Gateway creates for the Gateway is read back from the API server
 *   and its one container is run as a local process: its own bootstrap (the `--config-yaml`
 *   argument), its ConfigMap's SDS files and the `envoy` client-certificate Secret, with the
 *   in-cluster xDS address replaced by loopback (everything runs in the private network namespace,
 *   so its 0.0.0.0 listeners are reachable only there).
 *
 * The proxy topology injector (a mutating webhook for Envoy pods) is disabled: no pods run. The
 * Envoy's admin and stats listeners move to ephemeral ports (see startEnvoy).
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LocalCluster } from '../../e2e/cluster/cluster';
import { REPO_ROOT } from '../../e2e/cluster/cluster';
import { EnvoyProcess } from '../../e2e/harness/envoy';
import { tailFile } from '../../e2e/harness/util';
import { sleep } from '../common';
import { CONTROLLER_NAME, GATEWAY_NAME, GATEWAY_NAMESPACE } from '../world';
import type { Contender } from './contender';

export const EG_NAMESPACE = 'envoy-gateway-system';
/** The fixed path of the xDS server certificate for the Kubernetes provider. */
const CERTS_MOUNT = '/certs';

export interface EnvoyGatewayBuild {
  /** The cache directory build-envoy-gateway.sh printed. */
  dir: string;
  binary: string;
  crdDir: string;
  /** The Gateway API release Envoy Gateway's go.mod names. */
  gatewayApiVersion: string;
  version: string;
}

/** Builds (or finds in the cache) Envoy Gateway's controller with bench/peer/build-envoy-gateway.sh. */
export function buildEnvoyGateway(): EnvoyGatewayBuild {
  const script = path.join(REPO_ROOT, 'bench', 'peer', 'build-envoy-gateway.sh');
  const res = spawnSync('bash', [script, 'all'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (res.status !== 0) throw new Error(`build-envoy-gateway.sh failed with status ${res.status}`);
  const dir = res.stdout.trim().split('\n').pop() ?? '';
  const version = /envoy-gateway-(v[^-]+)-/.exec(path.basename(dir))?.[1] ?? 'unknown';
  return {
    dir,
    binary: path.join(dir, 'bin', 'envoy-gateway'),
    crdDir: path.join(dir, 'crds'),
    gatewayApiVersion: fs.readFileSync(path.join(dir, 'gateway-api-version'), 'utf8').trim(),
    version,
  };
}

/** Envoy Gateway's configuration: the Kubernetes provider, this world's controller name. */
function configYaml(): string {
  return [
    'apiVersion: gateway.envoyproxy.io/v1alpha1',
    'kind: EnvoyGateway',
    'gateway:',
    // The world's GatewayClass names Convoy's controller; Envoy Gateway is told to own it, so
    // both controllers read byte-identical objects.
    `  controllerName: ${CONTROLLER_NAME}`,
    'provider:',
    '  type: Kubernetes',
    '  kubernetes:',
    '    proxyTopologyInjector:',
    '      disabled: true',
    'logging:',
    '  level:',
    '    default: info',
    '',
  ].join('\n');
}

interface Deployment {
  metadata: { name: string };
  spec: { template: { spec: { containers: { name: string; args?: string[] }[] } } };
}

export class EnvoyGatewayContender implements Contender {
  readonly name = 'envoy-gateway';
  readonly xdsCluster = 'xds_cluster';
  private child?: ChildProcess;
  private envoy?: EnvoyProcess;
  private logFile = '';
  private mounted = false;
  private createdMountPoint = false;
  private exitInfo?: string;

  constructor(
    private readonly build: EnvoyGatewayBuild,
    private readonly envoyWaitMs: number,
  ) {}

  async prepare(cluster: LocalCluster): Promise<void> {
    const crds = fs
      .readdirSync(this.build.crdDir)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => ['-f', path.join(this.build.crdDir, f)]);
    await cluster.kubectlOk(['apply', '--server-side', '--field-manager=bench-peer', ...crds]);
    await cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=120s', 'crd', '--all']);
    await cluster.kubectlOk(['create', 'namespace', EG_NAMESPACE]);
    const certgen = spawnSync(this.build.binary, ['certgen', '--disable-topology-injector'], {
      encoding: 'utf8',
      env: { ...process.env, KUBECONFIG: cluster.adminKubeconfig, ENVOY_GATEWAY_NAMESPACE: EG_NAMESPACE },
    });
    if (certgen.status !== 0) throw new Error(`envoy-gateway certgen failed: ${certgen.stderr}`);
    const certs = path.join(cluster.dir, 'eg-certs');
    await this.writeSecret(cluster, 'envoy-gateway', certs);
    this.mountCerts(certs);
    fs.writeFileSync(path.join(cluster.dir, 'envoy-gateway.yaml'), configYaml());
  }

  /** Writes the data keys of a Secret of Envoy Gateway's namespace as files into `dir`. */
  private async writeSecret(cluster: LocalCluster, name: string, dir: string): Promise<void> {
    const secret = await cluster.admin.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${EG_NAMESPACE}/secrets/${name}`,
    );
    fs.mkdirSync(dir, { recursive: true });
    for (const [key, value] of Object.entries(secret.data))
      fs.writeFileSync(path.join(dir, key), Buffer.from(value, 'base64'), { mode: 0o600 });
  }

  /** Bind-mounts the controller's certificates at /certs (private mount namespace only). */
  private mountCerts(dir: string): void {
    if (process.env.CONVOY_PRIVATE_WORLD !== '1')
      throw new Error('the Envoy Gateway contender needs the private world (e2e/cluster/netns-run.sh)');
    if (!fs.existsSync(CERTS_MOUNT)) {
      fs.mkdirSync(CERTS_MOUNT);
      this.createdMountPoint = true;
    }
    const res = spawnSync('mount', ['--bind', dir, CERTS_MOUNT], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`mount --bind ${dir} ${CERTS_MOUNT}: ${res.stderr}`);
    this.mounted = true;
  }

  private unmountCerts(): void {
    if (this.mounted) spawnSync('umount', [CERTS_MOUNT]);
    this.mounted = false;
    if (this.createdMountPoint) fs.rmdirSync(CERTS_MOUNT);
    this.createdMountPoint = false;
  }

  async start(cluster: LocalCluster): Promise<void> {
    this.logFile = path.join(cluster.dir, 'envoy-gateway.log');
    const fd = fs.openSync(this.logFile, 'a');
    try {
      this.child = spawn(
        this.build.binary,
        ['server', '--config-path', path.join(cluster.dir, 'envoy-gateway.yaml')],
        {
          stdio: ['ignore', fd, fd],
          env: { ...process.env, KUBECONFIG: cluster.adminKubeconfig, ENVOY_GATEWAY_NAMESPACE: EG_NAMESPACE },
        },
      );
    } finally {
      fs.closeSync(fd);
    }
    this.exitInfo = undefined;
    this.child.once('exit', (code, signal) => {
      this.exitInfo = `envoy-gateway exited (code ${code}, signal ${signal})`;
    });
  }

  /** Waits for the Envoy Deployment Envoy Gateway creates for the world's Gateway. */
  private async envoyDeployment(cluster: LocalCluster): Promise<Deployment> {
    const selector = [
      `gateway.envoyproxy.io/owning-gateway-name=${GATEWAY_NAME}`,
      `gateway.envoyproxy.io/owning-gateway-namespace=${GATEWAY_NAMESPACE}`,
    ].join(',');
    const deadline = Date.now() + this.envoyWaitMs;
    for (;;) {
      if (this.exitInfo) throw new Error(`${this.exitInfo}\n${this.logContext()}`);
      const list = await cluster.admin.request<{ items: Deployment[] }>(
        'GET',
        `/apis/apps/v1/namespaces/${EG_NAMESPACE}/deployments`,
        { query: { labelSelector: selector } },
      );
      if (list.items.length > 0) return list.items[0]!;
      if (Date.now() > deadline) throw new Error('Envoy Gateway created no Envoy Deployment in time');
      await sleep(100);
    }
  }

  async startEnvoy(cluster: LocalCluster): Promise<EnvoyProcess> {
    const deployment = await this.envoyDeployment(cluster);
    const container = deployment.spec.template.spec.containers.find((c) => c.name === 'envoy');
    const args = container?.args ?? [];
    const arg = (flag: string) => {
      const i = args.indexOf(flag);
      if (i < 0) throw new Error(`the Envoy Deployment has no ${flag} argument`);
      return args[i + 1]!;
    };
    const dir = path.join(cluster.dir, 'eg-envoy');
    const certs = path.join(dir, 'certs');
    const sds = path.join(dir, 'sds');
    await this.writeSecret(cluster, 'envoy', certs);
    const configMap = await cluster.admin.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${EG_NAMESPACE}/configmaps/${deployment.metadata.name}`,
    );
    fs.mkdirSync(sds, { recursive: true });
    for (const [key, value] of Object.entries(configMap.data))
      if (key.endsWith('.json'))
        fs.writeFileSync(path.join(sds, key), value.replaceAll('/certs/', `${certs}/`));
    const bootstrap = arg('--config-yaml')
      .replaceAll('/sds/', `${sds}/`)
      .replace(/envoy-gateway\.envoy-gateway-system\.svc\.cluster\.local\.?/g, '127.0.0.1')
      .replaceAll('$(ENVOY_SERVICE_ZONE)', '""')
      // In a pod, Envoy's admin (19000) and stats (19001) ports do not meet the controller's
      // admin and metrics servers, which use the same numbers; here they share a network.
      .replace(/(port_value:\s*)(19000|19001)\b/g, (_m, key: string) => `${key}0`);
    const file = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(file, bootstrap);
    this.envoy = await EnvoyProcess.start({
      configPath: file,
      name: 'eg-envoy',
      logLevel: 'warning',
      drainTimeS: 1,
      workDir: dir,
      extraArgs: ['--service-cluster', arg('--service-cluster'), '--service-node', 'bench-envoy'],
    });
    return this.envoy;
  }

  get pid(): number {
    const pid = this.child?.pid;
    if (pid === undefined) throw new Error('envoy-gateway is not running');
    return pid;
  }

  logContext(): string {
    const own = this.logFile ? `--- last 20 lines of ${this.logFile} ---\n${tailFile(this.logFile, 20)}` : '';
    return [own, this.envoy?.logContext(20)].filter(Boolean).join('\n');
  }

  async stop(): Promise<void> {
    await this.envoy?.stop(2000);
    this.envoy = undefined;
    const child = this.child;
    if (child && this.exitInfo === undefined) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    this.child = undefined;
    this.unmountCerts();
  }
}
