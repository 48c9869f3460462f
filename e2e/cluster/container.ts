import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { captureOutput } from './container-log';
import { ProbeState, runProbe } from './probes';
import type { Probe, ProbeTarget } from './probes';
import { shellQuote } from './pod-volumes';

/**
 * One container of the pod runner: a local process started in the pod's network namespace
 * (`ip netns exec`) and in a private mount and UTS namespace (`unshare`), where a shell prologue
 * mounts the pod's volumes and a private /dev/shm (Envoys' shared memory must not meet) and sets
 * the hostname to the pod name before exec'ing the program.
 * It is restarted with exponential backoff per the pod's restartPolicy, probed (readiness gates
 * `ready`; a failing liveness probe restarts it), logs to one timestamped file per run
 * (container-log.ts), and stops gracefully:
 * SIGTERM, the grace period, then SIGKILL of its process group.
 */

export interface ContainerState {
  running?: { startedAt: string };
  waiting?: { reason: string; message?: string };
  terminated?: { exitCode: number; reason: string; signal?: number; startedAt?: string; finishedAt: string };
}

export interface ContainerConfig {
  name: string;
  image: string;
  imageKind: string;
  argv: string[];
  env: ReadonlyMap<string, string>;
  /** Shell lines that mount the volumes (pod-volumes.ts mountScript). */
  mountScript: string;
  hostname: string;
  logDir: string;
  probeTarget: ProbeTarget;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  restartPolicy: 'Always' | 'OnFailure' | 'Never';
  /** Called after any change of state, readiness or restart count. */
  onChange: () => void;
  log: (line: string) => void;
}

const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Restart backoff: the kubelet's doubling, from 1 s and capped at 20 s so tests recover quickly. */
const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 20_000;
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export class Container {
  state: ContainerState = { waiting: { reason: 'ContainerCreating' } };
  lastState: ContainerState = {};
  restartCount = 0;
  ready = false;
  started = false;
  private proc?: ChildProcess;
  private stopping = false;
  private backoffMs = BACKOFF_FIRST_MS;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readiness?: ProbeState;
  private liveness?: ProbeState;

  constructor(readonly cfg: ContainerConfig) {}

  /** The log file of the current (or last) run. */
  logFile(previous = false): string {
    return path.join(this.cfg.logDir, `${Math.max(0, this.restartCount - (previous ? 1 : 0))}.log`);
  }

  /** The process id of the running program, if any. */
  get pid(): number | undefined {
    return this.proc && this.proc.exitCode === null && this.proc.signalCode === null
      ? this.proc.pid
      : undefined;
  }

  start(): void {
    if (this.stopping) return;
    fs.mkdirSync(this.cfg.logDir, { recursive: true });
    const script = `set -e\nmount -t tmpfs -o mode=1777 shm /dev/shm\n${this.cfg.mountScript}\nhostname ${shellQuote(this.cfg.hostname)}\nexec "$@"`;
    const env: Record<string, string> = { PATH: BASE_PATH, HOSTNAME: this.cfg.hostname, HOME: '/root' };
    for (const [k, v] of this.cfg.env) env[k] = v;
    const proc = spawn(
      'ip',
      [
        'netns',
        'exec',
        this.cfg.probeTarget.netns,
        'unshare',
        '--mount',
        '--uts',
        '--propagation',
        'private',
        '--',
        '/bin/sh',
        '-c',
        script,
        'sh',
        ...this.cfg.argv,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env, detached: true },
    );
    captureOutput(this.logFile(), proc.stdout!, proc.stderr!);
    this.proc = proc;
    const startedAt = now();
    this.state = { running: { startedAt } };
    this.started = true;
    this.readiness = this.cfg.readinessProbe ? new ProbeState(this.cfg.readinessProbe, false) : undefined;
    this.liveness = this.cfg.livenessProbe ? new ProbeState(this.cfg.livenessProbe, true) : undefined;
    this.ready = !this.readiness;
    this.cfg.log(
      `container ${this.cfg.name} (${this.cfg.imageKind}) started, pid ${proc.pid}: ${this.cfg.argv.join(' ')}`,
    );
    this.cfg.onChange();
    this.schedule(
      this.cfg.readinessProbe,
      () => this.readiness,
      proc,
      (changed) => {
        if (changed) {
          this.ready = this.readiness!.passing;
          this.cfg.onChange();
        }
      },
    );
    this.schedule(
      this.cfg.livenessProbe,
      () => this.liveness,
      proc,
      (changed) => {
        if (changed && !this.liveness!.passing) {
          this.cfg.log(`container ${this.cfg.name}: liveness probe failed, restarting`);
          this.killGroup(proc, 'SIGTERM');
        }
      },
    );
    proc.once('exit', (code, signal) => this.exited(proc, startedAt, code, signal));
  }

  /** Runs a probe every periodSeconds after initialDelaySeconds while `proc` lives. */
  private schedule(
    probe: Probe | undefined,
    state: () => ProbeState | undefined,
    proc: ChildProcess,
    after: (changed: boolean) => void,
  ): void {
    if (!probe) return;
    const tick = async () => {
      if (this.proc !== proc || proc.exitCode !== null || proc.signalCode !== null || this.stopping) return;
      const ok = await runProbe(probe, this.cfg.probeTarget);
      const s = state();
      if (this.proc !== proc || !s) return;
      after(s.record(ok));
      this.timer(tick, (probe.periodSeconds ?? 10) * 1000);
    };
    this.timer(tick, (probe.initialDelaySeconds ?? 0) * 1000);
  }

  private timer(f: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      f();
    }, ms);
    this.timers.add(t);
  }

  private exited(
    proc: ChildProcess,
    startedAt: string,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    const exitCode = code ?? 128 + (signal ? os.constants.signals[signal] : 0);
    const terminated = {
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      startedAt,
      finishedAt: now(),
    };
    this.cfg.log(`container ${this.cfg.name} exited (${code ?? signal})`);
    this.ready = false;
    if (this.proc === proc) this.proc = undefined;
    const restart =
      !this.stopping &&
      (this.cfg.restartPolicy === 'Always' || (this.cfg.restartPolicy === 'OnFailure' && exitCode !== 0));
    if (!restart) {
      this.state = { terminated };
      this.cfg.onChange();
      return;
    }
    this.lastState = { terminated };
    this.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${this.backoffMs / 1000}s restarting failed container`,
      },
    };
    this.restartCount++;
    this.cfg.onChange();
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    this.timer(() => this.start(), delay);
  }

  private killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
    if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    try {
      process.kill(-proc.pid, signal);
    } catch {
      proc.kill(signal);
    }
  }

  /** Stops for good: SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((r) => proc.once('exit', () => r()));
    this.killGroup(proc, 'SIGTERM');
    const t = setTimeout(() => this.killGroup(proc, 'SIGKILL'), graceMs);
    await gone;
    clearTimeout(t);
  }
}
