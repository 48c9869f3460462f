/**
 * Decides when a changed file may be read: only once it has been left alone for the settle
 * time, so a file rewritten in several writes is not applied half-written. A file counts as
 * left alone when its modification time is that old, or, should its clock disagree with ours
 * (a network filesystem, a time in the future), when its size and times have stayed the same
 * for that long by our own clock. Writing files atomically (write elsewhere, then rename) is
 * still the way to never be read half-written: a writer that pauses longer than the settle
 * time between writes cannot be told from one that finished.
 */
export class SettleGate {
  /** File → the stat fingerprint first seen for its current change, and when (monotonic ms). */
  private readonly observed = new Map<string, { fingerprint: string; since: number }>();

  constructor(
    private readonly settleMs: number,
    private readonly clock: { wall: () => number; monotonic: () => number } = {
      wall: () => Date.now(),
      monotonic: () => performance.now(),
    },
  ) {}

  /**
   * Whether a file that changed (to `fingerprint`, modified at `mtimeMs`) may be read now;
   * otherwise how long to wait before asking again.
   */
  check(
    file: string,
    fingerprint: string,
    mtimeMs: number,
  ): { ready: true } | { ready: false; waitMs: number } {
    if (this.settleMs <= 0) return { ready: true };
    const age = this.clock.wall() - mtimeMs;
    const now = this.clock.monotonic();
    let seen = this.observed.get(file);
    if (!seen || seen.fingerprint !== fingerprint) {
      seen = { fingerprint, since: now };
      this.observed.set(file, seen);
    }
    const quiet = Math.max(age, now - seen.since);
    if (quiet >= this.settleMs) {
      this.observed.delete(file);
      return { ready: true };
    }
    return { ready: false, waitMs: Math.ceil(this.settleMs - quiet) };
  }

  /** Forgets files that are no longer being waited for. */
  retain(known: (file: string) => boolean): void {
    for (const file of this.observed.keys()) if (!known(file)) this.observed.delete(file);
  }
}
