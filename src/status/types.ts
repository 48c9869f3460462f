/**
 * Defines the shape of the statuses a build outputs.
 *
 * Status is computed in the same pass as the fleet model. Both the Kubernetes status writer and
 * GET /status in file mode consume exactly this shape.
 */
import { objectKey } from '../store/objects';

/** Describes one status condition, as metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/** Holds the status subresource Convoy computed for one object, with the object's identity. */
export interface ObjectStatus {
  apiVersion: string;
  kind: string;
  metadata: { namespace?: string; name: string; generation?: number };
  /** The full status subresource as Kubernetes would store it. */
  status: Record<string, unknown>;
}

/** Returns the store key (objectKey) of the object a status belongs to. */
export function statusKey(s: ObjectStatus): string {
  return objectKey(s.kind, s.metadata.namespace ?? '', s.metadata.name);
}

/**
 * Receives the statuses Convoy publishes: the Kubernetes status writer (leader only), the in-memory
 * status view served at GET /status in file mode, the fleet page, the build thread's channel.
 *
 * A full build hands over its full set (`publish`); a fast path hands over only what changed
 * (`publishChanges`), so the cost of a single-object change does not grow with the world
 * (docs/architecture.md §8).
 */
export interface StatusSink {
  /** Replaces everything: the full set, in order; an object missing from it is not Convoy's any more. */
  publish(statuses: ObjectStatus[]): void;
  /**
   * Applies changes since the last publication: `changed` are statuses that differ from the last
   * ones published for their objects or are new (new objects in order, after every known one), and
   * `removed` the keys (statusKey) of objects that are no longer Convoy's (never also in `changed`).
   */
  publishChanges(changed: ObjectStatus[], removed: string[]): void;
}
