/**
 * What the store changes since the controller's last build require (a full build, or the inputs of
 * a fast path: docs/architecture.md §8), accumulated between builds.
 */
import type { KubeObject } from '../store/objects';

/**
 * Why a full build runs instead of a fast path: the label of convoy_full_builds_total
 * (docs/operations.md §8). Besides these, a change of a kind no fast path handles gives
 * `<kind>_changed` (lower-case kind, e.g. `gateway_changed`).
 */
export type FullBuildReason =
  /** The first build after start (or after every earlier one failed). */
  | 'startup'
  /** An input outside the store asked for it (protected ports: docs/operations.md §14). */
  | 'full_build_requested'
  /** The last full build could not index references: every change rebuilds. */
  | 'no_reference_index'
  /** The last full build failed: fast paths may not patch its models. */
  | 'previous_build_failed'
  /** A fast path threw (logged as a warning) and a full build redoes its work. */
  | 'fast_path_error'
  /** A referenced CA-bundle ConfigMap changed. */
  | 'configmap_changed'
  /** A Secret a Gateway names as its backend client certificate changed. */
  | 'client_certificate_changed'
  /**
   * A Secret listeners refer to was created or deleted, and replacing the ListenerSets that name it
   * was not shown to be all that changes (a Gateway's own listener names it, or a set's check failed).
   */
  | 'secret_created_or_deleted'
  /** A referenced certificate Secret became (or was) invalid, or changed its model's name. */
  | 'certificate_validity_changed'
  /** A Service routes (or Gateways' addresses) refer to changed. */
  | 'service_changed'
  /** An EndpointSlice with endpoints the endpoint policy refuses appeared or went. */
  | 'refused_endpoint'
  /** A route or ListenerSet changed while BackendTLSPolicies exist (their ancestors follow them). */
  | 'backend_tls_policy_present'
  /** An HTTPRoute or GRPCRoute was deleted and the route-removal fast path declined. */
  | 'route_deleted'
  /** An HTTPRoute/GRPCRoute edit may change more than its own virtual hosts and status. */
  | 'route_fast_path_precondition'
  /** An existing ListenerSet was updated and replacing it (removal, then addition) declined. */
  | 'listenerset_updated'
  /** A ListenerSet was deleted and the ListenerSet-removal fast path declined. */
  | 'listenerset_deleted'
  /** Only HTTPRoutes/GRPCRoutes were created, and attaching them may change more than they can. */
  | 'route_created_fast_path_precondition'
  /** Creations that are not exactly one ListenerSet with its own new routes. */
  | 'listenerset_fast_path_precondition'
  | `${Lowercase<string>}_changed`;

/** The reason for a full build and the object (store key) whose change caused it, if one did. */
export interface FullBuildCause {
  reason: FullBuildReason;
  object?: string;
}

/** What the changes since the last build require. */
export interface PendingWork {
  full: boolean;
  /** Why `full` is set: the first cause since the last build. */
  cause?: FullBuildCause;
  /** `namespace/service` of changed EndpointSlices. */
  endpointServices: Set<string>;
  /** Referenced Secrets updated in place: store key → the object as the last build saw it. */
  secrets: Map<string, KubeObject>;
  /** HTTPRoutes/GRPCRoutes updated in place: store key → the object as the last build saw it. */
  routes: Map<string, KubeObject>;
  /** ListenerSets and HTTPRoutes/GRPCRoutes created: store key → the object created. */
  added: Map<string, KubeObject>;
  /**
   * HTTPRoutes/GRPCRoutes and ListenerSets deleted, ListenerSets updated, referenced Secrets created
   * or deleted: store key → the object as the last build saw it (or as created), with the reason
   * its fallback counts under.
   */
  structural: Map<string, KubeObject>;
  /** The fallback reason of the first entry of `structural`. */
  structuralReason?: FullBuildReason;
}

/** True when anything is pending. */
export function hasWork(w: PendingWork): boolean {
  return (
    w.full || w.endpointServices.size + w.secrets.size + w.routes.size + w.added.size + w.structural.size > 0
  );
}

/** Nothing pending but, with `full`, a full build (whose cause is the start). */
export function emptyWork(full: boolean): PendingWork {
  return {
    full,
    ...(full ? { cause: { reason: 'startup' } } : {}),
    endpointServices: new Set(),
    secrets: new Map(),
    routes: new Map(),
    added: new Map(),
    structural: new Map(),
  };
}

/** Marks a full build as pending; the first cause since the last build is the one reported. */
export function requireFullBuild(w: PendingWork, cause: FullBuildCause): void {
  w.full = true;
  w.cause ??= cause;
}

/**
 * Returns why a fast path over `changed` (store key → object) declined: the last full build failed
 * (fast paths may not patch its models), the fast path threw, or else its own precondition `reason`.
 */
export function fallbackCause(
  reason: FullBuildReason,
  changed: Map<string, KubeObject>,
  lastBuildFailed: boolean,
  fastPathFailed: boolean,
): FullBuildCause {
  const object = firstKey(changed);
  if (lastBuildFailed) return { reason: 'previous_build_failed', object };
  if (fastPathFailed) return { reason: 'fast_path_error', object };
  return { reason, object };
}

/**
 * Records a structural change (PendingWork.structural): `object` is the version the last build saw,
 * kept when the key is already pending, so a later step compares with what the state holds.
 */
export function addStructural(
  w: PendingWork,
  key: string,
  object: KubeObject,
  reason: FullBuildReason,
): void {
  if (!w.structural.has(key)) w.structural.set(key, object);
  w.structuralReason ??= reason;
}

/** Returns the first key of a map (the change a log line names), if any. */
export function firstKey(m: Map<string, unknown>): string | undefined {
  for (const k of m.keys()) return k;
  return undefined;
}
