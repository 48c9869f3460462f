import { spawn } from 'node:child_process';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';

/**
 * Kubelet-style container probes for the pod runner: httpGet (2xx/3xx passes), tcpSocket (a
 * connection opens) and exec (exit status 0, run in the pod's network namespace). Named ports
 * resolve through the container's ports. Each probe gets timeoutSeconds (default 1 s).
 */

export interface Probe {
  httpGet?: {
    path?: string;
    port: number | string;
    host?: string;
    scheme?: string;
    httpHeaders?: { name: string; value: string }[];
  };
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export interface ProbeTarget {
  podIP: string;
  netns: string;
  /** The container's named ports. */
  ports: ReadonlyMap<string, number>;
}

function portOf(port: number | string, target: ProbeTarget): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const p = target.ports.get(port);
  if (p === undefined) throw new Error(`probe names unknown port ${port}`);
  return p;
}

/** Runs one probe; resolves true when it passes. Never rejects. */
export async function runProbe(probe: Probe, target: ProbeTarget): Promise<boolean> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.httpGet) return await httpProbe(probe.httpGet, target, timeoutMs);
    if (probe.tcpSocket)
      return await tcpProbe(
        probe.tcpSocket.host ?? target.podIP,
        portOf(probe.tcpSocket.port, target),
        timeoutMs,
      );
    if (probe.exec) return await execProbe(probe.exec.command, target.netns, timeoutMs);
  } catch {
    return false;
  }
  return true;
}

/** A container lifecycle handler (preStop): the probe actions, without thresholds. */
export type LifecycleHandler = Pick<Probe, 'httpGet' | 'tcpSocket' | 'exec'>;

/**
 * Runs a preStop handler as the kubelet does before it sends SIGTERM, bounded by `timeoutMs`
 * (the rest of the grace period); resolves true when the handler succeeded. Never rejects.
 */
export function runLifecycleHandler(
  handler: LifecycleHandler,
  target: ProbeTarget,
  timeoutMs: number,
): Promise<boolean> {
  return runProbe({ ...handler, timeoutSeconds: Math.max(timeoutMs, 1) / 1000 }, target);
}

function httpProbe(
  get: NonNullable<Probe['httpGet']>,
  target: ProbeTarget,
  timeoutMs: number,
): Promise<boolean> {
  const secure = (get.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const headers: Record<string, string> = { 'user-agent': 'kube-probe/1.35' };
  for (const h of get.httpHeaders ?? []) headers[h.name] = h.value;
  return new Promise((resolve) => {
    const req = (secure ? https : http).request(
      {
        host: get.host ?? target.podIP,
        port: portOf(get.port, target),
        path: get.path ?? '/',
        headers,
        timeout: timeoutMs,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: timeoutMs });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

function execProbe(command: string[], netns: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('ip', ['netns', 'exec', netns, ...command], { stdio: 'ignore' });
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', () => resolve(false));
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code === 0);
    });
  });
}

/**
 * Tracks a probe's consecutive results against its thresholds (kubelet defaults: success 1,
 * failure 3) and reports the resulting state.
 */
export class ProbeState {
  private successes = 0;
  private failures = 0;
  /** Whether the probe currently counts as passing. */
  passing: boolean;

  constructor(
    private readonly probe: Probe,
    initiallyPassing: boolean,
  ) {
    this.passing = initiallyPassing;
  }

  /** Records one result; returns true when `passing` changed. */
  record(ok: boolean): boolean {
    const before = this.passing;
    if (ok) {
      this.failures = 0;
      if (++this.successes >= (this.probe.successThreshold ?? 1)) this.passing = true;
    } else {
      this.successes = 0;
      if (++this.failures >= (this.probe.failureThreshold ?? 3)) this.passing = false;
    }
    return before !== this.passing;
  }
}
