import type { ObjectStatus, StatusSink } from './types';
import { statusKey } from './types';

/**
 * Keeps the latest statuses for GET /status: file mode's status "API server". Holds them by key in
 * publication order (a change keeps an object's place, a new object goes last), so the list is the
 * one a full publication of the same statuses would give.
 */
export class StatusView implements StatusSink {
  private byKey = new Map<string, ObjectStatus>();
  /** The list, built on demand after changes. */
  private listed: ObjectStatus[] | undefined = [];

  /** `onPublish`, when given, is called with the whole list after every publication (tests). */
  constructor(private readonly onPublish?: (statuses: ObjectStatus[]) => void) {}

  /** Replaces the kept statuses with a build's full set. */
  publish(statuses: ObjectStatus[]): void {
    this.byKey = new Map(statuses.map((s) => [statusKey(s), s]));
    this.listed = this.byKey.size === statuses.length ? statuses : undefined;
    this.onPublish?.(this.list());
  }

  /** Applies a fast path's changes: changed or new statuses, and the keys gone. */
  publishChanges(changed: ObjectStatus[], removed: string[]): void {
    for (const key of removed) this.byKey.delete(key);
    for (const s of changed) this.byKey.set(statusKey(s), s);
    this.listed = undefined;
    this.onPublish?.(this.list());
  }

  /** Returns the statuses as last published. */
  list(): ObjectStatus[] {
    this.listed ??= [...this.byKey.values()];
    return this.listed;
  }
}
