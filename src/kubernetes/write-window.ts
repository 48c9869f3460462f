/**
 * Decides how many status writes may be in flight, from how late the API server's watch streams
 * deliver the echo of Convoy's own writes (docs/gateway-api.md §16, "Watch lag").
 *
 * Why: every status write is an event on the watch stream of its kind, and the API server delivers
 * those events (and a user's spec edit behind them) only as fast as its watch cache keeps up. On a
 * busy API server 32 writes in flight put the HTTPRoute stream seconds behind (bench/README.md
 * "Kubernetes mode, session 16"), so a route edited with kubectl reached Convoy seconds late. The
 * echo of a write is the one event whose write time Convoy knows, so its delay measures the lag
 * any edit of that kind would meet; the window shrinks while it is high and grows back while it is
 * low (additive increase, multiplicative decrease, as TCP does with delay).
 */

export interface WriteWindowOptions {
  /** Writes in flight at most, and the largest window (default 32). */
  max: number;
  /** Writes in flight at least: status keeps moving however late the echoes are (default 1). */
  min?: number;
  /**
   * Window at the start (default max): a writer whose echoes are never fed in (no informer
   * wired to it) keeps its full concurrency.
   */
  initial?: number;
  /** An echo later than this, in ms, shrinks the window (default 100). */
  targetLagMs?: number;
}

/** A write waiting for its echo: when its answer came and at which window generation it started. */
export interface WriteStart {
  generation: number;
}

/** An additive-increase, multiplicative-decrease window over the watch lag of status writes. */
export class WriteWindow {
  private size: number;
  private readonly min: number;
  private readonly max: number;
  private readonly targetLagMs: number;
  /** Bumped on every decrease: echoes of writes started before it do not shrink the window again. */
  private generationValue = 0;
  /** Fraction of a slot earned by on-time echoes since the last whole one. */
  private credit = 0;

  constructor(o: WriteWindowOptions) {
    this.max = Math.max(1, Math.floor(o.max));
    this.min = Math.min(this.max, Math.max(1, Math.floor(o.min ?? 1)));
    this.targetLagMs = o.targetLagMs ?? 100;
    const initial = o.initial ?? this.max;
    this.size = Math.min(this.max, Math.max(this.min, Math.floor(initial)));
  }

  /** Returns how many writes may be in flight now. */
  get limit(): number {
    return this.size;
  }

  /** Returns the current generation (how many times the window shrank); a write records it at its start. */
  get generation(): number {
    return this.generationValue;
  }

  /**
   * Takes one echo's lag (ms from the write's answer to the watch event) of a write that started
   * at `startedGeneration`. A late echo halves the window once per generation: the writes already
   * in flight when it shrank were sent at the old size and say nothing about the new one. An
   * on-time echo adds 1 / window, so a window's worth of on-time echoes grows it by one.
   */
  observe(lagMs: number, startedGeneration: number): void {
    if (!Number.isFinite(lagMs)) return;
    if (lagMs > this.targetLagMs) {
      if (startedGeneration < this.generationValue) return;
      this.size = Math.max(this.min, Math.floor(this.size / 2));
      this.credit = 0;
      this.generationValue++;
      return;
    }
    if (this.size >= this.max) return;
    this.credit += 1 / this.size;
    if (this.credit >= 1) {
      this.credit -= 1;
      this.size++;
    }
  }
}
