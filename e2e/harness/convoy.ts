import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from './ports';
import { loopbackRequest, sleep, tailFile, tempDir, waitFor } from './util';

/**
 * `convoy serve` as a child process: the compiled CLI next to this harness (dist-something/src/cli/main.js),
 * on free loopback ports for xDS and admin, logs captured to a file. Restartable with the same
 * ports, so Envoys reconnect to the new process.
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

  private async spawn(): Promise<void> {
    const args = [
      convoyMain(),
      'serve',
      '--xds-address',
      this.xdsAddress,
      '--admin-address',
      this.adminAddress,
      ...(this.options.allowLoopbackEndpoints === false ? [] : ['--allow-loopback-endpoints']),
      ...this.options.args,
    ];
    fs.appendFileSync(this.logFile, `### ${new Date().toISOString()} node ${args.join(' ')}\n`);
    const fd = fs.openSync(this.logFile, 'a');
    let child: childProcess.ChildProcess;
    try {
      child = childProcess.spawn(process.execPath, args, {
        stdio: ['ignore', fd, fd],
        env: { ...process.env, CONVOY_LOG_FORMAT: 'json', ...(this.options.env ?? {}) },
        uid: this.options.uid,
        gid: this.options.gid,
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
