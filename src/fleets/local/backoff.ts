/**
 * When to restart a managed Envoy that died (docs/operations.md §14): exponential backoff from
 * `initialMs`, doubling per consecutive failure up to `maxMs`. An Envoy that stayed up for
 * `stableMs` is healthy again, so its next death starts the sequence over instead of waiting
 * the longest delay earned by failures long ago.
 */

export interface BackoffPolicy {
  /** Delay before the first restart. */
  initialMs: number;
  /** Longest delay between restarts. */
  maxMs: number;
  /** Uptime after which an exit no longer counts as a consecutive failure. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 30_000, stableMs: 60_000 };

/**
 * Milliseconds to wait before restart number `failures` (1 = the first restart after a death):
 * initialMs · 2^(failures−1), capped at maxMs. Computed by doubling with an early stop, so a
 * large count never overflows into Infinity or NaN.
 */
export function restartDelayMs(failures: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  let delay = policy.initialMs;
  for (let i = 1; i < failures && delay < policy.maxMs; i++) delay *= 2;
  return Math.min(delay, policy.maxMs);
}

/**
 * The consecutive-failure count after an exit, given the count before it and how long the
 * process ran: a process that ran at least stableMs starts a new sequence (1), any other adds one.
 */
export function failuresAfterExit(
  previous: number,
  uptimeMs: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  return uptimeMs >= policy.stableMs ? 1 : previous + 1;
}
