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

  trigger(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.flush(), this.quietMs);
    if (!this.maxTimer) this.maxTimer = setTimeout(() => this.flush(), this.maxDelayMs);
  }

  flush(): void {
    this.cancel();
    this.fire();
  }

  cancel(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    if (this.maxTimer) clearTimeout(this.maxTimer);
    this.quietTimer = undefined;
    this.maxTimer = undefined;
  }

  pending(): boolean {
    return this.quietTimer !== undefined;
  }
}
