import type { ListenerLayout } from '../../src/envoy/translate/sni-dispatch';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import {
  ConvoyProcess,
  EnvoyProcess,
  createCa,
  freePorts,
  issueCert,
  startEchoBackend,
  startTlsEchoBackend,
  tempDir,
  waitFor,
  type Backend,
  type CaFiles,
  type CertFiles,
} from '../harness';

/**
 * A Gateway API "world" for end-to-end tests in file mode: a directory of YAML files that a
 * real `convoy serve --from-dir` watches, echo backends on loopback, a test CA, and a real Envoy
 * bootstrapped by Convoy's own bootstrap generator for one Gateway.
 */

export type Variant = 'delta' | 'sotw';

export const GATEWAY = { namespace: 'default', name: 'edge' };
export const CONTROLLER = 'convoy.dev/gateway-controller';

/** The Gateway API group version of the objects e2e worlds write. */
export const GATEWAY_API = 'gateway.networking.k8s.io/v1';

/**
 * Returns the documents most worlds start from: Convoy's GatewayClass `convoy` and the Gateway
 * GATEWAY with `listeners`; with `listenerSets` it accepts ListenerSets from its own namespace
 * (`allowedListeners`), with `labels` it carries those labels.
 */
export function gatewayDocs(
  listeners: object[],
  options: { listenerSets?: boolean; labels?: Record<string, string> } = {},
): object[] {
  return [
    {
      apiVersion: GATEWAY_API,
      kind: 'GatewayClass',
      metadata: { name: 'convoy' },
      spec: { controllerName: CONTROLLER },
    },
    {
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: {
        name: GATEWAY.name,
        namespace: GATEWAY.namespace,
        ...(options.labels ? { labels: options.labels } : {}),
      },
      spec: {
        gatewayClassName: 'convoy',
        ...(options.listenerSets ? { allowedListeners: { namespaces: { from: 'Same' } } } : {}),
        listeners,
      },
    },
  ];
}

/**
 * Returns an HTTPS listener named `name` for `hostname` on `port`, terminating TLS with the Secret
 * `certificate` and admitting routes from its own namespace.
 */
export function httpsListener(name: string, hostname: string, port: number, certificate: string): object {
  return {
    name,
    protocol: 'HTTPS',
    port,
    hostname,
    tls: { mode: 'Terminate', certificateRefs: [{ name: certificate }] },
    allowedRoutes: { namespaces: { from: 'Same' } },
  };
}

export interface ObjectStatusEntry {
  apiVersion: string;
  kind: string;
  metadata: { namespace?: string; name: string; generation?: number };
  status: Record<string, unknown>;
}

export interface ConditionEntry {
  type: string;
  status: string;
  reason: string;
  message?: string;
  observedGeneration?: number;
}

export class World {
  readonly dir: string;
  readonly backends = new Map<string, Backend>();
  readonly certs = new Map<string, CertFiles>();
  private ca!: CaFiles;
  convoy!: ConvoyProcess;
  envoy!: EnvoyProcess;
  private readonly cleanup: () => void;

  private constructor(
    readonly variant: Variant,
    readonly ports: { http: number; https: number; tls: number },
  ) {
    const t = tempDir(`world-${variant}`);
    this.dir = t.dir;
    this.cleanup = t.cleanup;
    fs.mkdirSync(path.join(this.dir, 'objects'), { recursive: true });
  }

  static async create(variant: Variant): Promise<World> {
    const [http, https, tls] = await freePorts(3);
    return new World(variant, { http: http!, https: https!, tls: tls! });
  }

  get objectsDir(): string {
    return path.join(this.dir, 'objects');
  }

  /** Writes (or replaces) one YAML file of the world with the given documents. */
  write(file: string, docs: object[]): void {
    const text = docs.map((d) => stringify(d)).join('---\n');
    const target = path.join(this.objectsDir, file);
    // Write-then-rename, as editors and kubectl-like tools do, so the watcher never sees half a file.
    fs.writeFileSync(target + '.tmp', text);
    fs.renameSync(target + '.tmp', target);
  }

  /**
   * Writes raw text (e.g. broken YAML) to a file of the world, also by write-then-rename: a
   * rescan that caught the file truncated but not yet written would see it empty and delete
   * what it served, which on a busy machine happens often enough to break tests.
   */
  writeRaw(file: string, text: string): void {
    const target = path.join(this.objectsDir, file);
    fs.writeFileSync(target + '.tmp', text);
    fs.renameSync(target + '.tmp', target);
  }

  remove(file: string): void {
    fs.rmSync(path.join(this.objectsDir, file), { force: true });
  }

  async addBackend(name: string): Promise<Backend> {
    const b = await startEchoBackend(name);
    this.backends.set(name, b);
    return b;
  }

  async addTlsBackend(name: string, hostname: string): Promise<Backend> {
    const cert = this.cert(hostname);
    const b = await startTlsEchoBackend(name, { cert: cert.cert, key: cert.key });
    this.backends.set(name, b);
    return b;
  }

  /** A certificate for `hostname` signed by the world's CA (cached). */
  cert(hostname: string): CertFiles {
    let c = this.certs.get(hostname);
    if (!c) {
      if (!this.ca) this.ca = createCa(path.join(this.dir, 'pki'));
      c = issueCert(this.ca, { name: hostname.replace('*', 'wildcard'), dnsNames: [hostname] });
      this.certs.set(hostname, c);
    }
    return c;
  }

  /** Service + EndpointSlice documents pointing at a backend on loopback. */
  serviceDocs(name: string, opts: { appProtocol?: string } = {}): object[] {
    const b = this.backends.get(name);
    if (!b) throw new Error(`no backend ${name}`);
    return [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { ports: [{ name: 'main', port: 80, targetPort: b.port, appProtocol: opts.appProtocol }] },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'main', port: b.port }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
    ];
  }

  tlsSecretDoc(name: string, hostname: string): object {
    const c = this.cert(hostname);
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'default' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(c.cert).toString('base64'),
        'tls.key': Buffer.from(c.key).toString('base64'),
      },
    };
  }

  /** Starts `convoy serve --from-dir` on the world's objects, with `extraArgs` after. */
  /** The --listener-layout Convoy was started with, which the Envoy bootstrap must know. */
  private listenerLayout: ListenerLayout | undefined;

  async startConvoy(extraArgs: string[] = []): Promise<void> {
    const layout = extraArgs[extraArgs.indexOf('--listener-layout') + 1];
    this.listenerLayout = layout === 'sni-dispatch' || layout === 'auto' ? layout : undefined;
    this.convoy = await ConvoyProcess.start({
      name: `convoy-${this.variant}`,
      args: ['--from-dir', this.objectsDir, '--envoy-bind-address', '127.0.0.1', ...extraArgs],
      workDir: path.join(this.dir, 'convoy'),
    });
  }

  async startEnvoy(): Promise<void> {
    const file = path.join(this.dir, `envoy-${this.variant}.yaml`);
    await this.convoy.writeEnvoyBootstrap(file, {
      gateway: `${GATEWAY.namespace}/${GATEWAY.name}`,
      nodeId: `e2e-${this.variant}`,
      sotw: this.variant === 'sotw',
      adminAddress: '127.0.0.1:0',
      ...(this.listenerLayout ? { listenerLayout: this.listenerLayout } : {}),
    });
    this.envoy = await EnvoyProcess.start({ configPath: file, name: `envoy-${this.variant}`, drainTimeS: 5 });
  }

  async statuses(): Promise<ObjectStatusEntry[]> {
    return this.convoy.getJson<ObjectStatusEntry[]>('/status');
  }

  async statusOf(kind: string, name: string, namespace = 'default'): Promise<ObjectStatusEntry | undefined> {
    return (await this.statuses()).find(
      (s) => s.kind === kind && s.metadata.name === name && (s.metadata.namespace ?? '') === namespace,
    );
  }

  /** Waits until a predicate over the status of one object holds; returns that status. */
  async waitStatus(
    kind: string,
    name: string,
    predicate: (s: ObjectStatusEntry) => boolean,
    what: string,
  ): Promise<ObjectStatusEntry> {
    let last: ObjectStatusEntry | undefined;
    return waitFor(
      async () => {
        last = await this.statusOf(kind, name);
        return last && predicate(last) ? last : undefined;
      },
      { what, timeoutMs: 20_000, context: () => `last status: ${JSON.stringify(last, null, 1)}` },
    );
  }

  /**
   * Waits until Convoy has nothing left to send to this world's Envoy and every response was
   * answered: the Envoy runs the latest configuration Convoy built. Statuses are published after
   * their build's snapshot, so once a status shows a change, this waits for Envoy to apply it.
   */
  async waitEnvoySynced(what: string): Promise<void> {
    const nodeId = `e2e-${this.variant}`;
    let last: unknown;
    await waitFor(
      async () => {
        const debug = await this.convoy.getJson<{
          streams: { nodeId: string; types: Record<string, { state: string }> }[];
        }>('/debug/xds');
        const stream = debug.streams.find((s) => s.nodeId === nodeId);
        last = stream;
        return stream !== undefined && Object.values(stream.types).every((t) => t.state !== 'stale');
      },
      { what, timeoutMs: 30_000, context: () => `last stream state: ${JSON.stringify(last, null, 1)}` },
    );
  }

  async dispose(): Promise<void> {
    await this.envoy?.stop();
    await this.convoy?.dispose();
    for (const b of this.backends.values()) await b.close();
    this.cleanup();
  }
}

export function condition(conditions: unknown, type: string): ConditionEntry | undefined {
  return (conditions as ConditionEntry[] | undefined)?.find((c) => c.type === type);
}

export function listenerStatus(
  s: ObjectStatusEntry,
  name: string,
): { name: string; attachedRoutes: number; conditions: ConditionEntry[] } | undefined {
  const listeners = s.status.listeners as {
    name: string;
    attachedRoutes: number;
    conditions: ConditionEntry[];
  }[];
  return listeners?.find((l) => l.name === name);
}
