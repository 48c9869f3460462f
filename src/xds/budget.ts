/** Something that can be resumed when send budget frees up. */
export interface BudgetWaiter {
  pump(): void;
}

/** Bytes handed to grpc-js in one event-loop turn before the next response waits for the next turn. */
export const DEFAULT_TURN_BYTES = 4 * 1024 * 1024;

/**
 * A response this small is not held back by the turn, and may exceed the byte limit by at most
 * the overdraft in all: its copy costs
 * microseconds, and in a fan-out of a large Listener the turn is always full, so a stream that
 * asks after the fan-out began (its Envoy read the Listener, its routes and secret follow) would
 * otherwise wait behind every other stream's copy (bench/README.md "Kubernetes mode (session 18)").
 */
export const SMALL_RESPONSE_BYTES = 64 * 1024;

/**
 * How far small responses may take the in-flight bytes past the limit: while slow readers hold
 * the whole budget, a small response would otherwise queue behind every large one as well.
 */
export const SMALL_OVERDRAFT_BYTES = 1024 * 1024;

/**
 * A server-wide cap on response bytes handed to grpc-js but not yet flushed to the socket, and
 * on the bytes handed over in one event-loop turn (docs/xds.md §11, §11.1).
 *
 * grpc-js copies every outgoing message into its own frame buffer, so a push of a large response
 * to many streams would otherwise hold N copies in memory at once. Streams that do not fit wait
 * in FIFO order and are resumed as writes complete. A single message larger than the whole budget
 * is still allowed when nothing else is in flight, so progress is always possible.
 *
 * That copy is also the main-thread cost of a push: a 6 MB Listener to 200 streams is 1.2 GB of
 * copying. So once a turn has handed over `turnBytes`, further responses wait for the next turn
 * (one `setImmediate`), in the same FIFO order: a turn copies at most `turnBytes` plus one
 * response, the event loop serves timers and I/O in between, and the streams first in line
 * receive their bytes after one turn instead of after the whole fan-out's copying.
 */
export class SendBudget {
  private inflight = 0;
  private readonly waiters = new Set<BudgetWaiter>();
  /** Bytes acquired since the current turn began, and whether its end is scheduled. */
  private turn = 0;
  private turnEndScheduled = false;
  /** Set when tryAcquire refused: a resumed waiter that asked and was refused keeps its place. */
  private refused = false;

  constructor(
    readonly limitBytes: number,
    readonly turnBytes = DEFAULT_TURN_BYTES,
    /** Responses up to this size pass a full turn (at most a sixteenth of a turn). */
    readonly smallBytes = Math.min(SMALL_RESPONSE_BYTES, Math.floor(turnBytes / 16)),
    /** How far small responses may exceed the limit (at most a thirty-second of it). */
    readonly overdraftBytes = Math.min(SMALL_OVERDRAFT_BYTES, Math.floor(limitBytes / 32)),
  ) {}

  tryAcquire(bytes: number, waiter: BudgetWaiter): boolean {
    const small = bytes <= this.smallBytes;
    const turnFits = this.turn === 0 || this.turn + bytes <= this.turnBytes || small;
    const limit = this.limitBytes + (small ? this.overdraftBytes : 0);
    if (turnFits && (this.inflight === 0 || this.inflight + bytes <= limit)) {
      this.inflight += bytes;
      this.noteTurn(bytes);
      this.waiters.delete(waiter);
      return true;
    }
    // A waiter already queued keeps its place (Set insertion order).
    this.waiters.add(waiter);
    this.refused = true;
    return false;
  }

  release(bytes: number): void {
    this.inflight -= bytes;
    if (this.inflight < 0) this.inflight = 0;
    this.wake();
  }

  forget(waiter: BudgetWaiter): void {
    this.waiters.delete(waiter);
  }

  get inflightBytes(): number {
    return this.inflight;
  }

  get waiting(): number {
    return this.waiters.size;
  }

  /** Counts bytes against the current turn and schedules the turn's end (the next check phase). */
  private noteTurn(bytes: number): void {
    this.turn += bytes;
    if (this.turnEndScheduled) return;
    this.turnEndScheduled = true;
    setImmediate(() => {
      this.turnEndScheduled = false;
      this.turn = 0;
      this.wake();
    });
  }

  /**
   * Resumes waiters in order while bytes and the turn allow. A waiter that is refused again stays
   * at the head; one that asked for nothing (closed, nothing left to send, waiting for grpc-js's
   * drain) leaves the queue.
   */
  private wake(): void {
    for (const w of this.waiters) {
      if (this.inflight >= this.limitBytes || this.turn >= this.turnBytes) return;
      this.refused = false;
      w.pump();
      if (!this.waiters.has(w)) continue;
      if (this.refused) return;
      this.waiters.delete(w);
    }
  }
}
