import type { ObjectStatus, StatusSink } from './types';

/** File mode's status "API server": keeps the latest statuses for GET /status. */
export class StatusView implements StatusSink {
  private current: ObjectStatus[] = [];

  publish(statuses: ObjectStatus[]): void {
    this.current = statuses;
  }

  list(): ObjectStatus[] {
    return this.current;
  }
}
