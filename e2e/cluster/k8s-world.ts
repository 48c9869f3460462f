import * as path from 'node:path';
import { KubeApiError } from '../../src/kubernetes/client';
import { RESOURCE_TYPES, XLISTENERSET_RESOURCE, objectPath } from '../../src/kubernetes/resources';
import type { ResourceType } from '../../src/kubernetes/resources';
import { ConvoyProcess, EnvoyProcess, tempDir, waitFor } from '../harness';
import { LocalCluster, REPO_ROOT } from './cluster';

/**
 * Kubernetes-mode e2e world: a LocalCluster (real kube-apiserver + etcd, Gateway API CRDs,
 * Convoy's RBAC from deploy/), `convoy serve` processes running as Convoy's ServiceAccount
 * identity, and Envoys bootstrapped by Convoy's own generator. Objects are written by the test
 * as the admin with server-side apply, like `kubectl apply --server-side`.
 */

export const CONTROLLER = 'convoy.dev/gateway-controller';
export const GW_API = 'gateway.networking.k8s.io/v1';

export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; generation?: number; resourceVersion?: string } & Record<
    string,
    unknown
  >;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

const EXTRA_TYPES: ResourceType[] = [
  {
    kind: 'Lease' as never,
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    namespaced: true,
    optional: false,
  },
];

function typeOf(kind: string): ResourceType {
  const r = [...RESOURCE_TYPES, XLISTENERSET_RESOURCE, ...EXTRA_TYPES].find((t) => t.kind === kind);
  if (!r) throw new Error(`k8s-world: unknown kind ${kind}`);
  return r;
}

/** The condition of a type in a conditions list. */
export function cond(conditions: unknown, type: string): Condition | undefined {
  return Array.isArray(conditions) ? (conditions as Condition[]).find((c) => c.type === type) : undefined;
}

/** A Service that sends `port` to the test's echo backend on loopback (ExternalName localhost). */
export function loopbackService(name: string, namespace: string, port: number): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'http', port }] },
  };
}

/** A Gateway of class convoy that accepts ListenerSets of its own namespace, with `listeners`. */
export function convoyGateway(name: string, namespace: string, listeners: object[]): KObject {
  return {
    apiVersion: GW_API,
    kind: 'Gateway',
    metadata: { name, namespace },
    spec: { gatewayClassName: 'convoy', allowedListeners: { namespaces: { from: 'Same' } }, listeners },
  };
}

export class K8sWorld {
  readonly convoys: ConvoyProcess[] = [];
  readonly envoys: EnvoyProcess[] = [];
  readonly dir: string;
  private readonly cleanupDir: () => void;

  private constructor(readonly cluster: LocalCluster) {
    const t = tempDir('k8s-world');
    this.dir = t.dir;
    this.cleanupDir = t.cleanup;
  }

  /** A fresh cluster with the CRDs, deploy/'s namespace, RBAC and GatewayClass. */
  static async create(): Promise<K8sWorld> {
    const cluster = await LocalCluster.start();
    const w = new K8sWorld(cluster);
    await cluster.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', '02-gatewayclass.yaml')]);
    return w;
  }

  get admin() {
    return this.cluster.admin;
  }

  /** Server-side apply as the admin (creates or updates). Returns the stored object. */
  async apply(obj: KObject): Promise<KObject> {
    const r = typeOf(obj.kind);
    return this.admin.request<KObject>('PATCH', objectPath(r, obj.metadata.namespace, obj.metadata.name), {
      query: { fieldManager: 'e2e', force: true },
      contentType: 'application/apply-patch+yaml',
      body: obj,
    });
  }

  async get(kind: string, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    try {
      return await this.admin.request<KObject>('GET', objectPath(typeOf(kind), namespace, name));
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  async delete(kind: string, namespace: string | undefined, name: string): Promise<void> {
    try {
      await this.admin.request('DELETE', objectPath(typeOf(kind), namespace, name));
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
    }
  }

  async namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    await this.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  }

  /** `convoy serve` in Kubernetes mode as Convoy's ServiceAccount. */
  async startConvoy(name = 'convoy', extraArgs: string[] = []): Promise<ConvoyProcess> {
    const p = await ConvoyProcess.start({
      name,
      args: [
        '--kubeconfig',
        this.cluster.convoyKubeconfig,
        '--envoy-bind-address',
        '127.0.0.1',
        '--leader-election-namespace',
        'convoy-system',
        // One CA for every replica, as the replicas of a Deployment share one Secret.
        ...(extraArgs.some(
          (a) => a === '--insecure-plaintext-xds' || a === '--xds-certs-dir' || a.startsWith('--xds-tls-'),
        )
          ? []
          : ['--xds-certs-dir', path.join(this.dir, 'xds-pki')]),
        ...extraArgs,
      ],
      workDir: path.join(this.dir, name),
      readyTimeoutMs: 60_000,
    });
    this.convoys.push(p);
    return p;
  }

  /** An Envoy of the fleet of `gateway` (ns/name), connected to one Convoy. */
  async startEnvoy(convoy: ConvoyProcess, gateway: string, name = 'envoy'): Promise<EnvoyProcess> {
    const file = path.join(this.dir, `${name}.yaml`);
    await convoy.writeEnvoyBootstrap(file, { gateway, nodeId: name, adminAddress: '127.0.0.1:0' });
    const e = await EnvoyProcess.start({
      configPath: file,
      name,
      drainTimeS: 2,
      workDir: path.join(this.dir, name),
    });
    this.envoys.push(e);
    return e;
  }

  /** Waits until the object's status (read from the API server) satisfies the predicate. */
  async waitStatus(
    kind: string,
    namespace: string | undefined,
    name: string,
    predicate: (status: Record<string, unknown>, obj: KObject) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<KObject> {
    let last: KObject | undefined;
    return waitFor(
      async () => {
        last = await this.get(kind, namespace, name);
        return last && predicate(last.status ?? {}, last) ? last : undefined;
      },
      {
        what,
        timeoutMs,
        intervalMs: 200,
        context: () =>
          `last ${kind} ${namespace ?? ''}/${name} status: ${JSON.stringify(last?.status, null, 1)}\n` +
          this.convoys.map((c) => c.logContext(15)).join('\n'),
      },
    );
  }

  async dispose(): Promise<void> {
    for (const e of this.envoys) await e.stop().catch(() => undefined);
    for (const c of this.convoys) await c.dispose().catch(() => undefined);
    await this.cluster.teardown();
    this.cleanupDir();
  }
}
