/** Something that can be resumed when send budget frees up. */
export interface BudgetWaiter {
  pump(): void;
}

/**
 * A server-wide cap on response bytes handed to grpc-js but not yet flushed to the socket.
 *
 * grpc-js copies every outgoing message into its own frame buffer, so a push of a large response
 * to many streams would otherwise hold N copies in memory at once. Streams that do not fit wait
 * in FIFO order and are resumed as writes complete. A single message larger than the whole budget
 * is still allowed when nothing else is in flight, so progress is always possible.
 */
export class SendBudget {
  private inflight = 0;
  private readonly waiters = new Set<BudgetWaiter>();

  constructor(readonly limitBytes: number) {}

  tryAcquire(bytes: number, waiter: BudgetWaiter): boolean {
    if (this.inflight === 0 || this.inflight + bytes <= this.limitBytes) {
      this.inflight += bytes;
      this.waiters.delete(waiter);
      return true;
    }
    this.waiters.add(waiter);
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

  private wake(): void {
    for (const w of this.waiters) {
      if (this.inflight >= this.limitBytes) return;
      this.waiters.delete(w);
      w.pump();
      // Re-queued itself: the budget is full again, keep the order for the others.
      if (this.waiters.has(w)) return;
    }
  }
}
