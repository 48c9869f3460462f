/**
 * Status is an output of the build, computed in the same pass as the DAG. Both the Kubernetes
 * status writer and GET /status in file mode consume exactly this shape.
 */

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface ObjectStatus {
  apiVersion: string;
  kind: string;
  metadata: { namespace?: string; name: string; generation?: number };
  /** The full status subresource as Kubernetes would store it. */
  status: Record<string, unknown>;
}

/**
 * Where a build's statuses go: the Kubernetes status writer (leader only) or the in-memory
 * status view served at GET /status in file mode. Called after every build with the full set.
 */
export interface StatusSink {
  publish(statuses: ObjectStatus[]): void;
}
