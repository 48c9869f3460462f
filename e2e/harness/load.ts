import * as http from 'node:http';
import { request } from './http';
import type { HttpRequest, HttpResult } from './http';
import { sleep, waitFor } from './util';

/**
 * A small concurrent HTTP load generator for fault tests. Each worker loops: one request, a short
 * pause, the next. Half of the workers keep one connection alive (a pooled agent with a single
 * socket), the other half open a new connection per request, because a fault can break either
 * kind: a restart that closes connections hurts the first, a listener that stops accepting hurts
 * the second. Every answer is classified by `check`; a wrong answer, a refused or reset
 * connection and a timeout are failures. Nothing is retried: a fault test asserts there were none.
 */

export interface LoadOptions {
  /** The request every worker sends (plain HTTP). */
  request: Omit<HttpRequest, 'agent' | 'tls'>;
  /** Why an answer is wrong, or undefined when it is right. Default: anything but status 200. */
  check?: (r: HttpResult) => string | undefined;
  /** Concurrent workers, half keep-alive and half new connections. Default 4. */
  workers?: number;
  /** Pause between two requests of one worker, to keep the CPU cost modest. Default 20 ms. */
  pauseMs?: number;
  /**
   * Count a refused connection (nothing listens on the port) apart instead of as a failure: for
   * a proxy that is expected to have no listener yet.
   */
  allowRefused?: boolean;
}

export interface LoadCounts {
  ok: number;
  failed: number;
}

export interface LoadReport extends LoadCounts {
  /** Refused connections, with allowRefused. */
  refused: number;
  keepAlive: LoadCounts;
  newConnections: LoadCounts;
  /** The first failures: worker kind, time since start and what went wrong. */
  samples: string[];
}

const SAMPLES_KEPT = 20;

const statusIs200 = (r: HttpResult): string | undefined =>
  r.status === 200 ? undefined : `status ${r.status}: ${r.body.slice(0, 120)}`;

export class LoadGenerator {
  private readonly keepAlive: LoadCounts = { ok: 0, failed: 0 };
  private readonly newConnections: LoadCounts = { ok: 0, failed: 0 };
  private readonly samples: string[] = [];
  private refusedCount = 0;
  private readonly startedAt = Date.now();
  private readonly agents: http.Agent[] = [];
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  private currentPhase = 'start';

  private constructor(private readonly opts: LoadOptions) {}

  /** Starts the workers at once; they run until stop(). */
  static start(opts: LoadOptions): LoadGenerator {
    const g = new LoadGenerator(opts);
    const workers = Math.max(2, opts.workers ?? 4);
    for (let i = 0; i < workers; i++) {
      const agent = i % 2 === 0 ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : undefined;
      if (agent) g.agents.push(agent);
      g.loops.push(g.worker(agent));
    }
    return g;
  }

  get ok(): number {
    return this.keepAlive.ok + this.newConnections.ok;
  }

  get failed(): number {
    return this.keepAlive.failed + this.newConnections.failed;
  }

  /** Refused connections (counted only with allowRefused). */
  get refused(): number {
    return this.refusedCount;
  }

  /** Names what the test is doing now; failure samples say in which phase they happened. */
  phase(name: string): void {
    this.currentPhase = name;
  }

  /**
   * Resolves once `n` more requests have succeeded on each kind of connection: proof that traffic
   * really flowed through a phase of a test, whatever the speed of the machine.
   */
  async waitForSuccesses(n: number, what: string, timeoutMs = 30_000): Promise<void> {
    const keepAlive = this.keepAlive.ok + n;
    const fresh = this.newConnections.ok + n;
    await waitFor(() => this.keepAlive.ok >= keepAlive && this.newConnections.ok >= fresh, {
      what: `${n} more successful requests per connection kind (${what})`,
      timeoutMs,
      intervalMs: 50,
      context: () => this.describe(),
    });
  }

  /** Stops the workers, waits for their last requests and closes the pooled connections. */
  async stop(): Promise<LoadReport> {
    this.stopping = true;
    await Promise.all(this.loops);
    for (const a of this.agents) a.destroy();
    return this.report();
  }

  report(): LoadReport {
    return {
      ok: this.ok,
      failed: this.failed,
      refused: this.refusedCount,
      keepAlive: { ...this.keepAlive },
      newConnections: { ...this.newConnections },
      samples: [...this.samples],
    };
  }

  /** One line for assertion messages. */
  describe(): string {
    const r = this.report();
    const first = r.samples.length > 0 ? `; first failures: ${r.samples.slice(0, 5).join(' | ')}` : '';
    const refused = this.opts.allowRefused ? `, ${r.refused} refused` : '';
    return (
      `${r.ok} ok, ${r.failed} failed${refused} (keep-alive ${r.keepAlive.ok}/${r.keepAlive.failed}, ` +
      `new connections ${r.newConnections.ok}/${r.newConnections.failed})${first}`
    );
  }

  private async worker(agent: http.Agent | undefined): Promise<void> {
    const counts = agent ? this.keepAlive : this.newConnections;
    const check = this.opts.check ?? statusIs200;
    while (!this.stopping) {
      let problem: string | undefined;
      let refused = false;
      try {
        problem = check(await request({ timeoutMs: 10_000, ...this.opts.request, agent }));
      } catch (err) {
        refused = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
        problem = (err as Error).message || String(err);
      }
      if (refused && this.opts.allowRefused) this.refusedCount++;
      else if (problem === undefined) counts.ok++;
      else {
        counts.failed++;
        if (this.samples.length < SAMPLES_KEPT) {
          const kind = agent ? 'keep-alive' : 'new connection';
          const at = `+${Date.now() - this.startedAt} ms, ${this.currentPhase}`;
          this.samples.push(`${kind} at ${at}: ${problem}`);
        }
      }
      await sleep(this.opts.pauseMs ?? 20);
    }
  }
}
