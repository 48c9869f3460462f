import { spawn, spawnSync, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient, loadKubeConfig } from '../../src/kubernetes/client';

/**
 * A real Kubernetes control plane for e2e tests: etcd and kube-apiserver built from Go modules
 * (e2e/cluster/build-binaries.sh), on loopback, with token authentication and RBAC on. Two
 * identities: an admin (system:masters) for the tests, and Convoy's ServiceAccount identity,
 * which only has the permissions granted by deploy/01-rbac.yaml, so Convoy's RBAC is exercised
 * for real. Gateway API v1.6.1 standard CRDs are installed and Established before start()
 * resolves. The API server can be stopped and started again (same port, same etcd, same
 * serving certificate) for outage tests.
 */

export const REPO_ROOT = findRepoRoot(__dirname);

function findRepoRoot(start: string): string {
  for (let dir = start; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'e2e', 'cluster', 'build-binaries.sh'))) return dir;
  }
  throw new Error(`cannot find the repository root above ${start}`);
}

export interface K8sBinaries {
  binDir: string;
  crdDir: string;
}

/** Convoy's in-cluster identity, as the API server sees the ServiceAccount of deploy/. */
export const CONVOY_USER = 'system:serviceaccount:convoy-system:convoy';
export const CONVOY_GROUPS = [
  'system:serviceaccounts',
  'system:serviceaccounts:convoy-system',
  'system:authenticated',
];

/**
 * Finds kube-apiserver, etcd and kubectl: $CONVOY_K8S_BIN_DIR (either the cache directory with
 * bin/ and crds/, or a bin directory; CRDs then come from $CONVOY_CRD_DIR or ../crds), else
 * whatever build-binaries.sh prints on its last line (a no-op when the cache is warm).
 */
export function findBinaries(): K8sBinaries {
  let root = process.env.CONVOY_K8S_BIN_DIR;
  if (root) {
    if (fs.existsSync(path.join(root, 'bin', 'kube-apiserver'))) {
      return {
        binDir: path.join(root, 'bin'),
        crdDir: process.env.CONVOY_CRD_DIR ?? path.join(root, 'crds'),
      };
    }
    if (fs.existsSync(path.join(root, 'kube-apiserver'))) {
      return { binDir: root, crdDir: process.env.CONVOY_CRD_DIR ?? path.join(root, '..', 'crds') };
    }
    throw new Error(`CONVOY_K8S_BIN_DIR=${root} holds neither bin/kube-apiserver nor kube-apiserver`);
  }
  const script = path.join(REPO_ROOT, 'e2e', 'cluster', 'build-binaries.sh');
  const res = spawnSync('bash', [script, 'all'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (res.status !== 0) throw new Error(`build-binaries.sh failed with status ${res.status}`);
  root = res.stdout.trim().split('\n').pop() ?? '';
  return { binDir: path.join(root, 'bin'), crdDir: path.join(root, 'crds') };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface LocalClusterOptions {
  /** Install the Gateway API CRDs (default true). */
  crds?: boolean;
  /** Apply deploy/00-namespace.yaml and deploy/01-rbac.yaml (default true). */
  rbac?: boolean;
  /** Keep the temp directory after teardown (also: CONVOY_KEEP_CLUSTER=1). */
  keep?: boolean;
  /**
   * Which Gateway API channel's CRDs to install (default standard): experimental fields such as
   * HTTPRoute retry are pruned by the API server under the standard CRDs.
   */
  crdChannel?: 'standard' | 'experimental';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LocalCluster {
  readonly dir: string;
  readonly adminToken = randomBytes(24).toString('hex');
  readonly convoyToken = randomBytes(24).toString('hex');
  readonly adminKubeconfig: string;
  readonly convoyKubeconfig: string;
  /** Admin client for test fixtures. */
  admin!: KubeClient;
  /** https://127.0.0.1:<port> */
  server = '';
  etcdUrl = '';
  /** Wall time of the last API server start until /readyz, in ms. */
  apiserverStartMs = 0;
  private etcd?: ChildProcess;
  private apiserver?: ChildProcess;
  private apiserverPort = 0;
  private readonly children = new Set<ChildProcess>();
  private readonly onExit = () => {
    for (const c of this.children) c.kill('SIGKILL');
  };

  private constructor(
    readonly bins: K8sBinaries,
    private readonly options: LocalClusterOptions,
  ) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-k8s-'));
    this.adminKubeconfig = path.join(this.dir, 'admin.kubeconfig');
    this.convoyKubeconfig = path.join(this.dir, 'convoy.kubeconfig');
    process.once('exit', this.onExit);
  }

  static async start(options: LocalClusterOptions = {}): Promise<LocalCluster> {
    const cluster = new LocalCluster(findBinaries(), options);
    try {
      await cluster.boot();
      return cluster;
    } catch (err) {
      const tail = cluster.logTail();
      await cluster.teardown();
      throw new Error(`local cluster failed to start: ${(err as Error).message}\n${tail}`, { cause: err });
    }
  }

  private async boot(): Promise<void> {
    await this.startEtcd();
    this.writeAuthFiles();
    this.apiserverPort = await freePort();
    this.server = `https://127.0.0.1:${this.apiserverPort}`;
    await this.startApiServer();
    this.writeKubeconfigs();
    this.admin = new KubeClient(loadKubeConfig(this.adminKubeconfig));
    if (this.options.crds !== false) await this.installCrds();
    if (this.options.rbac !== false) {
      await this.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', '00-namespace.yaml')]);
      await this.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', '01-rbac.yaml')]);
    }
  }

  private spawnLogged(name: string, bin: string, args: string[]): ChildProcess {
    const log = fs.openSync(path.join(this.dir, `${name}.log`), 'a');
    const child = spawn(bin, args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  private async startEtcd(): Promise<void> {
    const clientPort = await freePort();
    const peerPort = await freePort();
    this.etcdUrl = `http://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    this.etcd = this.spawnLogged('etcd', path.join(this.bins.binDir, 'etcd'), [
      `--data-dir=${path.join(this.dir, 'etcd')}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    await this.waitFor('etcd', this.etcd, 30_000, async () => {
      const res = await fetch(`${this.etcdUrl}/health`).catch(() => undefined);
      return res?.ok === true && ((await res.json()) as { health?: string }).health === 'true';
    });
  }

  private writeAuthFiles(): void {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fs.writeFileSync(path.join(this.dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    fs.writeFileSync(path.join(this.dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    fs.writeFileSync(
      path.join(this.dir, 'tokens.csv'),
      [
        `${this.adminToken},admin,admin-uid,"system:masters"`,
        `${this.convoyToken},${CONVOY_USER},convoy-uid,"${CONVOY_GROUPS.join(',')}"`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    fs.mkdirSync(path.join(this.dir, 'certs'));
  }

  /** Starts (or restarts) kube-apiserver on the same port, etcd and serving certificate. */
  async startApiServer(): Promise<void> {
    if (this.apiserver) throw new Error('kube-apiserver is already running');
    const started = Date.now();
    const d = this.dir;
    this.apiserver = this.spawnLogged('kube-apiserver', path.join(this.bins.binDir, 'kube-apiserver'), [
      `--etcd-servers=${this.etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.apiserverPort}`,
      '--advertise-address=127.0.0.1',
      `--cert-dir=${path.join(d, 'certs')}`,
      `--token-auth-file=${path.join(d, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-signing-key-file=${path.join(d, 'sa.key')}`,
      `--service-account-key-file=${path.join(d, 'sa.pub')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--disable-admission-plugins=ServiceAccount',
      '--endpoint-reconciler-type=none',
      '--allow-privileged=true',
      '--v=1',
    ]);
    const ca = () => fs.readFileSync(path.join(d, 'certs', 'apiserver.crt'));
    await this.waitFor('kube-apiserver', this.apiserver, 90_000, async () => {
      if (!fs.existsSync(path.join(d, 'certs', 'apiserver.crt'))) return false;
      return (await this.probe('/readyz', ca())) === 200;
    });
    this.apiserverStartMs = Date.now() - started;
  }

  /** Stops kube-apiserver (SIGTERM, then SIGKILL after 10 s); etcd keeps running. */
  async stopApiServer(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.apiserver;
    this.apiserver = undefined;
    if (proc) await stopProcess(proc, signal);
  }

  get apiserverRunning(): boolean {
    return this.apiserver !== undefined;
  }

  private probe(pathname: string, ca: Buffer): Promise<number> {
    return new Promise((resolve) => {
      const req = https.get(
        `${this.server}${pathname}`,
        { ca, headers: { authorization: `Bearer ${this.adminToken}` }, timeout: 2000 },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve(0));
      req.on('timeout', () => req.destroy());
    });
  }

  private async waitFor(name: string, proc: ChildProcess, timeoutMs: number, check: () => Promise<boolean>) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`${name} exited (${proc.exitCode ?? proc.signalCode}) during startup`);
      }
      if (await check().catch(() => false)) return;
      await sleep(100);
    }
    throw new Error(`${name} not ready after ${timeoutMs} ms`);
  }

  private writeKubeconfigs(): void {
    const ca = path.join(this.dir, 'certs', 'apiserver.crt');
    const make = (user: string, token: string) =>
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: local',
        '  cluster:',
        `    server: ${this.server}`,
        `    certificate-authority: ${ca}`,
        'users:',
        `- name: ${user}`,
        '  user:',
        `    token: ${token}`,
        'contexts:',
        '- name: local',
        '  context:',
        '    cluster: local',
        `    user: ${user}`,
        'current-context: local',
        '',
      ].join('\n');
    fs.writeFileSync(this.adminKubeconfig, make('admin', this.adminToken), { mode: 0o600 });
    fs.writeFileSync(this.convoyKubeconfig, make('convoy', this.convoyToken), { mode: 0o600 });
  }

  /**
   * Applies every file of the Gateway API standard channel (CRDs plus the safe-upgrades
   * ValidatingAdmissionPolicy and its binding) server-side, since the HTTPRoute CRD is too big
   * for client-side apply's annotation, then waits until every CRD is Established.
   */
  async installCrds(): Promise<void> {
    const dir =
      this.options.crdChannel === 'experimental'
        ? path.join(path.dirname(this.bins.crdDir), 'crds-experimental')
        : this.bins.crdDir;
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => path.join(dir, f));
    if (files.length === 0) throw new Error(`no CRDs in ${dir} (run e2e/cluster/build-binaries.sh crds)`);
    await this.kubectlOk([
      'apply',
      '--server-side',
      '--field-manager=convoy-e2e',
      ...files.flatMap((f) => ['-f', f]),
    ]);
    await this.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  }

  kubectl(args: string[], options: { input?: string; kubeconfig?: string } = {}): Promise<ExecResult> {
    return new Promise((resolve) => {
      const child = execFile(
        path.join(this.bins.binDir, 'kubectl'),
        [`--kubeconfig=${options.kubeconfig ?? this.adminKubeconfig}`, ...args],
        { maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : 1
            : 0;
          resolve({ code, stdout, stderr });
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  async kubectlOk(args: string[], options: { input?: string; kubeconfig?: string } = {}): Promise<string> {
    const res = await this.kubectl(args, options);
    if (res.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr || res.stdout}`);
    return res.stdout;
  }

  /** The last lines of each component log, for failure messages. */
  /** Process ids of the running etcd and API server (benchmarks read their CPU time from /proc). */
  get pids(): { etcd?: number; apiserver?: number } {
    return { etcd: this.etcd?.pid, apiserver: this.apiserver?.pid };
  }

  logTail(lines = 30): string {
    const out: string[] = [];
    for (const name of ['etcd', 'kube-apiserver']) {
      const file = path.join(this.dir, `${name}.log`);
      if (!fs.existsSync(file)) continue;
      const text = fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      out.push(`--- ${name}.log (last ${lines} lines) ---\n${text}`);
    }
    return out.join('\n');
  }

  async teardown(): Promise<void> {
    this.admin?.close();
    await this.stopApiServer();
    if (this.etcd) await stopProcess(this.etcd, 'SIGTERM');
    this.etcd = undefined;
    process.off('exit', this.onExit);
    if (!this.options.keep && !process.env.CONVOY_KEEP_CLUSTER)
      fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

async function stopProcess(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
