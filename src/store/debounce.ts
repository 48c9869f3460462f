/**
 * Coalesces bursts of store changes into one build: waits `quietMs` after the last change,
 * but never longer than `maxDelayMs` after the first change of a burst, so a steady trickle
 * of events (e.g. endpoints churning) cannot postpone a build forever.
 */
export class Debouncer {
  private quietTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fire: () => void,
    private readonly quietMs: number,
    private readonly maxDelayMs: number,
  ) {}

  /** Notes a change: restarts the quiet timer, and starts the max-delay timer if none runs. */
  trigger(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.flush(), this.quietMs);
    if (!this.maxTimer) this.maxTimer = setTimeout(() => this.flush(), this.maxDelayMs);
  }

  /** Cancels both timers and fires now. */
  flush(): void {
    this.cancel();
    this.fire();
  }

  /** Cancels both timers without firing. */
  cancel(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    if (this.maxTimer) clearTimeout(this.maxTimer);
    this.quietTimer = undefined;
    this.maxTimer = undefined;
  }

  /** Returns whether a fire is scheduled. */
  pending(): boolean {
    return this.quietTimer !== undefined;
  }
}
