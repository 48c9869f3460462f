import * as fs from 'node:fs';
import { renderBootstrapYaml, renderXdsSdsFiles } from '../../src/envoy/bootstrap';
import type { BootstrapOptions } from '../../src/envoy/bootstrap';
import { CertificateDirectory } from '../../src/pki/certificate-directory';
import type { KubeClient } from '../../src/kubernetes/client';
import { Informer } from '../cluster/informer';

/**
 * Test-only stand-in for Convoy's managed fleets (until managed mode provisions them): for each
 * Gateway of Convoy's class it applies, in the Gateway's namespace and owned by it (so the
 * garbage collector removes them with it), a Secret with the Gateway's xDS client certificate
 * from Convoy's CA, a ConfigMap with the bootstrap `convoy bootstrap` writes for that Gateway
 * (node.cluster = the Gateway, xDS over mTLS to Convoy on the bridge address), a one-replica
 * Deployment of the Envoy image (node.id = the pod name; ready on Envoy's /ready), and a
 * LoadBalancer Service `envoy-<gateway>` whose ports are the listener ports of the Gateway and of
 * the ListenerSets attached to it. The pod runner runs the Envoy; the load-balancer controller
 * gives the Service its address, which Convoy reports through `--envoy-service
 * {namespace}/envoy-{name}`.
 */

export const ENVOY_IMAGE = 'envoyproxy/envoy:v1.40-latest';
export const ENVOY_SERVICE_TEMPLATE = '{namespace}/envoy-{name}';
export const ENVOY_ADMIN_PORT = 19000;
const FIELD_MANAGER = 'convoy-fleet-standin';

interface Listener {
  port: number;
}
interface Gateway {
  metadata: { name: string; namespace: string; uid: string; resourceVersion?: string };
  spec: { gatewayClassName: string; listeners?: Listener[] };
}
interface ListenerSet {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    parentRef: { name: string; namespace?: string; kind?: string; group?: string };
    listeners?: Listener[];
  };
}

export interface FleetStandInOptions {
  admin: KubeClient;
  gatewayClass: string;
  /** Convoy's --xds-certs-dir (its CA issues the fleets' client certificates). */
  certsDir: string;
  /** Where Envoys dial Convoy, e.g. 192.0.2.1:18000. */
  xdsAddress: string;
  log?: (line: string) => void;
}

/** Every distinct listener port of a Gateway and its ListenerSets, ascending. */
export function fleetPorts(gw: Gateway, sets: Iterable<ListenerSet>): number[] {
  const ports = new Set((gw.spec.listeners ?? []).map((l) => l.port));
  for (const s of sets) {
    const p = s.spec.parentRef;
    if (
      (p.kind ?? 'Gateway') !== 'Gateway' ||
      (p.group ?? 'gateway.networking.k8s.io') !== 'gateway.networking.k8s.io'
    )
      continue;
    if (p.name !== gw.metadata.name || (p.namespace ?? s.metadata.namespace) !== gw.metadata.namespace)
      continue;
    for (const l of s.spec.listeners ?? []) ports.add(l.port);
  }
  return [...ports].filter((p) => Number.isInteger(p) && p > 0 && p < 65536).sort((a, b) => a - b);
}

export class FleetStandIn {
  private readonly gateways: Informer<Gateway>;
  private readonly sets: Informer<ListenerSet>;
  /** What was applied per Gateway uid: the fingerprint of its ports (objects other than the Service never change). */
  private readonly applied = new Map<string, string>();
  private busy = false;
  private again = false;
  private stopped = false;
  private readonly log: (line: string) => void;

  private constructor(private readonly opts: FleetStandInOptions) {
    this.log = opts.log ?? (() => undefined);
    const changed = () => this.reconcile();
    this.gateways = new Informer<Gateway>(
      opts.admin,
      '/apis/gateway.networking.k8s.io/v1/gateways',
      changed,
      this.log,
    );
    this.sets = new Informer<ListenerSet>(
      opts.admin,
      '/apis/gateway.networking.k8s.io/v1/listenersets',
      changed,
      this.log,
    );
  }

  static async start(opts: FleetStandInOptions): Promise<FleetStandIn> {
    const f = new FleetStandIn(opts);
    f.gateways.start();
    f.sets.start();
    await Promise.all([f.gateways.ready, f.sets.ready]);
    return f;
  }

  private reconcile(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    void (async () => {
      do {
        this.again = false;
        for (const gw of [...this.gateways.objects.values()]) {
          if (this.stopped) break;
          if (gw.spec.gatewayClassName !== this.opts.gatewayClass) continue;
          const ports = fleetPorts(gw, this.sets.objects.values());
          const key = `${gw.metadata.uid}:${ports.join(',')}`;
          if (this.applied.get(gw.metadata.uid) === key) continue;
          try {
            await this.applyFleet(gw, ports, !this.applied.has(gw.metadata.uid));
            this.applied.set(gw.metadata.uid, key);
          } catch (err) {
            this.log(`fleet ${gw.metadata.namespace}/${gw.metadata.name}: ${(err as Error).message}`);
            this.again = true;
          }
        }
        const live = new Set([...this.gateways.objects.values()].map((g) => g.metadata.uid));
        for (const uid of this.applied.keys()) if (!live.has(uid)) this.applied.delete(uid);
        if (this.again) await new Promise((r) => setTimeout(r, 200));
      } while (this.again && !this.stopped);
      this.busy = false;
    })();
  }

  private async apply(pathname: string, body: Record<string, unknown>): Promise<void> {
    await this.opts.admin.request('PATCH', pathname, {
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
      body,
    });
  }

  /** Applies the Gateway's fleet; the certificate, bootstrap and Deployment only the first time. */
  private async applyFleet(gw: Gateway, ports: number[], first: boolean): Promise<void> {
    const { name, namespace, uid } = gw.metadata;
    const fleet = `envoy-${name}`;
    const ns = `/api/v1/namespaces/${namespace}`;
    const meta = {
      name: fleet,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': FIELD_MANAGER, 'convoy.dev/gateway-uid': uid },
      ownerReferences: [
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'Gateway',
          name,
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    };
    if (first) {
      const certs = new CertificateDirectory(this.opts.certsDir);
      await certs.ensureCa({ create: false });
      const { files } = await certs.ensureGateway(`${namespace}/${name}`);
      const xdsDir = '/etc/convoy-xds';
      const bootstrap: BootstrapOptions = {
        xdsAddress: this.opts.xdsAddress,
        gateway: `${namespace}/${name}`,
        nodeId: fleet,
        adminAddress: `0.0.0.0:${ENVOY_ADMIN_PORT}`,
        tls: {
          certFile: `${xdsDir}/tls.crt`,
          keyFile: `${xdsDir}/tls.key`,
          caFile: `${xdsDir}/ca.crt`,
          sdsDir: '/etc/envoy',
          sdsPrefix: 'bootstrap.',
        },
      };
      const data: Record<string, string> = { 'bootstrap.yaml': renderBootstrapYaml(bootstrap) };
      Object.assign(data, renderXdsSdsFiles(bootstrap.tls!));
      await this.apply(`${ns}/configmaps/${fleet}`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: meta,
        data,
      });
      const b64 = (f: string) => fs.readFileSync(f).toString('base64');
      await this.apply(`${ns}/secrets/${fleet}`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: meta,
        type: 'Opaque',
        data: { 'tls.crt': b64(files.certFile), 'tls.key': b64(files.keyFile), 'ca.crt': b64(files.caFile) },
      });
      const labels = { 'convoy.dev/gateway-uid': uid };
      await this.apply(`/apis/apps/v1/namespaces/${namespace}/deployments/${fleet}`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta,
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              terminationGracePeriodSeconds: 2,
              containers: [
                {
                  name: 'envoy',
                  image: ENVOY_IMAGE,
                  args: [
                    '-c',
                    '/etc/envoy/bootstrap.yaml',
                    '--service-node',
                    '$(POD_NAME)',
                    '--log-level',
                    'warn',
                  ],
                  env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
                  ports: [{ name: 'admin', containerPort: ENVOY_ADMIN_PORT }],
                  readinessProbe: {
                    httpGet: { path: '/ready', port: 'admin' },
                    periodSeconds: 1,
                    failureThreshold: 1,
                  },
                  volumeMounts: [
                    { name: 'bootstrap', mountPath: '/etc/envoy', readOnly: true },
                    { name: 'xds-client', mountPath: xdsDir, readOnly: true },
                  ],
                },
              ],
              volumes: [
                { name: 'bootstrap', configMap: { name: fleet } },
                { name: 'xds-client', secret: { secretName: fleet } },
              ],
            },
          },
        },
      });
    }
    await this.apply(`${ns}/services/${fleet}`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta,
      spec: {
        type: 'LoadBalancer',
        selector: { 'convoy.dev/gateway-uid': uid },
        ports: ports.map((p) => ({ name: `tcp-${p}`, port: p, targetPort: p, protocol: 'TCP' })),
      },
    });
    this.log(`fleet ${namespace}/${name}: ports ${ports.join(',') || '(none)'}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.gateways.stop(), this.sets.stop()]);
  }
}
