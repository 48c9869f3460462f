import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { renderBootstrapYaml, renderXdsSdsFiles } from '../../src/envoy/bootstrap';
import type { BootstrapOptions } from '../../src/envoy/bootstrap';
import { CertificateDirectory } from '../../src/pki/certificate-directory';
import { freePort } from './ports';
import { loopbackRequest, sleep, tailFile, tempDir, waitFor } from './util';

/**
 * `convoy serve` as a child process: the compiled CLI next to this harness (dist-something/src/cli/main.js),
 * on free loopback ports for xDS and admin, logs captured to a file. Restartable with the same
 * ports, so Envoys reconnect to the new process. xDS is mTLS as by default, with the CA in the
 * process's work folder (--xds-certs-dir); writeEnvoyBootstrap gives an Envoy its certificate.
 */

/** Path of the compiled CLI that belongs to this compiled harness. */
export function convoyMain(): string {
  // <outDir>/e2e/harness/convoy.js → <outDir>/src/cli/main.js
  const main = path.resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');
  if (!fs.existsSync(main)) {
    throw new Error(`compiled CLI not found at ${main}; run "npm run build" first`);
  }
  return main;
}

/** True when every directory above `file` lets other users through (o+x). */
function reachableByOthers(file: string): boolean {
  for (let d = path.dirname(file); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return false;
    if (path.dirname(d) === d) return true;
  }
}

let readableCopy: string | undefined;

/**
 * Returns a compiled CLI that user `uid` can run: convoyMain() itself when the checkout is reachable
 * by other users, else a copy of the compiled sources, protos, web files and node_modules in a world-readable temp
 * folder (made once per test process). A `mktemp -d` clone sits below a root-only folder, where
 * an unprivileged Convoy could not even load its own code.
 */
function convoyMainFor(uid: number | undefined): string {
  const main = convoyMain();
  if (uid === undefined || uid === process.getuid?.() || reachableByOthers(main)) return main;
  if (readableCopy === undefined) {
    const outDir = path.resolve(__dirname, '..', '..');
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-readable-'));
    fs.chmodSync(root, 0o755);
    fs.cpSync(path.join(outDir, 'src'), path.join(root, 'dist', 'src'), { recursive: true });
    fs.cpSync(path.join(outDir, '..', 'node_modules'), path.join(root, 'node_modules'), { recursive: true });
    fs.cpSync(path.join(outDir, '..', 'protos'), path.join(root, 'protos'), { recursive: true });
    fs.cpSync(path.join(outDir, '..', 'web'), path.join(root, 'web'), { recursive: true });
    fs.copyFileSync(path.join(outDir, '..', 'package.json'), path.join(root, 'package.json'));
    readableCopy = root;
    process.once('exit', () => fs.rmSync(root, { recursive: true, force: true }));
  }
  return path.join(readableCopy, 'dist', 'src', 'cli', 'main.js');
}

export interface StartConvoyOptions {
  /** Extra arguments after `serve`, e.g. ['--from-dir', dir]. */
  args: string[];
  /**
   * Pass --allow-loopback-endpoints (default true): the e2e backends are echo servers on
   * 127.0.0.1, which Convoy refuses as endpoints unless told otherwise.
   */
  allowLoopbackEndpoints?: boolean;
  xdsPort?: number;
  adminPort?: number;
  /** Wait for /readyz (default true). */
  waitReady?: boolean;
  readyTimeoutMs?: number;
  env?: Record<string, string>;
  name?: string;
  workDir?: string;
  /**
   * Let `convoy serve --from-dir` start its own Envoys (default false: the test starts Envoys,
   * so --no-managed-envoy is added unless the arguments choose an Envoy binary themselves).
   */
  managedEnvoys?: boolean;
  /** Run as this user and group (e.g. an unprivileged one when the tests run as root). */
  uid?: number;
  gid?: number;
}

export class ConvoyProcess {
  private child: childProcess.ChildProcess | undefined;
  private exitInfo: string | undefined;
  private exited: Promise<void> = Promise.resolve();
  readonly logFile: string;
  private readonly cleanup: (() => void) | undefined;
  readonly workDir: string;

  private constructor(
    private readonly options: StartConvoyOptions,
    readonly xdsPort: number,
    readonly adminPort: number,
  ) {
    if (options.workDir) {
      this.workDir = options.workDir;
      fs.mkdirSync(this.workDir, { recursive: true });
    } else {
      const t = tempDir(`convoy-${options.name ?? 'serve'}`);
      this.workDir = t.dir;
      this.cleanup = t.cleanup;
    }
    this.logFile = path.join(this.workDir, `${options.name ?? 'convoy'}.log`);
  }

  static async start(options: StartConvoyOptions): Promise<ConvoyProcess> {
    const xdsPort = options.xdsPort ?? (await freePort());
    const adminPort = options.adminPort ?? (await freePort());
    const p = new ConvoyProcess(options, xdsPort, adminPort);
    await p.spawn();
    return p;
  }

  get xdsAddress(): string {
    return `127.0.0.1:${this.xdsPort}`;
  }

  get adminAddress(): string {
    return `127.0.0.1:${this.adminPort}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitInfo === undefined;
  }

  logContext(lines = 40): string {
    return `--- last ${lines} lines of ${this.logFile} ---\n${tailFile(this.logFile, lines)}`;
  }

  /** The whole log so far (JSON lines from pino). */
  log(): string {
    return fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '';
  }

  /**
   * This Convoy's xDS certificate folder, or undefined when its arguments chose other xDS
   * security (--insecure-plaintext-xds, --xds-tls-*, or their own --xds-certs-dir).
   */
  get certsDir(): string | undefined {
    const own = this.options.args.indexOf('--xds-certs-dir');
    if (own >= 0) return this.options.args[own + 1];
    if (this.options.args.some((a) => a === '--insecure-plaintext-xds' || a.startsWith('--xds-tls-')))
      return undefined;
    return path.join(this.workDir, 'xds-pki');
  }

  get plaintext(): boolean {
    return this.options.args.includes('--insecure-plaintext-xds');
  }

  /**
   * Writes an Envoy bootstrap for one Envoy of `gateway` to `file`: with a client certificate
   * for that Gateway from this Convoy's CA (and the two SDS files beside `file`), or plaintext
   * when this Convoy serves plaintext. The same output as `convoy bootstrap --certs-dir`.
   */
  async writeEnvoyBootstrap(
    file: string,
    options: Omit<BootstrapOptions, 'xdsAddress' | 'tls'> & { gateway: string },
  ): Promise<void> {
    const bootstrap: BootstrapOptions = { xdsAddress: this.xdsAddress, ...options };
    if (!this.plaintext) {
      const dir = this.certsDir;
      if (!dir)
        throw new Error('writeEnvoyBootstrap: this Convoy was started with its own --xds-tls-* files');
      const certs = new CertificateDirectory(dir);
      await certs.ensureCa({ create: true });
      const { files } = await certs.ensureGateway(options.gateway);
      const prefix = `${path.basename(file).replace(/\.ya?ml$/, '')}.`;
      bootstrap.tls = { ...files, sdsDir: path.dirname(path.resolve(file)), sdsPrefix: prefix };
      for (const [name, text] of Object.entries(renderXdsSdsFiles(bootstrap.tls)))
        fs.writeFileSync(path.join(path.dirname(path.resolve(file)), name), text);
    }
    fs.writeFileSync(file, renderBootstrapYaml(bootstrap));
  }

  /** True when this file-mode Convoy must not start Envoys (see StartConvoyOptions.managedEnvoys). */
  private unmanaged(): boolean {
    const a = this.options.args;
    const fileMode = a.some((x) => x === '--from-dir' || x.startsWith('--from-dir='));
    const chosen = a.some(
      (x) => x === '--no-managed-envoy' || x === '--envoy-bin' || x.startsWith('--envoy-bin='),
    );
    return fileMode && !chosen && this.options.managedEnvoys !== true;
  }

  private async spawn(): Promise<void> {
    const own = this.certsDir;
    const args = [
      convoyMainFor(this.options.uid),
      'serve',
      '--xds-address',
      this.xdsAddress,
      '--admin-address',
      this.adminAddress,
      ...(this.options.allowLoopbackEndpoints === false ? [] : ['--allow-loopback-endpoints']),
      ...(own && !this.options.args.includes('--xds-certs-dir') ? ['--xds-certs-dir', own] : []),
      ...(this.unmanaged() ? ['--no-managed-envoy'] : []),
      // Runs a test file with builds in a worker thread (docs/architecture.md §14).
      ...(process.env.CONVOY_E2E_BUILD_THREAD ? ['--build-thread', process.env.CONVOY_E2E_BUILD_THREAD] : []),
      ...this.options.args,
    ];
    fs.appendFileSync(this.logFile, `### ${new Date().toISOString()} node ${args.join(' ')}\n`);
    const fd = fs.openSync(this.logFile, 'a');
    let child: childProcess.ChildProcess;
    try {
      child = childProcess.spawn(process.execPath, args, {
        stdio: ['ignore', fd, fd],
        // XDG_STATE_HOME: nothing a test starts writes under the user's home.
        env: {
          ...process.env,
          CONVOY_LOG_FORMAT: 'json',
          XDG_STATE_HOME: path.join(this.workDir, 'state'),
          ...(this.options.env ?? {}),
        },
        uid: this.options.uid,
        gid: this.options.gid,
        // An unprivileged Convoy may not be able to enter the test's working directory.
        ...(this.options.uid !== undefined ? { cwd: os.tmpdir() } : {}),
      });
    } finally {
      fs.closeSync(fd);
    }
    this.child = child;
    this.exitInfo = undefined;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = `convoy exited (code ${code}, signal ${signal})`;
        resolve();
      });
      child.once('error', (err) => {
        this.exitInfo = `convoy failed to start: ${err.message}`;
        resolve();
      });
    });
    if (this.options.waitReady !== false) await this.waitReady(this.options.readyTimeoutMs);
  }

  /** GET a path on the admin server. */
  get(pathAndQuery: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
    return loopbackRequest(this.adminPort, pathAndQuery, { headers });
  }

  /** GET a JSON endpoint; throws with the body on a non-200 answer. */
  async getJson<T = unknown>(pathAndQuery: string): Promise<T> {
    const r = await this.get(pathAndQuery);
    if (r.status !== 200)
      throw new Error(`GET ${pathAndQuery} answered ${r.status}: ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body) as T;
  }

  async waitReady(timeoutMs = 30_000): Promise<void> {
    await waitFor(async () => (await this.get('/readyz')).status === 200, {
      what: 'convoy /readyz',
      timeoutMs,
      abort: () => this.exitInfo,
      context: () => this.logContext(),
    });
  }

  /** Sends a signal and waits for the exit (SIGKILL after graceMs). Resolves with the exit text. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<string | undefined> {
    const child = this.child;
    if (child && this.exitInfo === undefined) {
      child.kill(signal);
      const timedOut = await Promise.race([this.exited.then(() => false), sleep(graceMs).then(() => true)]);
      if (timedOut) {
        child.kill('SIGKILL');
        await this.exited;
      }
    }
    return this.exitInfo;
  }

  /** Stops (SIGTERM, or SIGKILL to simulate a crash) and starts again on the same ports. */
  async restart(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.stop(signal);
    await this.spawn();
  }

  /** Stops the process and removes its temp dir (unless KEEP_E2E_TMP). */
  async dispose(): Promise<void> {
    await this.stop();
    this.cleanup?.();
  }
}
