/**
 * Computes exponential backoff delays with jitter: the n-th delay is uniform in [c/2, c], where
 * c = base·2ⁿ capped at max.
 *
 * Half the range stays deterministic so a fleet of replicas neither retries in lockstep nor
 * collapses to near-zero delays.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    readonly baseMs = 500,
    readonly maxMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** Returns the next delay in milliseconds and counts the attempt. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** Starts over from the base delay (after a success). */
  reset(): void {
    this.attempt = 0;
  }

  /** Returns the number of delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }
}

/** Resolves after ms, or early (without rejecting) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
