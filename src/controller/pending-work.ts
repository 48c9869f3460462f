/**
 * What the store changes since the controller's last build require (a full build, or the inputs of
 * a fast path: docs/architecture.md §8), accumulated between builds.
 */
import type { KubeObject } from '../store/objects';

/** What the changes since the last build require. */
export interface PendingWork {
  full: boolean;
  /** `namespace/service` of changed EndpointSlices. */
  endpointServices: Set<string>;
  /** Referenced Secrets updated in place: store key → the object as the last build saw it. */
  secrets: Map<string, KubeObject>;
  /** HTTPRoutes/GRPCRoutes updated in place: store key → the object as the last build saw it. */
  routes: Map<string, KubeObject>;
  /** ListenerSets and HTTPRoutes/GRPCRoutes created: store key → the object created. */
  added: Map<string, KubeObject>;
}

/** True when anything is pending. */
export function hasWork(w: PendingWork): boolean {
  return w.full || w.endpointServices.size + w.secrets.size + w.routes.size + w.added.size > 0;
}

/** Nothing pending but, with `full`, a full build. */
export function emptyWork(full: boolean): PendingWork {
  return { full, endpointServices: new Set(), secrets: new Map(), routes: new Map(), added: new Map() };
}
