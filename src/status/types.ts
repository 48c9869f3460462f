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
 * Receives a build's statuses: the Kubernetes status writer (leader only) or the in-memory status
 * view served at GET /status in file mode.
 *
 * Called after every build with the full set.
 */
export interface StatusSink {
  publish(statuses: ObjectStatus[]): void;
}
