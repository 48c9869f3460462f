import type { ObjectStatus, StatusSink } from './types';

/** Keeps the latest statuses for GET /status: file mode's status "API server". */
export class StatusView implements StatusSink {
  private current: ObjectStatus[] = [];

  /** Replaces the kept statuses with a build's full set. */
  publish(statuses: ObjectStatus[]): void {
    this.current = statuses;
  }

  /** Returns the statuses of the last build. */
  list(): ObjectStatus[] {
    return this.current;
  }
}
