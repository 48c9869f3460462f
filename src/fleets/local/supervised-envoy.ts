import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import type { Logger } from '../../observability/logger';
import { DEFAULT_BACKOFF, failuresAfterExit, restartDelayMs } from './backoff';
import type { BackoffPolicy } from './backoff';
import type { LocalEnvoySpec } from './desired';
import { freeLoopbackPort, postAdmin } from './envoy-admin';
import { envoyArgs, envoyFiles } from './envoy-command';
import type { EnvoyCommandOptions } from './envoy-command';
import { endStaleEnvoy } from './stale-envoy';

/**
 * One managed Envoy child process (docs/operations.md §14): started from its folder, restarted
 * with exponential backoff whenever it exits on its own, drained and stopped on request. Envoy
 * runs in its own process group so a Ctrl-C at a terminal reaches Convoy only, and Convoy drains
 * it instead of it dying mid-request. Its stdout and stderr go to envoy.log in its folder.
 */

export interface SupervisedEnvoyOptions {
  spec: LocalEnvoySpec;
  /** The Envoy binary. */
  binary: string;
  command: Omit<EnvoyCommandOptions, 'dir'>;
  /** Writes the bootstrap (admin listener on `adminPort`) and certificate files; run before every start. */
  prepare: (adminPort: number) => Promise<void>;
  logger: Logger;
  backoff?: BackoffPolicy;
  /** Called each time a dead Envoy is restarted (for the restart counter). */
  onRestart?: () => void;
}

/** How long a stop waits for Envoy to exit after SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 10_000;
/** envoy.log is moved to envoy.log.1 at a start when it has grown past this. */
const MAX_LOG_BYTES = 16 * 1024 * 1024;

export class SupervisedEnvoy {
  private child: childProcess.ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private startedAt = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private currentAdminPort: number | undefined;
  private readonly files;
  private readonly log: Logger;

  /** What the next start runs with (configure changes it). */
  private command: Omit<EnvoyCommandOptions, 'dir'>;

  constructor(private readonly o: SupervisedEnvoyOptions) {
    this.command = o.command;
    this.files = envoyFiles(o.spec.dir);
    this.log = o.logger.child({ component: 'local-envoy', gateway: o.spec.fleet });
  }

  /** PID of the running Envoy, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The loopback port of the running (or starting) Envoy's admin listener. */
  adminPort(): number | undefined {
    return this.currentAdminPort;
  }

  /**
   * Takes new settings: a log level applies at once (the admin listener's /logging), everything
   * else at the next start, so a settings change never restarts a serving Envoy.
   */
  configure(command: Omit<EnvoyCommandOptions, 'dir'>): void {
    const before = this.command;
    this.command = command;
    const port = this.currentAdminPort;
    if (command.logLevel === before.logLevel || port === undefined || !this.child) return;
    void postAdmin(port, `/logging?level=${encodeURIComponent(command.logLevel)}`).then((status) =>
      this.log.info({ logLevel: command.logLevel, applied: status === 200 }, 'envoy: log level changed'),
    );
  }

  /** Starts Envoy (after ending one a killed Convoy left behind); failures are retried with backoff. */
  async start(): Promise<void> {
    const stale = await endStaleEnvoy(this.files.pid, this.files.bootstrap);
    if (stale !== undefined)
      this.log.warn({ pid: stale }, 'envoy: stopped an Envoy left by an earlier Convoy');
    await this.launch();
  }

  private async launch(): Promise<void> {
    this.timer = undefined;
    if (this.stopping) return;
    try {
      // Chosen here rather than by Envoy so Convoy knows it before Envoy listens: it is a port
      // no route may send traffic to (docs/security.md §7).
      this.currentAdminPort = await freeLoopbackPort();
      await this.o.prepare(this.currentAdminPort);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'envoy: cannot write its bootstrap');
      this.scheduleRestart(0);
      return;
    }
    if (this.stopping) return;
    fs.rmSync(this.files.adminAddress, { force: true });
    rotateLog(this.files.log);
    const fd = fs.openSync(this.files.log, 'a', 0o600);
    let child: childProcess.ChildProcess;
    try {
      child = childProcess.spawn(this.o.binary, envoyArgs({ dir: this.o.spec.dir, ...this.command }), {
        stdio: ['ignore', fd, fd],
        cwd: this.o.spec.dir,
        detached: true,
      });
    } finally {
      fs.closeSync(fd);
    }
    this.child = child;
    this.startedAt = Date.now();
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.log.error({ err: err.message, binary: this.o.binary }, 'envoy: cannot start');
        if (this.child === child) this.onExit(child, null, null);
        resolve();
      });
      child.once('exit', (code, signal) => {
        if (this.child === child) this.onExit(child, code, signal);
        resolve();
      });
    });
    if (child.pid !== undefined) {
      fs.writeFileSync(this.files.pid, `${child.pid}\n`, { mode: 0o600 });
      this.log.info({ pid: child.pid, log: this.files.log }, 'envoy: started');
    }
  }

  private onExit(child: childProcess.ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    this.child = undefined;
    this.currentAdminPort = undefined;
    fs.rmSync(this.files.pid, { force: true });
    if (this.stopping) return;
    this.scheduleRestart(Date.now() - this.startedAt, { pid: child.pid, code, signal });
  }

  private scheduleRestart(uptimeMs: number, exit?: object): void {
    const policy = this.o.backoff ?? DEFAULT_BACKOFF;
    this.failures = failuresAfterExit(this.failures, uptimeMs, policy);
    const delayMs = restartDelayMs(this.failures, policy);
    this.log.warn(
      { ...exit, uptimeMs, restartInMs: delayMs, failures: this.failures, logTail: tail(this.files.log) },
      'envoy: exited; restarting',
    );
    this.o.onRestart?.();
    this.timer = setTimeout(() => void this.launch(), delayMs);
  }

  /**
   * Drains and stops Envoy: fails its health check, starts a graceful drain of every listener
   * (new connections are still served while existing ones are told to close), waits `drainMs`
   * or until Envoy exits, then SIGTERM, and SIGKILL if it is still there TERM_GRACE_MS later.
   * No restart happens after this.
   */
  async stop(drainMs: number): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const port = this.adminPort();
    if (port !== undefined && drainMs > 0) {
      await postAdmin(port, '/healthcheck/fail');
      const drained = await postAdmin(port, '/drain_listeners?graceful');
      this.log.info({ pid: child.pid, drainMs, drained: drained === 200 }, 'envoy: draining');
      await Promise.race([this.exited, delay(drainMs)]);
    }
    if (await this.signalAndWait(child, 'SIGTERM', TERM_GRACE_MS)) return;
    this.log.warn({ pid: child.pid }, 'envoy: still running after SIGTERM; sending SIGKILL');
    await this.signalAndWait(child, 'SIGKILL', TERM_GRACE_MS);
  }

  /** Sends `signal` and resolves true when the process has exited within `waitMs`. */
  private async signalAndWait(
    child: childProcess.ChildProcess,
    signal: NodeJS.Signals,
    waitMs: number,
  ): Promise<boolean> {
    if (child.exitCode !== null || child.signalCode !== null) return true;
    child.kill(signal);
    await Promise.race([this.exited, delay(waitMs)]);
    const gone = child.exitCode !== null || child.signalCode !== null;
    if (gone)
      this.log.info({ pid: child.pid, code: child.exitCode, signal: child.signalCode }, 'envoy: stopped');
    return gone;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function rotateLog(file: string): void {
  try {
    if (fs.statSync(file).size > MAX_LOG_BYTES) fs.renameSync(file, `${file}.1`);
  } catch {
    // No log yet.
  }
}

/** The last lines of Envoy's log, for the message that reports its death. */
function tail(file: string, lines = 5, maxBytes = 4096): string[] {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, maxBytes));
      fs.readSync(fd, buf, 0, buf.length, size - buf.length);
      return buf.toString('utf8').split('\n').filter(Boolean).slice(-lines);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  }
}
