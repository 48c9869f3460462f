import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeApiError } from '../../src/kubernetes/client';
import type { KubeClient, WatchEvent } from '../../src/kubernetes/client';
import { Container } from './container';
import { containerArgv, programForImage } from './images';
import type { ImageBinaries } from './images';
import { MissingReferenceError, expandReferences, resolveEnv } from './pod-env';
import type { EnvFromSource, EnvSources, EnvVar, PodLike } from './pod-env';
import { BRIDGE_ADDRESS, PodNetworks } from './pod-network';
import { podStatus } from './pod-status';
import { runLifecycleHandler } from './probes';
import type { LifecycleHandler, Probe } from './probes';
import { materialiseVolumes, mountScript } from './pod-volumes';
import type { Volume, VolumeMount } from './pod-volumes';

/**
 * A stand-in for the kubelet, for e2e tests inside the private world (netns-run.sh): it registers
 * a Ready Node, binds every unscheduled pod to it (pods/binding, so no kube-scheduler is needed),
 * and runs each pod bound to it: a network namespace with an address from 192.0.2.0/24, its
 * ConfigMap/Secret/emptyDir volumes materialised, and each container as a local process from the
 * image table (images.ts). Pod status follows the containers and their probes. A pod with a
 * deletionTimestamp is stopped gracefully and then deleted with gracePeriodSeconds=0, as the
 * kubelet does; init containers and ephemeral containers are not run.
 */

interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: VolumeMount[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: LifecycleHandler };
}

interface Pod extends PodLike {
  metadata: PodLike['metadata'] & {
    uid: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
  };
  spec: PodLike['spec'] & {
    containers: ContainerSpec[];
    volumes?: Volume[];
    restartPolicy?: 'Always' | 'OnFailure' | 'Never';
    terminationGracePeriodSeconds?: number;
    schedulerName?: string;
  };
}

interface RunningPod {
  pod: Pod;
  key: string;
  dir: string;
  podIP?: string;
  netns?: string;
  containers: Container[];
  startTime: string;
  transitions: Map<string, { status: string; time: string }>;
  terminating?: Promise<void>;
  retry?: NodeJS.Timeout;
  writing: boolean;
  dirty: boolean;
  gone: boolean;
  /** Why the pod cannot start yet (a missing reference), shown as every container's waiting reason. */
  waiting?: { reason: string; message: string };
}

export interface PodRunnerOptions {
  admin: KubeClient;
  nodeName?: string;
  /** Directory for pods' volumes, overlay layers and container logs. */
  dir: string;
  bins: ImageBinaries;
  log?: (line: string) => void;
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export class PodRunner {
  readonly nodeName: string;
  readonly networks = new PodNetworks();
  private readonly pods = new Map<string, RunningPod>();
  private readonly abort = new AbortController();
  private watching?: Promise<void>;
  private readonly log: (line: string) => void;

  private constructor(private readonly opts: PodRunnerOptions) {
    this.nodeName = opts.nodeName ?? 'convoy-node';
    this.log = opts.log ?? (() => undefined);
  }

  /** Registers the Node and starts watching pods; resolves once the first list is handled. */
  static async start(opts: PodRunnerOptions): Promise<PodRunner> {
    const r = new PodRunner(opts);
    await r.registerNode();
    let listed!: () => void;
    const first = new Promise<void>((res) => (listed = res));
    r.watching = r.watchLoop(listed);
    await first;
    return r;
  }

  /** The running pod of namespace/name, for tests and the logs endpoint. */
  running(namespace: string, name: string): { containers: Container[]; podIP?: string } | undefined {
    for (const p of this.pods.values()) if (p.key === `${namespace}/${name}` && !p.gone) return p;
    return undefined;
  }

  private async registerNode(): Promise<void> {
    const name = this.nodeName;
    try {
      await this.opts.admin.request('POST', '/api/v1/nodes', {
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
        },
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
    }
    // TaintNodesByCondition tainted the new Node not-ready; the runner binds pods itself, but a
    // Ready node without that taint is what controllers (and humans) expect to see.
    await this.opts.admin.request('PATCH', `/api/v1/nodes/${name}`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { taints: null } },
    });
    const t = now();
    await this.opts.admin.request('PATCH', `/api/v1/nodes/${name}/status`, {
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'convoy pod runner is ready',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
          ],
          // Only the InternalIP: the API server would dial a Hostname address first (kubectl logs).
          addresses: [{ type: 'InternalIP', address: BRIDGE_ADDRESS }],
          capacity: { cpu: '2', memory: '8Gi', pods: '240' },
          allocatable: { cpu: '2', memory: '8Gi', pods: '240' },
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          nodeInfo: {
            kubeletVersion: 'v1.35.4',
            containerRuntimeVersion: 'convoy-pod-runner://0',
            operatingSystem: 'linux',
            architecture: 'amd64',
            osImage: 'convoy e2e',
            kernelVersion: '',
            kubeProxyVersion: '',
            machineID: '',
            systemUUID: '',
            bootID: '',
          },
        },
      },
    });
  }

  private async watchLoop(listed: () => void): Promise<void> {
    const admin = this.opts.admin;
    while (!this.abort.signal.aborted) {
      try {
        const list = await admin.request<{ metadata: { resourceVersion: string }; items: Pod[] }>(
          'GET',
          '/api/v1/pods',
        );
        const seen = new Set<string>();
        for (const pod of list.items) {
          seen.add(pod.metadata.uid);
          this.handle(pod);
        }
        for (const [uid, p] of this.pods) if (!seen.has(uid)) this.vanished(p);
        listed();
        let rv = list.metadata.resourceVersion;
        for (;;) {
          await admin.watch(
            '/api/v1/pods',
            (ev: WatchEvent) => {
              if (ev.type === 'ERROR') throw new KubeApiError('watch expired', 410);
              if (ev.type === 'BOOKMARK') return;
              const pod = ev.object as unknown as Pod;
              rv = (pod.metadata as { resourceVersion?: string }).resourceVersion ?? rv;
              if (ev.type === 'DELETED') {
                const p = this.pods.get(pod.metadata.uid);
                if (p) this.vanished(p);
              } else this.handle(pod);
            },
            {
              query: { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 300 },
              signal: this.abort.signal,
            },
          );
          if (this.abort.signal.aborted) return;
        }
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (!(err instanceof KubeApiError && err.statusCode === 410))
          this.log(`pod watch: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private handle(pod: Pod): void {
    const { spec, metadata } = pod;
    if (!spec.nodeName) {
      if ((spec.schedulerName ?? 'default-scheduler') === 'default-scheduler' && !metadata.deletionTimestamp)
        void this.bind(pod);
      return;
    }
    if (spec.nodeName !== this.nodeName) return;
    let p = this.pods.get(metadata.uid);
    if (!p) {
      if (metadata.deletionTimestamp && (pod.status as { phase?: string } | undefined)?.phase === undefined) {
        void this.deletePod(pod);
        return;
      }
      p = {
        pod,
        key: `${metadata.namespace}/${metadata.name}`,
        dir: path.join(this.opts.dir, `${metadata.namespace}_${metadata.name}_${metadata.uid.slice(0, 8)}`),
        containers: [],
        startTime: now(),
        transitions: new Map(),
        writing: false,
        dirty: false,
        gone: false,
      };
      this.pods.set(metadata.uid, p);
      void this.startPod(p);
    }
    p.pod = pod;
    if (metadata.deletionTimestamp && !p.terminating) p.terminating = this.terminate(p);
  }

  private async bind(pod: Pod): Promise<void> {
    const { namespace, name } = pod.metadata;
    try {
      await this.opts.admin.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, uid: pod.metadata.uid },
          target: { apiVersion: 'v1', kind: 'Node', name: this.nodeName },
        },
      });
    } catch (err) {
      if (err instanceof KubeApiError && (err.statusCode === 409 || err.statusCode === 404)) return;
      // A transient failure: try again, since no further event may come for an unbound pod.
      this.log(`bind ${namespace}/${name}: ${(err as Error).message}; retrying in 1 s`);
      setTimeout(() => {
        if (!this.abort.signal.aborted) void this.bind(pod);
      }, 1_000);
    }
  }

  /** Reads the ConfigMaps and Secrets the pod refers to (missing ones stay absent). */
  private async sources(pod: Pod): Promise<EnvSources> {
    const cms = new Set<string>();
    const secrets = new Set<string>();
    for (const c of pod.spec.containers) {
      for (const e of c.env ?? []) {
        if (e.valueFrom?.configMapKeyRef) cms.add(e.valueFrom.configMapKeyRef.name);
        if (e.valueFrom?.secretKeyRef) secrets.add(e.valueFrom.secretKeyRef.name);
      }
      for (const f of c.envFrom ?? []) {
        if (f.configMapRef) cms.add(f.configMapRef.name);
        if (f.secretRef) secrets.add(f.secretRef.name);
      }
    }
    for (const v of pod.spec.volumes ?? []) {
      if (v.configMap) cms.add(v.configMap.name);
      if (v.secret) secrets.add(v.secret.secretName);
    }
    const ns = pod.metadata.namespace;
    const read = async (kind: 'configmaps' | 'secrets', name: string) => {
      try {
        const o = await this.opts.admin.request<{
          data?: Record<string, string>;
          binaryData?: Record<string, string>;
        }>('GET', `/api/v1/namespaces/${ns}/${kind}/${name}`);
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(o.data ?? {}))
          out[k] = kind === 'secrets' ? Buffer.from(v, 'base64').toString('utf8') : v;
        for (const [k, v] of Object.entries(o.binaryData ?? {}))
          out[k] = Buffer.from(v, 'base64').toString('latin1');
        return out;
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
        throw err;
      }
    };
    const cmData = new Map<string, Record<string, string> | undefined>();
    const secretData = new Map<string, Record<string, string> | undefined>();
    for (const n of cms) cmData.set(n, await read('configmaps', n));
    for (const n of secrets) secretData.set(n, await read('secrets', n));
    return { configMap: (n) => cmData.get(n), secret: (n) => secretData.get(n) };
  }

  private async startPod(p: RunningPod): Promise<void> {
    if (p.gone || p.terminating) return;
    const pod = p.pod;
    try {
      const net = await this.networks.create(pod.metadata.uid);
      p.podIP = net.ip;
      p.netns = net.netns;
      const withIP: Pod = {
        ...pod,
        status: { podIP: net.ip, podIPs: [{ ip: net.ip }], hostIP: BRIDGE_ADDRESS },
      };
      const sources = await this.sources(pod);
      fs.mkdirSync(p.dir, { recursive: true });
      const volumeDirs = materialiseVolumes(pod.spec.volumes ?? [], sources, path.join(p.dir, 'volumes'));
      const containers: Container[] = [];
      for (const c of pod.spec.containers) {
        const program = programForImage(c.image, this.opts.bins);
        if (!program)
          throw Object.assign(
            new MissingReferenceError(`image ${c.image} is not in the pod runner's image table`),
            { reason: 'ErrImagePull' },
          );
        const env = resolveEnv(withIP, c.env, c.envFrom, sources);
        const argv = containerArgv(
          program,
          c.command?.map((s) => expandReferences(s, env)),
          c.args?.map((s) => expandReferences(s, env)),
        );
        const script = mountScript({
          volumeDirs,
          mounts: c.volumeMounts ?? [],
          scratch: path.join(p.dir, 'overlay', c.name),
          exists: (x) => fs.existsSync(x),
          isFile: (x) => fs.existsSync(x) && fs.statSync(x).isFile(),
        });
        containers.push(
          new Container({
            name: c.name,
            image: c.image,
            imageKind: program.kind,
            argv,
            env,
            mountScript: script,
            hostname: pod.metadata.name,
            logDir: path.join(p.dir, 'logs', c.name),
            probeTarget: {
              podIP: net.ip,
              netns: net.netns,
              ports: new Map((c.ports ?? []).filter((x) => x.name).map((x) => [x.name!, x.containerPort])),
            },
            readinessProbe: c.readinessProbe,
            livenessProbe: c.livenessProbe,
            restartPolicy: pod.spec.restartPolicy ?? 'Always',
            onChange: () => this.writeStatus(p),
            log: (l) => this.log(`${p.key}: ${l}`),
          }),
        );
      }
      if (p.gone || p.terminating) return;
      p.waiting = undefined;
      p.containers = containers;
      for (const c of containers) c.start();
    } catch (err) {
      if (p.gone || p.terminating) return;
      const reason =
        (err as { reason?: string }).reason ??
        (err instanceof MissingReferenceError ? 'CreateContainerConfigError' : 'ContainerCreating');
      p.waiting = { reason, message: (err as Error).message };
      this.log(`${p.key}: cannot start yet (${reason}): ${(err as Error).message}`);
      this.writeStatus(p);
      p.retry = setTimeout(() => void this.startPod(p), 2_000);
    }
  }

  /** Writes the pod's status, coalescing changes that arrive while a write is in flight. */
  private writeStatus(p: RunningPod): void {
    p.dirty = true;
    if (p.writing) return;
    p.writing = true;
    void (async () => {
      while (p.dirty && !p.gone) {
        p.dirty = false;
        const containers = p.containers.length
          ? p.containers.map((c) => ({
              name: c.cfg.name,
              image: c.cfg.image,
              imageKind: c.cfg.imageKind,
              ready: c.ready,
              started: c.started,
              restartCount: c.restartCount,
              state: c.state,
              lastState: c.lastState,
            }))
          : p.pod.spec.containers.map((c) => ({
              name: c.name,
              image: c.image,
              imageKind: 'unknown',
              ready: false,
              started: false,
              restartCount: 0,
              state: { waiting: p.waiting ?? { reason: 'ContainerCreating' } },
              lastState: {},
            }));
        const status = podStatus({
          podIP: p.podIP,
          hostIP: BRIDGE_ADDRESS,
          startTime: p.startTime,
          containers,
          transitions: p.transitions,
          now: now(),
        });
        try {
          await this.opts.admin.request(
            'PATCH',
            `/api/v1/namespaces/${p.pod.metadata.namespace}/pods/${p.pod.metadata.name}/status`,
            {
              contentType: 'application/merge-patch+json',
              body: { metadata: { uid: p.pod.metadata.uid }, status },
            },
          );
        } catch (err) {
          if (err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 409)) break;
          this.log(`${p.key}: status write failed: ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 500));
          p.dirty = true;
        }
      }
      p.writing = false;
    })();
  }

  /**
   * Graceful deletion, as the kubelet does it: each container's preStop hook runs first, then the
   * container gets SIGTERM and, when the grace period (hook included) is over, SIGKILL; then the
   * pod object is deleted.
   */
  private async terminate(p: RunningPod): Promise<void> {
    if (p.retry) clearTimeout(p.retry);
    const grace = p.pod.metadata.deletionGracePeriodSeconds ?? p.pod.spec.terminationGracePeriodSeconds ?? 30;
    this.log(`${p.key}: terminating (grace ${grace}s)`);
    const deadline = Date.now() + grace * 1000;
    await Promise.all(
      p.containers.map(async (c) => {
        const preStop = p.pod.spec.containers.find((s) => s.name === c.cfg.name)?.lifecycle?.preStop;
        if (preStop && c.started) {
          const ok = await runLifecycleHandler(preStop, c.cfg.probeTarget, deadline - Date.now());
          this.log(`${p.key}: ${c.cfg.name} preStop ${ok ? 'done' : 'failed'}`);
        }
        await c.stop(Math.max(0, deadline - Date.now()));
      }),
    );
    await this.networks.remove(p.pod.metadata.uid);
    await this.deletePod(p.pod);
    p.gone = true;
    this.pods.delete(p.pod.metadata.uid);
  }

  private async deletePod(pod: Pod): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    try {
      await this.opts.admin.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } },
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 409)))
        this.log(`${namespace}/${name}: delete failed: ${(err as Error).message}`);
    }
  }

  /** The pod object is gone from the API server (force-deleted): stop its processes at once. */
  private vanished(p: RunningPod): void {
    if (p.gone) return;
    p.gone = true;
    if (p.retry) clearTimeout(p.retry);
    this.pods.delete(p.pod.metadata.uid);
    void Promise.all(p.containers.map((c) => c.stop(0))).then(() => this.networks.remove(p.pod.metadata.uid));
  }

  /** Stops the watch and every pod's processes (SIGKILL after 5 s). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.watching?.catch(() => undefined);
    const all = [...this.pods.values()];
    this.pods.clear();
    await Promise.all(
      all.map(async (p) => {
        p.gone = true;
        if (p.retry) clearTimeout(p.retry);
        await Promise.all(p.containers.map((c) => c.stop(5_000)));
        await this.networks.remove(p.pod.metadata.uid);
      }),
    );
  }
}
